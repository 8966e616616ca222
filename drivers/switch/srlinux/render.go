package srlinux

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/yangval"
)

// L2Overhead is what SR Linux's port MTU adds to the IP MTU the intent
// carries: srl_nokia-interfaces describes /interface/mtu as "Port MTU in
// bytes including ethernet overhead but excluding 4-bytes FCS", so the
// 14-byte Ethernet header of an untagged routed port. IP MTU 9000
// renders mtu 9014; the SR Linux default 9232 reads back as IP MTU 9218.
// A port whose link carries 802.1Q tags adds 4 bytes per tag (FrameMTU).
const L2Overhead = 14

// Port MTU range of the platform fabctl renders for: the model's leaf is
// 1450..9500, and its description bounds the 7220 IXR-D1 to H4 (the
// IXR-D5 included) to 1500..9412 bytes ("support a maximum port MTU of
// 9412 bytes and minimum of 1500 bytes", srl_nokia-interfaces mtu).
const (
	MinPortMTU = 1500
	MaxPortMTU = 9412
)

// FrameMTU is the port MTU SR Linux takes for a port's IP MTU: the
// Ethernet header and 4 bytes per VLAN tag its link carries.
func FrameMTU(p intent.Port) int { return p.MTU + L2Overhead + 4*p.VLANTags }

// Object names fabctl owns on SR Linux.
const (
	Policy     = "fabctl"     // dscp-policy, dot1p-policy, scheduler-policy
	PFCProfile = "fabctl-pfc" // the switch's pfc-mapping-profile (its lossless classes, the watchdog)
	// BufferProfile is the buffer-allocation-profile holding the ECN
	// queues' maximum burst size (queues/queue, bound as the interface's
	// output/buffer-allocation-profile) and the PFC headroom (queues/
	// pfc-queue, bound as input/pfc-buffer-allocation-profile).
	BufferProfile = "fabctl"
	// Subinterface is the subinterface a port's classifier is attached
	// to: SR Linux classifies on subinterfaces only (srl_nokia-qos
	// input/classifiers: must string(../../interface-ref/subinterface) !=
	// "", "Attachment of classifiers, not permitted for interfaces";
	// Nokia SR Linux QoS Guide, "DSCP classifier policy configuration
	// for input traffic": "When a DSCP classifier policy is applied to a
	// subinterface ..."). A routed RoCE port's traffic is on its
	// subinterface 0.
	Subinterface = 0
)

// The maximum burst size (MBS) of an ECN queue is its WRED max-threshold.
// A queue-management-profile on a queue is refused without a
// buffer-allocation-profile giving that queue a non-zero MBS (srl_nokia-
// qos queue-management-profile must, "cannot be configured without
// setting maximum burst size"; maximum-burst-size: "Must be non-zero/
// non-default in order to add the active-queue-management"; on the 7220
// IXR-D5 a non-zero MBS replaces the chip's dynamic alpha limit with a
// static one). The models relate the two: a WRED slope's thresholds can
// be given as max-threshold-percent, "the percentage of the MBS that
// corresponds to the WRED maximum threshold", a percentage (0..100,
// srl_nokia-common), so a max-threshold lies within the MBS. The smallest
// MBS the models allow for fabctl's max-threshold is that threshold (100
// %); no Nokia source gives a larger ratio, so fabctl sets none (an
// earlier factor of 2 had no source and is gone).
// mbs is the maximum burst size of an ECN queue.
func mbs(e *intent.ECN) int64 {
	v := int64(e.Max)
	if v < 1 {
		v = 1
	}
	return v // Desired refuses a maximum above uint32
}

// Deadlock timer ranges of srl_nokia-qos (pfc-mapping-profile
// received-pfc-pause-frames/deadlock).
const (
	detectMin, detectMax   = 10 * time.Millisecond, 1500 * time.Millisecond
	recoverMin, recoverMax = 100 * time.Millisecond, 1500 * time.Millisecond
	maxReservedShare       = 104857600 // maximum-pfc-reserved-share-bytes range
)

func fc(tc int) string         { return "fc" + strconv.Itoa(tc) }
func queue(tc int) string      { return "queue-" + strconv.Itoa(tc) }
func pfcQueue(prio int) string { return "pfc" + strconv.Itoa(prio) }
func ecnName(tc int) string    { return "fabctl-tc" + strconv.Itoa(tc) + "-ecn" }

func keyed(list, key, val string) string {
	return yangval.PathString([]yangval.PathElem{{Name: list, Keys: map[string]string{key: val}}})
}

func dscpPolicyPath() string  { return "/qos/classifiers" + keyed("dscp-policy", "name", Policy) }
func dot1pPolicyPath() string { return "/qos/classifiers" + keyed("dot1p-policy", "name", Policy) }
func ecnPath(tc int) string {
	return "/qos/buffer-management" + keyed("queue-management-profile", "name", ecnName(tc))
}
func schedPath() string          { return "/qos/scheduler-policies" + keyed("scheduler-policy", "name", Policy) }
func pfcPath(name string) string { return "/qos" + keyed("pfc-mapping-profile", "name", name) }
func bufferPath() string {
	return "/qos/buffer-management" + keyed("buffer-allocation-profile", "name", BufferProfile)
}
func ifPath(port string) string { return keyed("interface", "name", port) }
func qosIfPath(port string) string {
	return "/qos/interfaces" + keyed("interface", "interface-id", port)
}

// subIfID is the QoS interface-id of a port's subinterface: SR Linux's
// own default name for it (ethernet-1/1.0; Nokia SR Linux QoS Guide, "QoS
// interface and subinterface IDs").
func subIfID(port string) string { return port + "." + strconv.Itoa(Subinterface) }

func qosSubIfPath(port string) string { return qosIfPath(subIfID(port)) }

// Platform is the SR Linux model knowledge gnmicore.Core drives.
type Platform struct{}

var _ gnmicore.Platform = Platform{}

// Name is "srlinux".
func (Platform) Name() string { return Name }

// Model is the QoS module the device must advertise.
func (Platform) Model() string { return "srl_nokia-qos" }

// ReadPaths: the QoS tree and the interfaces.
func (Platform) ReadPaths() []string { return []string{"/qos", "/interface"} }

type obj = map[string]any

func classifies(sw *intent.Switch) bool {
	return sw.Trust == spec.TrustDSCP && sw.Transport != spec.InfiniBand
}

func lossless(sw *intent.Switch) []int {
	var out []int
	for _, tc := range sw.TCs {
		if tc.Lossless {
			out = append(out, tc.TC)
		}
	}
	return out
}

func setKey(s []int) string {
	v := append([]int(nil), s...)
	sort.Ints(v)
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// profileName is the pfc-mapping-profile a port with PFC on prios (and
// the watchdog on or off) uses: the switch's own profile when they match
// it, else one named after the set.
func profileName(sw *intent.Switch, prios []int, wd bool) string {
	if setKey(prios) == setKey(lossless(sw)) && wd == sw.Watchdog.Enabled {
		return PFCProfile
	}
	n := PFCProfile + "-" + strings.ReplaceAll(setKey(prios), ",", "-")
	if !wd {
		n += "-nowd"
	}
	return n
}

func portWatchdog(sw *intent.Switch, p intent.Port) bool { return p.Watchdog && sw.Watchdog.Enabled }

// probability is the whole percent SR Linux's max-drop-probability-percent
// holds: the spec's rounded (Desired refuses one that rounds outside
// 1..100).
func probability(p float64) int { return int(math.Round(p)) }

func pfcProfile(sw *intent.Switch, name string, prios []int, wd bool) (obj, error) {
	var mapping, pause []any
	for _, p := range prios {
		// unicast-mapping pfc-queue has no enable-pfc on a 7220 IXR-D5 (it
		// needs srl_nokia-features future-0-0, which no platform reports):
		// the mapping entry itself makes the priority lossless (PFC
		// generation), with pfc-enable on the interface.
		mapping = append(mapping, obj{"pfc-queue-name": pfcQueue(p), "dot1p": []any{p}, "forwarding-class": []any{fc(p)},
			"pfc-pause-frame-priority": p})
		pause = append(pause, obj{"queue-name": queue(p), "pfc-pause-frame-priority": p, "enable-pfc": true})
	}
	dl := obj{"enable": wd}
	if wd {
		d, r := sw.Watchdog.Detect, sw.Watchdog.Restore
		if d < detectMin || d > detectMax || d%time.Millisecond != 0 {
			return nil, fmt.Errorf("pfc_watchdog detect %s: SR Linux's deadlock detection-timer takes whole milliseconds in 10ms..1500ms", d)
		}
		if r < recoverMin || r > recoverMax || r%time.Millisecond != 0 {
			return nil, fmt.Errorf("pfc_watchdog restore %s: SR Linux's deadlock recovery-timer takes whole milliseconds in 100ms..1500ms", r)
		}
		dl["detection-timer"] = d.Milliseconds()
		dl["recovery-timer"] = r.Milliseconds()
	}
	prof := obj{"name": name, "received-pfc-pause-frames": obj{"deadlock": dl}}
	if len(pause) > 0 {
		prof["received-pfc-pause-frames"].(obj)["queue"] = pause
		prof["received-traffic"] = obj{"unicast-mapping": obj{"pfc-queue": mapping}}
	}
	return prof, nil
}

// Desired renders the intent into SR Linux objects (srl_nokia-qos,
// srl_nokia-interfaces, nokia/srlinux-yang-models v25.3).
func (Platform) Desired(sw *intent.Switch) ([]gnmicore.Object, error) {
	var out []gnmicore.Object
	add := func(path string, owned bool, v any) {
		out = append(out, gnmicore.Object{Path: path, Owned: owned, Val: v})
	}
	for _, tc := range sw.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			return nil, fmt.Errorf("traffic class %d: SR Linux's system forwarding classes are fc0..fc7", tc.TC)
		}
		if e := tc.ECN; e != nil {
			// srl_nokia-qos: max-drop-probability-percent is a whole
			// percentage (the spec's rounded; one that rounds to 0 would
			// mark nothing), min/max-threshold-bytes and
			// maximum-burst-size are uint32.
			if p := probability(e.Probability); p < 1 || p > 100 {
				return nil, fmt.Errorf("traffic class %d: ECN probability %v rounds to %d: SR Linux's max-drop-probability-percent is a whole percent 1..100", tc.TC, e.Probability, p)
			}
			if int64(e.Max) > math.MaxUint32 {
				return nil, fmt.Errorf("traffic class %d: ECN maximum %d bytes: SR Linux's max-threshold-bytes and maximum-burst-size are at most %d (uint32)", tc.TC, int64(e.Max), int64(math.MaxUint32))
			}
		}
	}
	if classifies(sw) {
		var entries []any
		for d, tc := range sw.DSCPToTC {
			if tc < 0 || tc > 7 {
				return nil, fmt.Errorf("DSCP %d maps to traffic class %d: SR Linux's system forwarding classes are fc0..fc7", d, tc)
			}
			entries = append(entries, obj{"value": d, "forwarding-class": fc(tc)})
		}
		add(dscpPolicyPath(), true, obj{"name": Policy, "dscp": entries})
	}
	var strict, weighted []any
	for _, tc := range sw.TCs {
		in := obj{"id": queue(tc.TC), "queue-name": queue(tc.TC)}
		if tc.Strict {
			strict = append(strict, in)
		} else {
			if tc.Bandwidth < 1 || tc.Bandwidth > 255 {
				return nil, fmt.Errorf("traffic class %d: weight %d outside SR Linux's 1..255", tc.TC, tc.Bandwidth)
			}
			in["weight"] = tc.Bandwidth
			weighted = append(weighted, in)
		}
		if tc.ECN != nil {
			add(ecnPath(tc.TC), true, obj{"name": ecnName(tc.TC), "wred": obj{"wred-slope": []any{obj{
				"traffic-type": "all", "drop-probability": "all", "enable-ecn": true, "slope-enabled": true,
				"min-threshold":                strconv.FormatInt(int64(tc.ECN.Min), 10), // uint64: JSON string
				"max-threshold":                strconv.FormatInt(int64(tc.ECN.Max), 10),
				"max-drop-probability-percent": probability(tc.ECN.Probability),
			}}}})
		}
	}
	if len(sw.TCs) > 0 {
		var scheds []any
		if len(strict) > 0 {
			scheds = append(scheds, obj{"sequence": 0, "priority": "strict", "input": strict})
		}
		if len(weighted) > 0 {
			scheds = append(scheds, obj{"sequence": 1, "input": weighted})
		}
		add(schedPath(), true, obj{"name": Policy, "scheduler": scheds})
	}
	// PFC mapping profiles: the switch's own, then one per other
	// (priorities, watchdog) combination the ports use.
	profiles := map[string]bool{}
	addProfile := func(name string, prios []int, wd bool) error {
		if profiles[name] {
			return nil
		}
		profiles[name] = true
		for _, p := range prios {
			if p < 0 || p > 7 {
				return fmt.Errorf("PFC priority %d: SR Linux has PFC queues pfc0..pfc7", p)
			}
		}
		prof, err := pfcProfile(sw, name, prios, wd)
		if err != nil {
			return err
		}
		add(pfcPath(name), true, prof)
		return nil
	}
	base := lossless(sw)
	if len(base) > 0 || sw.Watchdog.Enabled {
		if err := addProfile(PFCProfile, base, sw.Watchdog.Enabled); err != nil {
			return nil, err
		}
	}
	for _, p := range sw.Ports {
		if len(p.PFC) > 0 {
			wd := portWatchdog(sw, p)
			if err := addProfile(profileName(sw, p.PFC, wd), p.PFC, wd); err != nil {
				return nil, fmt.Errorf("port %s: %w", p.Name, err)
			}
		}
	}
	headroom := sw.Headroom > 0 && len(base) > 0
	ecnQueues := false
	bufQueues := obj{}
	if headroom {
		if sw.Headroom > maxReservedShare {
			return nil, fmt.Errorf("headroom %d bytes: SR Linux's maximum-pfc-reserved-share-bytes is at most %d", int64(sw.Headroom), maxReservedShare)
		}
		var qs []any
		for _, p := range base {
			qs = append(qs, obj{"pfc-queue-name": pfcQueue(p), "maximum-pfc-reserved-share-bytes": int64(sw.Headroom)})
		}
		bufQueues["pfc-queue"] = qs
	}
	var mbsQueues []any
	for _, tc := range sw.TCs {
		if tc.ECN != nil {
			mbsQueues = append(mbsQueues, obj{"queue-name": queue(tc.TC), "maximum-burst-size": mbs(tc.ECN)})
		}
	}
	if len(mbsQueues) > 0 {
		ecnQueues = true
		bufQueues["queue"] = mbsQueues
	}
	if len(bufQueues) > 0 {
		add(bufferPath(), true, obj{"name": BufferProfile, "queues": bufQueues})
	}
	for _, p := range sw.Ports {
		// The 7220 IXR-D5 has no transmit flow-control (flow-control/
		// transmit needs srl_nokia-features tx-flow-control, which the D5
		// does not report): 802.3x pause on is not expressible (see
		// Unexpressible) and flow-control is left as it is; pause off is
		// receive false, which PFC requires as well (pfc-enable must:
		// "pfc and ethernet flow-control are mutually exclusive").
		frame := FrameMTU(p)
		if frame < MinPortMTU || frame > MaxPortMTU {
			return nil, fmt.Errorf("port %s: IP MTU %d is port mtu %d (+%d bytes of Ethernet header and VLAN tags), outside the 7220 IXR's %d..%d (srl_nokia-interfaces mtu)",
				p.Name, p.MTU, frame, frame-p.MTU, MinPortMTU, MaxPortMTU)
		}
		iface := obj{"name": p.Name, "mtu": frame}
		if !p.Pause {
			iface["ethernet"] = obj{"flow-control": obj{"receive": false}}
		}
		qi := obj{"interface-id": p.Name, "interface-ref": obj{"interface": p.Name}}
		var classifier obj
		switch {
		case p.Trust == spec.TrustDSCP && classifies(sw):
			classifier = obj{"dscp-policy": Policy}
			// 802.1p trust is not rendered: see Driver.Unexpressible
		}
		if classifier != nil {
			// the subinterface the classifier is attached to: an update
			// that leaves an existing subinterface 0 as it is
			iface["subinterface"] = []any{obj{"index": Subinterface}}
		}
		add(ifPath(p.Name), false, iface)
		if classifier != nil {
			add(qosSubIfPath(p.Name), true, obj{"interface-id": subIfID(p.Name),
				"interface-ref": obj{"interface": p.Name, "subinterface": Subinterface},
				"input":         obj{"classifiers": classifier}})
		}
		input := obj{}
		if headroom && len(p.PFC) > 0 {
			input["pfc-buffer-allocation-profile"] = BufferProfile
		}
		if len(input) > 0 {
			qi["input"] = input
		}
		output := obj{}
		var queues []any
		for _, tc := range sw.TCs {
			if tc.ECN != nil {
				queues = append(queues, obj{"queue-name": queue(tc.TC), "queue-management-profile": ecnName(tc.TC)})
			}
		}
		if len(queues) > 0 {
			output["queues"] = obj{"queue": queues}
		}
		if ecnQueues {
			output["buffer-allocation-profile"] = BufferProfile
		}
		if len(sw.TCs) > 0 {
			output["scheduler"] = obj{"scheduler-policy": Policy}
		}
		if len(output) > 0 {
			qi["output"] = output
		}
		pfc := obj{"pfc-enable": len(p.PFC) > 0}
		if len(p.PFC) > 0 {
			pfc["pfc-mapping-profile"] = profileName(sw, p.PFC, portWatchdog(sw, p))
		}
		qi["pfc"] = pfc
		add(qosIfPath(p.Name), true, qi)
	}
	return out, nil
}

// Rank: classifier policies, queue-management profiles, the scheduler
// policy, PFC mapping profiles, the buffer profile, interfaces, then the
// per-interface QoS bindings that refer to all of them.
func (Platform) Rank(path string) int {
	for i, pre := range []string{"/qos/classifiers/", "/qos/buffer-management/queue-management-profile",
		"/qos/scheduler-policies/", "/qos/pfc-mapping-profile", "/qos/buffer-management/buffer-allocation-profile",
		"/interface[", "/qos/interfaces/"} {
		if strings.HasPrefix(path, pre) {
			return i
		}
	}
	return 100
}

// Owned: everything but the interfaces.
func (Platform) Owned(path string) bool { return !strings.HasPrefix(path, "/interface[") }

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

func parseSet(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Affected lists the objects a changed setting is rendered into. PFC
// profiles are named after their priority set and watchdog, so the
// profiles a port (or the switch) used before the change are listed too:
// Changes deletes those no port uses any more.
func (Platform) Affected(ch intent.AttrChange, sw *intent.Switch) []string {
	var out []string
	allPorts := func() {
		for _, p := range sw.Ports {
			out = append(out, qosIfPath(p.Name))
		}
	}
	allSubs := func() {
		for _, p := range sw.Ports {
			out = append(out, ifPath(p.Name), qosSubIfPath(p.Name))
		}
	}
	// explicit is the profile name a port set gets when it is not the
	// switch's own set: after a change of the lossless classes, a port
	// may have used it before.
	explicit := func(prios []int, wd bool) string {
		n := PFCProfile + "-" + strings.ReplaceAll(setKey(prios), ",", "-")
		if !wd {
			n += "-nowd"
		}
		return n
	}
	profiles := func(withExplicit bool) {
		out = append(out, pfcPath(PFCProfile))
		for _, p := range sw.Ports {
			if len(p.PFC) > 0 {
				wd := portWatchdog(sw, p)
				out = append(out, pfcPath(profileName(sw, p.PFC, wd)))
				if withExplicit {
					out = append(out, pfcPath(explicit(p.PFC, wd)))
				}
			}
		}
	}
	switch p := ch.Path; {
	case p == "trust":
		out = append(out, dscpPolicyPath(), dot1pPolicyPath())
		allPorts()
		allSubs()
	case strings.HasPrefix(p, "dscp/"):
		out = append(out, dscpPolicyPath())
	case strings.HasPrefix(p, "tc/"):
		parts := strings.Split(p, "/")
		tc, err := strconv.Atoi(parts[1])
		if err != nil || len(parts) < 3 {
			return nil
		}
		switch {
		case parts[2] == "sched", parts[2] == "bandwidth":
			out = append(out, schedPath())
			allPorts()
		case parts[2] == "ecn":
			out = append(out, ecnPath(tc), bufferPath())
			allPorts()
		case parts[2] == "lossless":
			profiles(true)
			out = append(out, bufferPath())
			allPorts()
		}
	case strings.HasPrefix(p, "pfcwd/"):
		profiles(false)
	case p == "buffer/headroom":
		out = append(out, bufferPath())
		allPorts()
	default:
		port, attr, ok := portOf(p)
		if !ok {
			return nil
		}
		switch attr {
		case "mtu", "pause":
			out = append(out, ifPath(port))
		case "trust":
			out = append(out, dscpPolicyPath(), dot1pPolicyPath(), ifPath(port), qosIfPath(port), qosSubIfPath(port))
		case "pfc", "pfcwd":
			out = append(out, qosIfPath(port))
			var cur intent.Port
			for _, sp := range sw.Ports {
				if sp.Name == port {
					cur = sp
				}
			}
			wd := portWatchdog(sw, cur)
			if len(cur.PFC) > 0 {
				out = append(out, pfcPath(profileName(sw, cur.PFC, wd)))
			}
			// The profile the port used before: its set and watchdog may
			// both have changed (one diff entry each), so every variant of
			// the old and the current set. Changes deletes only those the
			// device has and no port still uses.
			for _, set := range [][]int{cur.PFC, parseSet(ch.Before)} { // Before of pfcwd ("true") parses empty
				if len(set) > 0 {
					out = append(out, pfcPath(profileName(sw, set, true)), pfcPath(profileName(sw, set, false)))
				}
			}
			if sw.Headroom > 0 && len(lossless(sw)) > 0 {
				out = append(out, bufferPath())
			}
		}
	}
	return out
}
