package openconfig

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/yangval"
)

// L2Overhead is what an OpenConfig interface MTU adds to the IP MTU the
// intent carries: openconfig-interfaces describes config/mtu as the
// frame size without FCS ("1514 bytes on an Ethernet interface"), so the
// Ethernet header (14 bytes). IP MTU 9000 renders mtu 9014. Render and
// Read both use it; a port whose link carries 802.1Q tags adds 4 bytes
// per tag (FrameMTU).
const L2Overhead = 14

// FrameMTU is the interface MTU for a port's IP MTU: the Ethernet header
// and 4 bytes per VLAN tag its link carries.
func FrameMTU(p intent.Port) int { return p.MTU + L2Overhead + 4*p.VLANTags }

// Object names fabctl owns on an OpenConfig device.
const (
	ClassifierIPv4  = "fabctl-dscp-ipv4"
	ClassifierIPv6  = "fabctl-dscp-ipv6"
	SchedulerPolicy = "fabctl"
)

// QueueName is the queue of traffic class tc (queue-id tc). Queues are
// platform objects: fabctl updates them and never deletes one.
func QueueName(tc int) string { return "Q" + strconv.Itoa(tc) }

func fgName(tc int) string  { return "fabctl-tc" + strconv.Itoa(tc) }
func ecnName(tc int) string { return "fabctl-tc" + strconv.Itoa(tc) + "-ecn" }

func keyed(list, key, val string) string {
	return yangval.PathString([]yangval.PathElem{{Name: list, Keys: map[string]string{key: val}}})
}

// The top-level nodes, module-qualified: OpenConfig devices commonly
// carry ietf-interfaces too, where an unqualified /interfaces is
// ambiguous.
const (
	QoSRoot        = "/openconfig-qos:qos"
	InterfacesRoot = "/openconfig-interfaces:interfaces"
)

func queuePath(tc int) string { return QoSRoot + "/queues" + keyed("queue", "name", QueueName(tc)) }
func fgPath(tc int) string {
	return QoSRoot + "/forwarding-groups" + keyed("forwarding-group", "name", fgName(tc))
}
func ecnPath(tc int) string {
	return QoSRoot + "/queue-management-profiles" + keyed("queue-management-profile", "name", ecnName(tc))
}
func classifierPath(name string) string {
	return QoSRoot + "/classifiers" + keyed("classifier", "name", name)
}
func schedPath() string {
	return QoSRoot + "/scheduler-policies" + keyed("scheduler-policy", "name", SchedulerPolicy)
}
func qosIfPath(port string) string {
	return QoSRoot + "/interfaces" + keyed("interface", "interface-id", port)
}
func ifPath(port string) string { return InterfacesRoot + keyed("interface", "name", port) }

// Platform is the OpenConfig model knowledge gnmicore.Core drives.
type Platform struct{}

var _ gnmicore.Platform = Platform{}

// Name is "openconfig".
func (Platform) Name() string { return Name }

// Model is the QoS module the device must advertise.
func (Platform) Model() string { return "openconfig-qos" }

// ReadPaths: the QoS tree and the interfaces.
func (Platform) ReadPaths() []string { return []string{QoSRoot, InterfacesRoot} }

type obj = map[string]any

// classifies reports whether the switch classifies by DSCP.
func classifies(sw *intent.Switch) bool {
	return sw.Trust == spec.TrustDSCP && sw.Transport != spec.InfiniBand
}

// usedTCs are the traffic classes with a forwarding group and a queue:
// those the DSCP table maps to and those the intent defines.
func usedTCs(sw *intent.Switch) []int {
	set := map[int]bool{}
	for _, tc := range sw.TCs {
		set[tc.TC] = true
	}
	if classifies(sw) {
		for _, tc := range sw.DSCPToTC {
			set[tc] = true
		}
	}
	out := make([]int, 0, len(set))
	for tc := range set {
		out = append(out, tc)
	}
	sort.Ints(out)
	return out
}

// probability is the whole percent OpenConfig's max-drop-probability-percent
// holds (percentage, 0..100): the spec's rounded (7.5 is 8); Desired
// refuses one that rounds outside 1..100.
func probability(p float64) int { return int(math.Round(p)) }

// Desired renders the intent into OpenConfig objects
// (openconfig/public release/models/qos, interfaces/openconfig-interfaces,
// interfaces/openconfig-if-ethernet).
func (Platform) Desired(sw *intent.Switch) ([]gnmicore.Object, error) {
	var out []gnmicore.Object
	add := func(path string, owned bool, v any) {
		out = append(out, gnmicore.Object{Path: path, Owned: owned, Val: v})
	}
	for _, tc := range sw.TCs {
		if e := tc.ECN; e != nil && (probability(e.Probability) < 1 || probability(e.Probability) > 100) {
			// openconfig-qos-mem-mgmt: max-drop-probability-percent is a
			// whole percentage; a probability that rounds to 0 would mark
			// nothing
			return nil, fmt.Errorf("traffic class %d: ECN probability %v rounds to %d: OpenConfig's max-drop-probability-percent is a whole percent 1..100", tc.TC, e.Probability, probability(e.Probability))
		}
	}
	for _, tc := range usedTCs(sw) {
		if tc < 0 || tc > 255 {
			return nil, fmt.Errorf("traffic class %d: OpenConfig queue-id is 0..255", tc)
		}
		q := QueueName(tc)
		add(queuePath(tc), false, obj{"name": q, "config": obj{"name": q, "queue-id": tc}})
		add(fgPath(tc), true, obj{"name": fgName(tc), "config": obj{"name": fgName(tc), "output-queue": q}})
	}
	if classifies(sw) {
		byTC := map[int][]any{}
		for d, tc := range sw.DSCPToTC {
			byTC[tc] = append(byTC[tc], d)
		}
		for _, c := range []struct{ name, typ, cond string }{
			{ClassifierIPv4, "IPV4", "ipv4"}, {ClassifierIPv6, "IPV6", "ipv6"},
		} {
			var terms []any
			for _, tc := range usedTCs(sw) {
				if len(byTC[tc]) == 0 {
					continue
				}
				id := "tc" + strconv.Itoa(tc)
				terms = append(terms, obj{"id": id, "config": obj{"id": id},
					"conditions": obj{c.cond: obj{"config": obj{"dscp-set": byTC[tc]}}},
					"actions":    obj{"config": obj{"target-group": fgName(tc)}}})
			}
			add(classifierPath(c.name), true, obj{"name": c.name, "config": obj{"name": c.name, "type": c.typ},
				"terms": obj{"term": terms}})
		}
	}
	var strict, weighted []any
	for _, tc := range sw.TCs {
		q := QueueName(tc.TC)
		in := obj{"id": q, "config": obj{"id": q, "input-type": "QUEUE", "queue": q}}
		if tc.Strict {
			strict = append(strict, in)
		} else {
			in["config"].(obj)["weight"] = strconv.Itoa(tc.Bandwidth) // uint64: a JSON string in RFC 7951
			weighted = append(weighted, in)
		}
		if tc.ECN != nil {
			add(ecnPath(tc.TC), true, obj{"name": ecnName(tc.TC), "config": obj{"name": ecnName(tc.TC)},
				"wred": obj{"uniform": obj{"config": obj{
					"min-threshold":                strconv.FormatInt(int64(tc.ECN.Min), 10),
					"max-threshold":                strconv.FormatInt(int64(tc.ECN.Max), 10),
					"enable-ecn":                   true,
					"drop":                         false, // mark-only: DCQCN reacts to CE, PFC keeps it lossless
					"max-drop-probability-percent": probability(tc.ECN.Probability),
				}}}})
		}
	}
	if len(sw.TCs) > 0 {
		var scheds []any
		if len(strict) > 0 {
			scheds = append(scheds, obj{"sequence": 0, "config": obj{"sequence": 0, "priority": "STRICT"},
				"inputs": obj{"input": strict}})
		}
		if len(weighted) > 0 {
			scheds = append(scheds, obj{"sequence": 1, "config": obj{"sequence": 1}, "inputs": obj{"input": weighted}})
		}
		add(schedPath(), true, obj{"name": SchedulerPolicy, "config": obj{"name": SchedulerPolicy},
			"schedulers": obj{"scheduler": scheds}})
	}
	for _, p := range sw.Ports {
		// An MTU beyond the uint16 leaf is left to the models to refuse
		// (offline with render --yang-dir, online by the device).
		add(ifPath(p.Name), false, obj{"name": p.Name, "config": obj{"name": p.Name, "mtu": FrameMTU(p)},
			"openconfig-if-ethernet:ethernet": obj{"config": obj{"enable-flow-control": p.Pause}}})
		qi := obj{"interface-id": p.Name, "config": obj{"interface-id": p.Name},
			"interface-ref": obj{"config": obj{"interface": p.Name}}}
		if classifies(sw) && p.Trust == spec.TrustDSCP {
			qi["input"] = obj{"classifiers": obj{"classifier": []any{
				obj{"type": "IPV4", "config": obj{"type": "IPV4", "name": ClassifierIPv4}},
				obj{"type": "IPV6", "config": obj{"type": "IPV6", "name": ClassifierIPv6}},
			}}}
		}
		output := obj{}
		if len(sw.TCs) > 0 {
			output["scheduler-policy"] = obj{"config": obj{"name": SchedulerPolicy}}
		}
		var queues []any
		for _, tc := range sw.TCs {
			if tc.ECN != nil {
				q := QueueName(tc.TC)
				queues = append(queues, obj{"name": q, "config": obj{"name": q, "queue-management-profile": ecnName(tc.TC)}})
			}
		}
		if len(queues) > 0 {
			output["queues"] = obj{"queue": queues}
		}
		if len(output) > 0 {
			qi["output"] = output
		}
		add(qosIfPath(p.Name), true, qi)
	}
	return out, nil
}

// Factory is an OpenConfig switch with only its ports (name, type
// ethernetCsmacd, enabled), as the gNMI target creates them.
func (Platform) Factory(sw *intent.Switch) map[string]any {
	var ifs []any
	for _, p := range sw.Ports {
		ifs = append(ifs, obj{"name": p.Name, "config": obj{"name": p.Name,
			"type": "iana-if-type:ethernetCsmacd", "enabled": true}})
	}
	if len(ifs) == 0 {
		return map[string]any{}
	}
	return map[string]any{"openconfig-interfaces:interfaces": obj{"interface": ifs}}
}

// Rank: queues, forwarding groups, queue-management profiles,
// classifiers, the scheduler policy, interfaces, then the per-interface
// QoS bindings that refer to all of them.
func (Platform) Rank(path string) int {
	for i, pre := range []string{QoSRoot + "/queues/", QoSRoot + "/forwarding-groups/", QoSRoot + "/queue-management-profiles/",
		QoSRoot + "/classifiers/", QoSRoot + "/scheduler-policies/", InterfacesRoot + "/", QoSRoot + "/interfaces/"} {
		if strings.HasPrefix(path, pre) {
			return i
		}
	}
	return 100
}

// Owned: everything but queues and interfaces.
func (Platform) Owned(path string) bool {
	return !strings.HasPrefix(path, QoSRoot+"/queues/") && !strings.HasPrefix(path, InterfacesRoot+"/")
}

// portOf splits "port/<name>/<attr>" (names may hold '/').
func portOf(path string) (port, attr string, ok bool) {
	rest, ok := strings.CutPrefix(path, "port/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

func tcOf(path string) (int, bool) {
	parts := strings.Split(path, "/")
	if len(parts) < 3 || parts[0] != "tc" {
		return 0, false
	}
	n, err := strconv.Atoi(parts[1])
	return n, err == nil
}

// Affected lists the objects a changed setting is rendered into.
func (Platform) Affected(ch intent.AttrChange, sw *intent.Switch) []string {
	var out []string
	allPorts := func() {
		for _, p := range sw.Ports {
			out = append(out, qosIfPath(p.Name))
		}
	}
	tcObjects := func(v string) {
		if tc, err := strconv.Atoi(v); err == nil {
			out = append(out, queuePath(tc), fgPath(tc))
		}
	}
	switch p := ch.Path; {
	case p == "trust":
		out = append(out, classifierPath(ClassifierIPv4), classifierPath(ClassifierIPv6))
		for _, tc := range usedTCs(sw) {
			tcObjects(strconv.Itoa(tc))
		}
		allPorts()
	case strings.HasPrefix(p, "dscp/"):
		out = append(out, classifierPath(ClassifierIPv4), classifierPath(ClassifierIPv6))
		tcObjects(ch.Before)
		tcObjects(ch.After)
	case strings.HasPrefix(p, "tc/"):
		tc, ok := tcOf(p)
		if !ok {
			return nil
		}
		switch {
		case strings.HasSuffix(p, "/sched"), strings.HasSuffix(p, "/bandwidth"):
			out = append(out, queuePath(tc), fgPath(tc), schedPath())
			allPorts() // a class added or removed changes the bindings
		case strings.Contains(p, "/ecn/"):
			out = append(out, ecnPath(tc))
			allPorts()
		}
	default:
		port, attr, ok := portOf(p)
		if !ok {
			return nil
		}
		switch attr {
		case "mtu", "pause":
			out = append(out, ifPath(port))
		case "trust":
			out = append(out, qosIfPath(port))
		}
	}
	return out
}
