package nxos

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// changes groups a diff into steps (clicore.Sections). NX-OS commands
// set a value whatever was there, so a step carries the whole desired
// section for its scope (classification, the queuing/network-qos
// policies with system qos, the watchdog lines, one interface) plus the
// `no` lines for what the diff's before values say is configured and no
// longer wanted; payload lines are indented like the running-config (two
// spaces per mode).
func changes(sw *intent.Switch, diff []intent.AttrChange, desired, live intent.State) ([]drivers.Change, error) {
	p, err := Build(sw)
	if err != nil {
		return nil, err
	}
	ports := map[string]intent.Port{}
	for _, port := range sw.Ports {
		ports[port.Name] = port
	}
	p.l2 = l2Ports(live)
	p.mtuOnly = SiliconOne(modelOf(live, sw))
	p.foreign = foreignInputs(live)
	for name, pol := range p.foreign {
		if _, managed := ports[name]; managed && pol == "" {
			return nil, fmt.Errorf("port %s: its input qos policy has a name fabctl does not send to the device (letters, digits and _ . : - only); detach it by hand (no service-policy type qos input ...) so fabctl can bind its own", name)
		}
	}
	for _, c := range diff {
		if strings.HasPrefix(c.Path, "tc/") {
			// The queuing step rewrites the policies: the queues the
			// spec leaves unmanaged go in as the device runs them.
			if p.carry, err = carriedQueues(sw, diff, live); err != nil {
				return nil, err
			}
			break
		}
	}
	cl := clearsFrom(p, diff, desired, live)
	out := clicore.Sections(diff, fields, groupOf, groupRank, func(path string, add func(string, func() []string)) {
		if p.mtuOnly && !(strings.HasPrefix(path, "port/") && strings.HasSuffix(path, "/mtu")) {
			return // a Nexus 9800: only the interface MTU (siliconone.go)
		}
		switch {
		case path == "trust" || strings.HasPrefix(path, "dscp/"):
			if !p.dscp() {
				// The switch now trusts pcp: its ports move to
				// FABCTL-QOS-COS, then the DSCP classification goes.
				add("cos", func() []string { return p.CoSLines(cl) })
				for _, port := range sw.Ports {
					if cl.qosOff[port.Name] != "" {
						add("interface "+port.Name, func() []string { return p.InterfaceLines(port, cl) })
					}
				}
				add("classification off", func() []string { return p.ClassificationOffLines(cl) })
				return
			}
			add("classification", func() []string { return p.ClassificationLines(cl) })
			if path == "trust" {
				// Ports whose input policy follows the switch's trust.
				for _, port := range sw.Ports {
					if cl.qosOff[port.Name] != "" {
						add("interface "+port.Name, func() []string { return p.InterfaceLines(port, cl) })
					}
				}
			}
		case strings.HasPrefix(path, "tc/"):
			// CoS classes follow the traffic classes.
			add("cos", func() []string { return p.CoSLines(cl) })
			add("queuing", func() []string { return p.QueuingLines(cl) })
		case strings.HasPrefix(path, "pfcwd/"):
			add("watchdog", func() []string { return p.WatchdogLines(true) })
		case strings.HasPrefix(path, "port/"):
			name, attr := splitPort(path)
			if attr == "cable" {
				return // no NX-OS setting
			}
			port, ok := ports[name]
			if !ok {
				return
			}
			if _, other := p.foreign[name]; other {
				// The interface is bound to a policy fabctl does not
				// own: the step binds fabctl's instead (foreign.go),
				// written first with the intent's classification.
				if port.Trust == spec.TrustPCP {
					add("cos", func() []string { return p.CoSLines(cl) })
				} else {
					add("classification", func() []string { return p.ClassificationLines(cl) })
				}
			}
			if attr == "trust" {
				add("cos", func() []string { return p.CoSLines(cl) })
			}
			if attr == "pfcwd" && cl.wdOff[name] && !sw.Watchdog.Enabled {
				// A switch watchdog line left on the switch covers
				// every port and no source shows a per-port off: the
				// intent has no switch watchdog, so remove it too.
				add("watchdog", func() []string { return p.WatchdogLines(true) })
			}
			add("interface "+name, func() []string { return p.InterfaceLines(port, cl) })
		}
	})
	for i := range out {
		for _, l := range out[i].Payload {
			if strings.HasPrefix(l, "no policy-map type network-qos ") {
				// Only removing the policy clears `pause pfc-cos` (no
				// sourced `no pause`), and no source shows a system qos
				// attachment replaced in one command (cisco-roce-enable.cfg
				// detaches with `no service-policy` first, l.69-71): the
				// rebuild cannot be made hitless from sourced forms.
				out[i].Disruptive = "rebuilds the network-qos policy (detach from system qos, remove, write anew, attach): until the re-attach the switch runs its default network-qos policy, which has no pause pfc-cos, so every lossless class is lossy (drops instead of pausing) mid-change"
				break
			}
			if out[i].Disruptive == "" && strings.HasPrefix(l, "no policy-map ") {
				// A rebuild (clear): between the detach and the re-attach
				// the switch uses its default policy for that type.
				out[i].Disruptive = "rebuilds a QoS policy (detach, remove, write anew, attach): until the transaction re-attaches it the switch applies its default policy"
			}
		}
	}
	return out, nil
}

// clearsFrom reads from the diff's before values what the switch has
// that the intent no longer wants, and the live DSCP table.
func clearsFrom(p *Plan, diff []intent.AttrChange, desired, liveSt intent.State) *clear {
	cl := &clear{pfcOff: map[string]bool{}, wdOff: map[string]bool{}, qosOff: map[string]string{},
		liveTrust: map[string]string{}, detached: map[string]bool{}, foreign: p.foreign,
		ownQ: liveSt[FactOwnQueuing], ownNQ: liveSt[FactOwnNetwork]}
	want := map[int]bool{}
	for _, tc := range p.sw.TCs {
		want[tc.TC] = true
	}
	// The live DSCP table: the desired entries with the diff's before
	// values put back.
	live := intent.State{}
	for k, v := range desired {
		if strings.HasPrefix(k, "dscp/") {
			live[k] = v
		}
	}
	if !p.dscp() {
		// A switch that now trusts pcp desires no DSCP map: the live
		// one is what the read found (ClassificationOffLines removes it).
		for k, v := range liveSt {
			if strings.HasPrefix(k, "dscp/") {
				live[k] = v
			}
		}
	}
	// The live trust of the switch and of each managed port: desired
	// where the diff does not name it, else the diff's before value.
	byPath := map[string]intent.AttrChange{}
	for _, c := range diff {
		byPath[c.Path] = c
	}
	swTrust := desired["trust"]
	if c, ok := byPath["trust"]; ok {
		swTrust = c.Before
	}
	for _, port := range p.sw.Ports {
		// A port without a trust path of its own (desired or in the
		// diff) has the switch's live trust.
		k := "port/" + port.Name + "/trust"
		lt, ok := desired[k]
		if !ok {
			lt = swTrust
		}
		if c, ok := byPath[k]; ok {
			lt = c.Before
			if c.Action == intent.Create {
				lt = swTrust
			}
		}
		cl.liveTrust[port.Name] = lt
		cl.portOrder = append(cl.portOrder, port.Name)
		cl.cosLive = cl.cosLive || strings.HasPrefix(lt, "pcp")
		// The input policy the port has now, to detach when its trust
		// asks for the other one (one input qos policy per interface).
		if pol := policyOfTrust(lt); pol != "" && pol != inputPolicy(port) {
			cl.qosOff[port.Name] = pol
		}
	}
	stale := map[int]bool{}
	for _, c := range diff {
		switch {
		case strings.HasPrefix(c.Path, "dscp/"):
			if c.Action == intent.Create {
				delete(live, c.Path)
			} else {
				live[c.Path] = c.Before
			}
		case strings.HasPrefix(c.Path, "tc/"):
			parts := strings.Split(c.Path, "/")
			q, err := strconv.Atoi(parts[1])
			if err != nil || q < 0 || q > 7 || c.Before == "" {
				continue
			}
			attr := strings.Join(parts[2:], "/")
			switch {
			case attr == "lossless" && strings.HasPrefix(c.Before, "true") && (!want[q] || c.After == "false"):
				// A no-drop class goes: only removing the policy clears
				// `pause pfc-cos` (no documented `no pause`).
				cl.rebuildNQ = true
			case attr == "sched" && c.Before == "strict", attr == "sched" && c.Before == "ets" && c.After == "strict":
				cl.rebuildQ = true // priority level <-> bandwidth remaining
			case strings.HasPrefix(attr, "ecn/") && c.Action == intent.Delete:
				cl.rebuildQ = true // random-detect goes
			}
			if !want[q] {
				stale[q] = true
			}
		case strings.HasPrefix(c.Path, "port/") && strings.HasSuffix(c.Path, "/trust"):
			// The live port trust is liveTrust's (above).
		case strings.HasPrefix(c.Path, "port/") && c.Before != "":
			name, attr := splitPort(c.Path)
			switch attr {
			case "pfc":
				cl.pfcOff[name] = true
			case "pfcwd":
				cl.wdOff[name] = c.Before == "true"
			}
		}
	}
	if d, ok := live["dscp/default"]; ok {
		def, err := strconv.Atoi(d)
		if err == nil && def >= 0 && def <= 7 {
			var t [64]int
			for i := range t {
				t[i] = def
				if v, ok := live["dscp/"+strconv.Itoa(i)]; ok {
					if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 7 {
						t[i] = n
					}
				}
			}
			cl.before, cl.beforeDef = &t, def
		}
	}
	for name, pol := range p.foreign {
		cl.qosOff[name] = pol // detached before fabctl's policy is bound
	}
	for q := range stale {
		cl.staleTCs = append(cl.staleTCs, q)
	}
	sort.Ints(cl.staleTCs)
	return cl
}

var splitPort = clicore.SplitPort

// policyOfTrust is fabctl's input policy a live trust value reads from:
// dscp is FABCTL-QOS, pcp... FABCTL-QOS-COS, anything else none of
// fabctl's (another policy is Plan.foreign's).
func policyOfTrust(t string) string {
	switch {
	case t == "dscp":
		return QoSPolicy
	case strings.HasPrefix(t, "pcp"):
		return CoSPolicy
	}
	return ""
}

func groupOf(path string) string {
	switch {
	case path == "trust" || strings.HasPrefix(path, "dscp/"):
		return "classification (policy-map type qos " + QoSPolicy + ")"
	case strings.HasPrefix(path, "tc/"):
		return "queuing and no-drop classes (" + QueuingPolicy + ", " + NetworkPolicy + ", system qos)"
	case strings.HasPrefix(path, "pfcwd/"):
		return "PFC watchdog"
	case path == "buffer/headroom":
		return "headroom"
	case strings.HasPrefix(path, "port/"):
		name, _ := splitPort(path)
		return "interface " + name
	}
	return path
}

func groupRank(g string) int {
	switch {
	case strings.HasPrefix(g, "classification"):
		return 0
	case strings.HasPrefix(g, "queuing"):
		return 1
	case strings.HasPrefix(g, "PFC watchdog"):
		return 2
	}
	return 3
}

// Script turns indented configuration lines into the commands typed at
// the CLI, with an explicit `exit` for every mode left (clicore.Script).
func Script(lines []string) []string { return clicore.Script(lines) }

func flatten(nodes []*Node) []string { return clicore.ScriptOf(nodes) }
