package nxos

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Classification by an input policy fabctl does not own. A switch that
// was configured by hand classifies its ports with its own `policy-map
// type qos`, as Microsoft's Azure Local ToR configuration does
// (azure-local-tor-qos.cfg: class-maps `match-all` with one `match cos
// N`, policy AZLocal_SERVICES `set qos-group N`, bound with
// `service-policy type qos input`). The driver reads such a policy the
// way NX-OS applies it (testdata/vendor/nxos/cisco-qos-guide-
// classification.txt): the classes in order, the first whose class-map
// matches sets the packet's qos-group (1), class-default takes what no
// class matches (1), and without a class-default everything else is
// qos-group 0 (2). A policy whose classes all match on CoS reads as the
// port's trust pcp, all on DSCP as trust dscp; the qos-groups it sets
// are compared with what fabctl's own policy would set for the intent
// (FABCTL-QOS-COS: CoS n -> qos-group n for the intent's traffic
// classes; FABCTL-QOS: the intent's DSCP map) and any difference is
// shown in the value ("pcp (AZLocal_SERVICES: cos 7 -> qos-group 7)").
// A policy the driver cannot read as one trust (several match kinds, a
// class that does more than set a qos-group, a match it does not model)
// reads "other (NAME: why)", which no spec value equals.
//
// Managing such a port means binding fabctl's policy instead: the
// driver never edits a policy it does not own. The port's binding is a
// device fact (FactQoSInput); every step that writes the interface
// first writes fabctl's policy with the same classification the intent
// asks for, then `no service-policy type qos input NAME` (the removal
// form of cisco-roce-enable.cfg:66) and `service-policy type qos input
// FABCTL-...`: the plan shows the swap. A port whose policy already
// classifies as the intent asks reads equal and is not touched.

// FactQoSInput lists the managed ports bound to an input qos policy
// that is not fabctl's, "PORT=POLICY" comma-separated and sorted; a
// policy whose name fabctl would not send back to the device is listed
// with an empty name.
const FactQoSInput = drivers.PathFacts + "qos-input"

// policyNameRE: the policy names fabctl sends back in `no
// service-policy` (letters, digits and _ . : -, as AZLocal_SERVICES);
// anything else read from a device is not echoed into a command.
var policyNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// matchShape is what a qos class-map's match statements say beside the
// DSCP and CoS values.
type matchShape struct {
	all   bool   // match-all
	lines int    // match statements
	other string // the first statement that is neither match dscp nor match cos
}

// classification is what one type qos policy does to a packet.
type classification struct {
	kind string // "cos", "dscp", or "" with why
	why  string
	dscp [64]int // DSCP -> qos-group (DSCP classes; the rest to the default)
	cos  [8]int  // CoS -> qos-group (CoS classes; the rest to the default)
}

// classify reads a type qos policy (see above): first match wins,
// class-default's qos-group (0 without one) for the rest. A class that
// sets no qos-group is passed over for the tables, as fabctl's own
// policies have none; for the kind it makes the policy unreadable.
func (r *running) classify(name string) classification {
	var c classification
	pol := r.policies["qos"][name]
	if pol == nil {
		c.why = "policy-map type qos " + name + " is not configured"
		return c
	}
	var setD [64]bool
	var setC [8]bool
	def := 0
	kinds := map[string]bool{}
	for _, cl := range pol.Children {
		f := strings.Fields(cl.Line)
		if len(f) < 2 || f[0] != "class" {
			continue
		}
		group, extra := qosGroupOf(cl), otherAction(cl)
		cm := f[len(f)-1]
		if extra != "" && c.why == "" {
			c.why = "class " + cm + " does more than set a qos-group (" + extra + ")"
		}
		if cm == classDefault {
			if group >= 0 {
				def = group
			}
			continue
		}
		ds, cs, shape := r.classMaps[cm], r.cosMaps[cm], r.matchOf[cm]
		switch {
		case c.why != "":
		case shape.other != "":
			c.why = "class-map " + cm + " has " + strconv.Quote(shape.other)
		case len(ds) == 0 && len(cs) == 0:
			c.why = "class-map " + cm + " matches no dscp or cos value"
		case shape.all && shape.lines > 1:
			c.why = "class-map type qos match-all " + cm + " has several match statements"
		case group < 0:
			c.why = "class " + cm + " sets no qos-group"
		}
		if len(ds) > 0 {
			kinds["dscp"] = true
		}
		if len(cs) > 0 {
			kinds["cos"] = true
		}
		if group < 0 {
			continue
		}
		for _, d := range ds {
			if !setD[d] {
				setD[d], c.dscp[d] = true, group
			}
		}
		for _, v := range cs {
			if !setC[v] {
				setC[v], c.cos[v] = true, group
			}
		}
	}
	for d := range c.dscp {
		if !setD[d] {
			c.dscp[d] = def
		}
	}
	for v := range c.cos {
		if !setC[v] {
			c.cos[v] = def
		}
	}
	switch {
	case c.why != "":
	case len(kinds) > 1:
		c.why = "it matches on both dscp and cos"
	case kinds["cos"]:
		c.kind = "cos"
	case kinds["dscp"]:
		c.kind = "dscp"
	default:
		c.why = "it has no class matching dscp or cos"
	}
	return c
}

// otherAction is the first line of a policy class that is not `set
// qos-group N` ("" when there is none).
func otherAction(cl *Node) string {
	for _, a := range cl.Children {
		af := strings.Fields(a.Line)
		if len(af) == 3 && af[0] == "set" && af[1] == "qos-group" {
			continue
		}
		if len(af) > 0 {
			return strings.Join(af, " ")
		}
	}
	return ""
}

// inputTrust is a port's trust as its input qos policy (pol, "" none)
// classifies: none, dscp (FABCTL-QOS, whose table is the switch's DSCP
// map, or another DSCP policy), pcp (FABCTL-QOS-COS or another CoS
// policy), with what differs from fabctl's own classification.
func (r *running) inputTrust(pol string, sw *intent.Switch) string {
	c := r.classify(pol)
	switch {
	case pol == "", (pol == QoSPolicy || pol == CoSPolicy) && r.policies["qos"][pol] == nil:
		return "none"
	case pol == QoSPolicy:
		return "dscp"
	case pol == CoSPolicy, c.kind == "cos":
		return "pcp" + cosDiff(pol, &c.cos, sw)
	case c.kind == "dscp":
		return "dscp" + dscpDiff(pol, &c.dscp, sw)
	}
	return "other (" + pol + ": " + c.why + ")"
}

// cosDiff compares a CoS classification with the one fabctl renders
// (FABCTL-QOS-COS: CoS n to qos-group n for the intent's traffic classes
// other than 0, every other CoS to 0) and describes the difference (""
// when there is none), so a port's trust reads "pcp (FABCTL-QOS-COS:
// cos 3 -> qos-group 5)" and the plan re-renders and binds the policy.
func cosDiff(pol string, got *[8]int, sw *intent.Switch) string {
	var want [8]int
	for _, tc := range sw.TCs {
		if tc.TC > 0 && tc.TC < 8 {
			want[tc.TC] = tc.TC
		}
	}
	var diffs []string
	for v := range got {
		if got[v] != want[v] {
			diffs = append(diffs, fmt.Sprintf("cos %d -> qos-group %d", v, got[v]))
		}
	}
	return describeDiff(pol, diffs)
}

// dscpDiff compares another policy's DSCP classification with the
// intent's DSCP map (what FABCTL-QOS carries).
func dscpDiff(pol string, got *[64]int, sw *intent.Switch) string {
	if sw.Trust != spec.TrustDSCP {
		return describeDiff(pol, []string{"the switch's DSCP map is not fabctl's"})
	}
	var diffs []string
	for d := range got {
		if got[d] != sw.DSCPToTC[d] {
			diffs = append(diffs, fmt.Sprintf("dscp %d -> qos-group %d", d, got[d]))
		}
	}
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("%d more", len(diffs)-8))
	}
	return describeDiff(pol, diffs)
}

func describeDiff(pol string, diffs []string) string {
	if len(diffs) == 0 {
		return ""
	}
	return " (" + pol + ": " + strings.Join(diffs, ", ") + ")"
}

// readForeignInputs puts FactQoSInput: the managed ports bound to an
// input qos policy that is not fabctl's.
func readForeignInputs(st intent.State, r *running, sw *intent.Switch) {
	var out []string
	for _, port := range sw.Ports {
		n, ok := r.interfaces[port.Name]
		if !ok {
			continue
		}
		pol := inputPolicyOf(n)
		if pol == "" || pol == QoSPolicy || pol == CoSPolicy {
			continue
		}
		if !policyNameRE.MatchString(pol) {
			pol = ""
		}
		out = append(out, port.Name+"="+pol)
	}
	if len(out) > 0 {
		sort.Strings(out)
		st[FactQoSInput] = strings.Join(out, ",")
	}
}

// inputPolicyOf is an interface's `service-policy type qos input NAME`
// ("" none).
func inputPolicyOf(n *Node) string {
	for _, c := range n.Children {
		if f := strings.Fields(c.Line); len(f) == 5 && f[0] == "service-policy" && f[2] == "qos" && f[3] == "input" {
			return f[4]
		}
	}
	return ""
}

// foreignInputs is FactQoSInput as a map port -> policy ("" for a name
// fabctl does not send back).
func foreignInputs(live intent.State) map[string]string {
	out := map[string]string{}
	v := live[FactQoSInput]
	if v == "" {
		return out
	}
	for _, e := range strings.Split(v, ",") {
		if port, pol, ok := strings.Cut(e, "="); ok {
			out[port] = pol
		}
	}
	return out
}
