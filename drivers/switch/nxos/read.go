package nxos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// Node is one line of the configuration with its sub-mode lines.
type Node = clicore.ConfigNode

// ParseConfig parses `show running-config` (or rendered CLI) into its
// section tree by indentation (clicore.ParseIndented).
func ParseConfig(text string) []*Node { return clicore.ParseIndented(text) }

// Normalize drops the header lines of `show running-config` that carry
// times ("!Time: ...", "!Running configuration last done at: ...") and
// line-ending differences, so two reads of an unchanged configuration
// compare equal byte for byte.
func Normalize(text string) string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if strings.HasPrefix(l, "!Time:") || strings.HasPrefix(l, "!Running configuration last done at:") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// parseList parses NX-OS value lists ("24-31,48", or several words) of
// values 0..max; invalid parts are skipped.
func parseList(words []string, max int) []int {
	var out []int
	for _, w := range words {
		for _, p := range strings.Split(w, ",") {
			lo, hi, rng := strings.Cut(p, "-")
			a, err := strconv.Atoi(lo)
			if err != nil || a < 0 || a > max {
				continue
			}
			b := a
			if rng {
				if b, err = strconv.Atoi(hi); err != nil || b < a || b > max {
					continue
				}
			}
			for v := a; v <= b; v++ {
				out = append(out, v)
			}
		}
	}
	return out
}

// running is the parsed configuration fabctl reads.
type running struct {
	classMaps  map[string][]int            // qos class-map -> DSCP values
	cosMaps    map[string][]int            // qos class-map -> CoS values
	matchOf    map[string]matchShape       // qos class-map -> what else its match statements say
	policies   map[string]map[string]*Node // type -> name -> node
	sysQueuing string
	sysNQoS    string
	wd         string // global watch-dog-interval on|off
	interfaces map[string]*Node
}

func parseRunning(nodes []*Node) *running {
	r := &running{classMaps: map[string][]int{}, cosMaps: map[string][]int{}, matchOf: map[string]matchShape{}, policies: map[string]map[string]*Node{"qos": {}, "queuing": {}, "network-qos": {}},
		interfaces: map[string]*Node{}}
	for _, n := range nodes {
		f := strings.Fields(n.Line)
		switch {
		case len(f) >= 4 && f[0] == "class-map" && f[1] == "type" && f[2] == "qos":
			name := f[len(f)-1]
			var ds, cs []int
			shape := matchShape{all: len(f) == 5 && f[3] == "match-all"}
			for _, c := range n.Children {
				cf := strings.Fields(c.Line)
				switch {
				case len(cf) >= 3 && cf[0] == "match" && cf[1] == "dscp":
					ds = append(ds, parseList(cf[2:], 63)...)
					shape.lines++
				case len(cf) >= 3 && cf[0] == "match" && cf[1] == "cos":
					cs = append(cs, parseList(cf[2:], 7)...)
					shape.lines++
				case len(cf) > 0:
					shape.lines++
					if shape.other == "" {
						shape.other = strings.Join(cf, " ")
					}
				}
			}
			r.classMaps[name], r.cosMaps[name], r.matchOf[name] = ds, cs, shape
		case len(f) == 4 && f[0] == "policy-map" && f[1] == "type" && r.policies[f[2]] != nil:
			r.policies[f[2]][f[3]] = n
		case n.Line == "system qos":
			for _, c := range n.Children {
				cf := strings.Fields(c.Line)
				switch {
				case len(cf) == 5 && cf[0] == "service-policy" && cf[2] == "queuing" && cf[3] == "output":
					r.sysQueuing = cf[4]
				case len(cf) == 4 && cf[0] == "service-policy" && cf[2] == "network-qos":
					r.sysNQoS = cf[3]
				}
			}
		case len(f) == 3 && f[0] == "priority-flow-control" && f[1] == "watch-dog-interval":
			r.wd = f[2]
		case len(f) == 2 && f[0] == "interface":
			r.interfaces[f[1]] = n
		}
	}
	return r
}

func atoi(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1e6 {
		return def
	}
	return n
}

// classOf finds a class inside a policy node ("class X" or "class type T X").
func classOf(policy *Node, name string) *Node {
	if policy == nil {
		return nil
	}
	for _, c := range policy.Children {
		f := strings.Fields(c.Line)
		if len(f) >= 2 && f[0] == "class" && f[len(f)-1] == name {
			return c
		}
	}
	return nil
}

// tcOfClass maps a system queuing/network-qos class name to its
// qos-group: c-out-8q-q3 -> 3, c-out-8q-q-default -> 0.
func tcOfClass(name, prefix string) (int, bool) {
	rest := strings.TrimPrefix(name, prefix)
	if rest == name {
		return 0, false
	}
	if rest == "-default" {
		return 0, true
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || n > 7 {
		return 0, false
	}
	return n, true
}

// Interfaces are the interfaces a running-config has a section for: every
// interface of the switch, configured or not (NX-OS prints an empty
// section for an interface without configuration (show-running-config-
// header.txt: `interface Ethernet1/1` followed by `interface
// Ethernet1/2`)). They are the port inventory (drivers.FactPorts).
func Interfaces(text string) []string {
	r := parseRunning(ParseConfig(text))
	out := make([]string, 0, len(r.interfaces))
	for name := range r.interfaces {
		out = append(out, name)
	}
	return out
}

// ReadRunningConfig normalises `show running-config` into fabctl's state
// paths for the settings the switch intent manages.
func ReadRunningConfig(text string, sw *intent.Switch) (intent.State, error) {
	if sw == nil {
		return nil, errors.New("no switch intent")
	}
	r := parseRunning(ParseConfig(text))
	st := intent.State{}
	qos := readClassification(st, r, sw)
	if qos == nil && r.allPCP(sw) {
		st["trust"] = "pcp"
	}
	noDrop := readQueues(st, r, sw)
	readCarried(st, r, sw)
	readOwnPolicies(st, r)
	readWatchdog(st, r)
	readPorts(st, r, sw, qos, noDrop)
	readForeignInputs(st, r, sw)
	return st, nil
}

// readClassification reads FABCTL-QOS's classes in order, first match
// wins; unclassified traffic goes to class-default's qos-group (0). It
// returns the policy (nil when there is none).
func readClassification(st intent.State, r *running, sw *intent.Switch) *Node {
	qos := r.policies["qos"][QoSPolicy]
	if qos == nil {
		return nil
	}
	st["trust"] = "dscp"
	table := r.classify(QoSPolicy).dscp
	// Read whatever the intent's trust: a switch moving to pcp removes
	// this map (ClassificationOffLines), and the diff does not name live
	// paths a pcp intent has no scope for.
	if sw.Transport != "infiniband" {
		intent.PutDSCP(st, "", &table)
	}
	return qos
}

// allPCP: the switch has no DSCP classification policy and every managed
// port on it classifies by CoS (FABCTL-QOS-COS or another CoS policy,
// foreign.go): the switch trusts pcp (Build renders no FABCTL-QOS then).
// A switch with no managed port classified is not read as trusting
// anything.
func (r *running) allPCP(sw *intent.Switch) bool {
	n := 0
	for _, port := range sw.Ports {
		node, ok := r.interfaces[port.Name]
		if !ok {
			continue
		}
		if !strings.HasPrefix(r.inputTrust(inputPolicyOf(node), sw), "pcp") {
			return false
		}
		n++
	}
	return n > 0
}

// qosGroupOf is the qos-group a policy class sets (-1: none).
func qosGroupOf(c *Node) int {
	group := -1
	for _, a := range c.Children {
		af := strings.Fields(a.Line)
		if len(af) == 3 && af[0] == "set" && af[1] == "qos-group" {
			if g, err := strconv.Atoi(af[2]); err == nil && g >= 0 && g <= 7 {
				group = g
			}
		}
	}
	return group
}

// readQueues reads the traffic classes from the policies attached to
// system qos and returns the no-drop classes.
func readQueues(st intent.State, r *running, sw *intent.Switch) map[int]bool {
	queuing := r.policies["queuing"][r.sysQueuing]
	nqos := r.policies["network-qos"][r.sysNQoS]
	tcs := map[int]bool{}
	for _, tc := range sw.TCs {
		tcs[tc.TC] = true
	}
	noDrop, nqMTU := readNetworkQoS(nqos, tcs)
	if queuing != nil {
		for _, c := range queuing.Children {
			f := strings.Fields(c.Line)
			// A class holding only `bandwidth remaining percent 0` is an
			// unused class as Cisco's recipe writes it
			// (cisco-roce-enable.cfg:35): not a traffic class.
			if tc, ok := tcOfClass(f[len(f)-1], queuePrefix); ok && len(f) == 4 && len(c.Children) > 0 && !unusedQueue(c) {
				tcs[tc] = true
			}
		}
	}
	for tc := range tcs {
		pre := "tc/" + strconv.Itoa(tc) + "/"
		st[pre+"lossless"] = strconv.FormatBool(noDrop[tc]) + nqMTUDrift(nqos, nqMTU, tc)
		if q := classOf(queuing, queueClass(tc)); q != nil {
			readQueue(st, pre, q)
		}
	}
	return noDrop
}

// unusedQueue: the queuing class only says `bandwidth remaining percent 0`.
func unusedQueue(c *Node) bool {
	return len(c.Children) == 1 && strings.Join(strings.Fields(c.Children[0].Line), " ") == "bandwidth remaining percent 0"
}

// readNetworkQoS reads the network-qos policy's classes: the no-drop
// ones, and each class's mtu (0: class without an mtu line). A no-drop
// class is added to tcs.
func readNetworkQoS(nqos *Node, tcs map[int]bool) (noDrop map[int]bool, nqMTU map[int]int) {
	noDrop, nqMTU = map[int]bool{}, map[int]int{}
	if nqos == nil {
		return noDrop, nqMTU
	}
	for _, c := range nqos.Children {
		f := strings.Fields(c.Line)
		tc, ok := tcOfClass(f[len(f)-1], nqPrefix)
		if len(f) != 4 || !ok {
			continue
		}
		nqMTU[tc] = 0
		for _, a := range c.Children {
			af := strings.Fields(a.Line)
			switch {
			case len(af) >= 3 && af[0] == "pause" && af[1] == "pfc-cos":
				for _, v := range parseList(af[2:], 7) {
					noDrop[v] = true
				}
				tcs[tc] = true
			case len(af) == 2 && af[0] == "mtu":
				nqMTU[tc] = atoi(af[1], 0)
			}
		}
	}
	return noDrop, nqMTU
}

// readQueue reads one traffic class's queuing class: scheduling and WRED/ECN.
//
// `bandwidth percent N` (azure-local-tor-qos.cfg: c-out-8q-q7 `bandwidth
// percent 1` beside classes with `bandwidth remaining percent`) is not
// read as an ETS share. Cisco's text reached says only that `bandwidth`
// "allocates a minimum data rate to a queue" and that with a priority
// queue "the device distributes the remaining bandwidth among the other
// queues" (cisco-qos-guide-classification.txt (3)); it does not say how
// a class guaranteed N % of the port shares with classes given shares of
// what remains, which is what the spec's ETS share (one weight per
// class, 802.1Qaz) would have to equal. Mapping it would be a guess, so
// the class reads as what it is ("bandwidth percent 1 (...)"), which no
// spec class equals: import writes no class for it and lists it as left
// out, and plan rewrites the queuing policy in fabctl's forms.
func readQueue(st intent.State, pre string, q *Node) {
	sched, bw := "", ""
	for _, a := range q.Children {
		af := strings.Fields(a.Line)
		switch {
		case len(af) == 3 && af[0] == "priority" && af[1] == "level":
			sched = "strict"
		case len(af) == 4 && af[0] == "bandwidth" && af[1] == "remaining" && af[2] == "percent":
			bw = af[3]
		case len(af) == 3 && af[0] == "bandwidth" && af[1] == "percent" && sched == "":
			sched = "bandwidth percent " + af[2] + " (a minimum share of the port, not an ETS share of what strict queues leave)"
		case len(af) >= 7 && af[0] == "random-detect" && af[1] == "minimum-threshold" && af[4] == "maximum-threshold":
			readWRED(st, pre, af)
		}
	}
	switch {
	case sched != "":
		st[pre+"sched"] = sched
	case bw != "":
		st[pre+"sched"] = "ets"
		st[pre+"bandwidth"] = bw
	}
}

// readWRED reads a random-detect line's fields (af).
func readWRED(st intent.State, pre string, af []string) {
	min := threshold(af[2], af[3])
	ecn := false
	for i := 7; i < len(af); i++ {
		switch {
		case af[i] == "ecn":
			ecn = true
		case af[i] == "drop-probability" && i+1 < len(af):
			st[pre+"ecn/probability"] = af[i+1]
		}
	}
	if !ecn {
		// WRED without `ecn` drops instead of marking: show it
		// as what it is, never as the ECN the intent wants.
		min += " (WRED drop, no ecn)"
	}
	st[pre+"ecn/min"] = min
	st[pre+"ecn/max"] = threshold(af[5], af[6])
}

// readWatchdog reads the PFC watchdog (global): on or not. Its poll,
// detect and restore times are not expressible (Driver.Unexpressible) and
// not read; the action of NX-OS's watchdog is drop (cisco-pfc-guide.txt:19-20).
func readWatchdog(st intent.State, r *running) {
	if r.wd == "on" {
		st["pfcwd/action"] = "drop"
	}
}

// readPorts reads the intent's ports: MTU, PFC, watchdog, pause, trust.
func readPorts(st intent.State, r *running, sw *intent.Switch, qos *Node, noDrop map[int]bool) {
	var lossless []int
	for q := range noDrop {
		lossless = append(lossless, q)
	}
	for _, port := range sw.Ports {
		n, ok := r.interfaces[port.Name]
		if !ok {
			continue // not on this switch: the plan creates it and the apply fails naming it
		}
		readPort(st, r, sw, "port/"+port.Name+"/", n, qos, lossless)
	}
}

// readPort reads one interface.
func readPort(st intent.State, r *running, sw *intent.Switch, pre string, n *Node, qos *Node, lossless []int) {
	st[pre+"mtu"] = strconv.Itoa(DefaultMTU)
	mode, wd, pol := "", "", inputPolicyOf(n)
	for _, c := range n.Children {
		f := strings.Fields(c.Line)
		switch {
		case len(f) == 2 && f[0] == "mtu":
			st[pre+"mtu"] = f[1]
		case len(f) >= 3 && f[0] == "priority-flow-control" && f[1] == "mode":
			mode = f[2] // "on", or "on send-tlv" (microsoft-azure-local-n9k.cfg:51)
		case len(f) == 3 && f[0] == "priority-flow-control" && f[1] == "watch-dog-interval":
			wd = f[2]
		}
	}
	st[pre+"pfc"] = ""
	if mode == "on" {
		st[pre+"pfc"] = ints(lossless)
	}
	if !(portOff(sw, pre) && sw.Watchdog.Enabled) {
		// (A port without the watchdog under the switch's is not
		// expressible: Driver.Unexpressible.)
		st[pre+"pfcwd"] = strconv.FormatBool(wd == "on" || wd == "" && r.wd == "on")
	}
	// port/*/pause is not expressible (no NX-OS flowcontrol source): not read.
	pt := r.inputTrust(pol, sw)
	if pt != st["trust"] {
		st[pre+"trust"] = pt
	}
}

// portOff: the intent's port at pre ("port/NAME/") has no watchdog.
func portOff(sw *intent.Switch, pre string) bool {
	for _, p := range sw.Ports {
		if "port/"+p.Name+"/" == pre {
			return !p.Watchdog
		}
	}
	return false
}

// nqMTUDrift describes a network-qos class whose mtu is not the
// NetworkMTU fabctl renders in every class it configures ("" when it
// is). The intent has no setting of its own for it (the class mtu only
// has to let the largest port MTU's frames through, and NetworkMTU is
// the platform maximum), so the drift is folded into the class's
// tc/N/lossless value, the other network-qos setting of the class:
// "true (network-qos mtu 1500, fabctl sets 9216)" differs from the
// desired "true", and the plan re-renders the network-qos policy. A
// class below a port's frames drops them, lossless or not. Without an
// attached network-qos policy the queuing/no-drop paths already differ.
func nqMTUDrift(nqos *Node, nqMTU map[int]int, tc int) string {
	if nqos == nil {
		return ""
	}
	m, ok := nqMTU[tc]
	switch {
	case !ok:
		return fmt.Sprintf(" (network-qos class %s missing: mtu %d, fabctl sets %d)", nqClass(tc), DefaultMTU, NetworkMTU)
	case m == 0:
		return fmt.Sprintf(" (network-qos mtu not set: %d, fabctl sets %d)", DefaultMTU, NetworkMTU)
	case m != NetworkMTU:
		return fmt.Sprintf(" (network-qos mtu %d, fabctl sets %d)", m, NetworkMTU)
	}
	return ""
}

// threshold converts an NX-OS threshold to bytes; units fabctl does not
// know stay as written, so they show as drift.
func threshold(n, unit string) string {
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v < 0 || v > 1<<40 {
		return n + " " + unit
	}
	switch unit {
	case "bytes":
		return strconv.FormatInt(v, 10)
	case "kbytes":
		return strconv.FormatInt(v*KByte, 10)
	case "mbytes":
		return strconv.FormatInt(v*KByte*KByte, 10)
	}
	return n + " " + unit
}
