package nxos

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Queues the spec leaves unmanaged. fabctl writes its own queuing and
// network-qos policies (FABCTL-QUEUING, FABCTL-NQOS), each listing the
// classes of the 8-queue template, and attaches them to system qos in
// place of the device's. A spec may leave a traffic class unmanaged
// (`unmanaged = { "tc/7" = "..." }`: Microsoft's Azure Local queue 7,
// `bandwidth percent 1`, azure-local-tor-qos.cfg): the desired state has
// no tc/7 paths, so the diff never names them, but a rewritten policy
// without the device's lines for that queue would change it (the
// apply's unmanaged verification then refuses and restores the switch).
//
// So the read records, as device facts, the lines the running policies
// (those attached to system qos) have for every queue the intent does
// not manage, and a queuing step copies them verbatim into fabctl's
// policies in place of `bandwidth remaining percent 0`: the device ends
// up running, for that queue, the very lines it ran before. A queue the
// diff names (a class the spec dropped without leaving it unmanaged) is
// not carried: the plan removes it. The driver composes no line for a
// carried queue; it copies only lines whose form a vendor text shows in
// the same mode, and refuses the step, saying why, when a carried queue
// has any other line or is no-drop:
//
//   - queuing class: `bandwidth remaining percent <0-100>`
//     (cisco-roce-enable.cfg:41), `priority level 1` (l.50), `random-detect
//     minimum-threshold N kbytes maximum-threshold N kbytes drop-probability
//     <0-100> weight 0 ecn` (l.42), `bandwidth percent <0-100>`: Cisco's
//     configuration guide names a queue's `bandwidth` as the minimum data
//     rate of a queue (cisco-qos-guide-classification.txt:29, (3)), in the
//     form Azure Local's reference configuration runs
//     (azure-local-tor-qos.cfg:37, microsoft-azure-local-n9k.cfg:44); the
//     line copied is the device's own running-config line;
//   - network-qos class: `mtu <1500-9216>` (cisco-roce-enable.cfg:14).
//     A `pause pfc-cos` line is not carried: NX-OS's no-drop set is the
//     system network-qos policy's, one for every port, and each managed
//     port's PFC reads it (read.go readPorts), so a no-drop queue the spec
//     does not manage would make the ports' PFC differ from the spec's.

// Facts: the running queuing (FactCarryQueuing+"N") and network-qos
// (FactCarryNetwork+"N") class lines of queue N (0: the default queue),
// one line per "\n", as the read found them for a queue the switch
// intent has no traffic class for. A queuing class holding only
// `bandwidth remaining percent 0` (what fabctl writes for an unused
// queue) is not recorded.
const (
	FactCarryQueuing = drivers.PathFacts + "queuing-class/"
	FactCarryNetwork = drivers.PathFacts + "network-qos-class/"
)

// Facts: which of fabctl's own queuing and network-qos policies the
// switch has, and whether system qos runs it ("attached"), has it but
// runs another or none ("present"), or lacks it ("absent"). A rebuild
// (QueuingLines, rebuildQ/rebuildNQ) detaches fabctl's policy from system
// qos only where system qos runs it: NX-OS refuses to detach a policy
// that is not attached, and a switch running the vendor's policy (Azure
// Local's QOS_EGRESS_PORT) has none of fabctl's to detach or remove.
const (
	FactOwnQueuing = drivers.PathFacts + "policy/" + QueuingPolicy
	FactOwnNetwork = drivers.PathFacts + "policy/" + NetworkPolicy
)

// readOwnPolicies puts FactOwnQueuing and FactOwnNetwork.
func readOwnPolicies(st intent.State, r *running) {
	for _, o := range []struct{ fact, kind, name, attached string }{
		{FactOwnQueuing, "queuing", QueuingPolicy, r.sysQueuing},
		{FactOwnNetwork, "network-qos", NetworkPolicy, r.sysNQoS},
	} {
		switch {
		case o.attached == o.name:
			st[o.fact] = "attached"
		case r.policies[o.kind][o.name] != nil:
			st[o.fact] = "present"
		default:
			st[o.fact] = "absent"
		}
	}
}

// rebuildHead are the lines that remove fabctl's policy of a kind before
// it is written anew: detach it from system qos where system qos runs it,
// remove it where the switch has it; nothing when it has none (state is
// the FactOwn* value: "attached", "present" or "absent"; without a read,
// "", it is taken as attached, as fabctl's apply leaves it).
func rebuildHead(state, kind, name string) []string {
	switch state {
	case "present":
		return []string{"no policy-map type " + kind + " " + name}
	case "absent":
		return nil
	}
	return []string{"system qos", "  no service-policy type " + kindOutput(kind) + name, "no policy-map type " + kind + " " + name}
}

// kindOutput is how system qos's service-policy line names the kind:
// `type queuing output` (cisco-roce-enable.cfg:52, its removal l.70),
// `type network-qos` (l.53, l.71).
func kindOutput(kind string) string {
	if kind == "queuing" {
		return "queuing output "
	}
	return kind + " "
}

var (
	carryQueuingRE = []*regexp.Regexp{
		regexp.MustCompile(`^bandwidth remaining percent (100|[1-9]?[0-9])$`),
		regexp.MustCompile(`^bandwidth percent (100|[1-9]?[0-9])$`),
		regexp.MustCompile(`^priority level 1$`),
		regexp.MustCompile(`^random-detect minimum-threshold [0-9]{1,7} kbytes maximum-threshold [0-9]{1,7} kbytes drop-probability (100|[1-9]?[0-9]) weight 0 ecn$`),
	}
	carryMTURE = regexp.MustCompile(`^mtu ([0-9]{4})$`)
)

// readCarried puts the carried-queue facts for the queues sw has no
// traffic class for.
func readCarried(st intent.State, r *running, sw *intent.Switch) {
	managed := map[int]bool{}
	for _, tc := range sw.TCs {
		managed[tc.TC] = true
	}
	queuing := r.policies["queuing"][r.sysQueuing]
	nqos := r.policies["network-qos"][r.sysNQoS]
	for q := 0; q < 8; q++ {
		if managed[q] {
			continue
		}
		if c := classOf(queuing, queueClass(q)); c != nil && len(c.Children) > 0 && !unusedQueue(c) {
			st[FactCarryQueuing+strconv.Itoa(q)] = childLines(c)
		}
		if c := classOf(nqos, nqClass(q)); c != nil && len(c.Children) > 0 {
			st[FactCarryNetwork+strconv.Itoa(q)] = childLines(c)
		}
	}
}

// childLines are a class's lines, whitespace-normalised, one per "\n".
func childLines(c *Node) string {
	var out []string
	for _, a := range c.Children {
		out = append(out, strings.Join(strings.Fields(a.Line), " "))
	}
	return strings.Join(out, "\n")
}

// carried is what a queuing step copies: queue -> lines, for queuing
// and network-qos classes.
type carried struct {
	queuing, network map[int][]string
}

// carriedQueues reads the facts of live for the queues the intent does
// not manage and the diff does not name, checking every line's form; an
// error says which line of which queue cannot be carried and why.
func carriedQueues(sw *intent.Switch, diff []intent.AttrChange, live intent.State) (carried, error) {
	out := carried{queuing: map[int][]string{}, network: map[int][]string{}}
	managed := map[int]bool{}
	for _, tc := range sw.TCs {
		managed[tc.TC] = true
	}
	for _, c := range diff {
		if parts := strings.Split(c.Path, "/"); len(parts) > 2 && parts[0] == "tc" {
			if q, err := strconv.Atoi(parts[1]); err == nil {
				managed[q] = true // named by the plan: removed, not carried
			}
		}
	}
	var errs []string
	for q := 0; q < 8; q++ {
		if managed[q] {
			continue
		}
		if v, ok := live[FactCarryQueuing+strconv.Itoa(q)]; ok {
			lines := strings.Split(v, "\n")
			for _, l := range lines {
				if !matchAny(carryQueuingRE, l) {
					errs = append(errs, fmt.Sprintf("queue %d (%s) runs %q, a line fabctl does not copy (no vendor text shows it in a queuing class)", q, queueClass(q), l))
				}
			}
			out.queuing[q] = lines
		}
		if v, ok := live[FactCarryNetwork+strconv.Itoa(q)]; ok {
			lines := strings.Split(v, "\n")
			for _, l := range lines {
				switch m := carryMTURE.FindStringSubmatch(l); {
				case m != nil && atoi(m[1], 0) >= 1500 && atoi(m[1], 0) <= NetworkMTU:
				case strings.HasPrefix(l, "pause pfc-cos"):
					errs = append(errs, fmt.Sprintf("queue %d is no-drop on the switch (%s: %q): NX-OS's no-drop set is system-wide and every managed port's PFC reads it, so fabctl cannot keep it while writing %s; manage the class in the spec", q, nqClass(q), l, NetworkPolicy))
				default:
					errs = append(errs, fmt.Sprintf("queue %d (%s) runs %q, a line fabctl does not copy (no vendor text shows it in a network-qos class)", q, nqClass(q), l))
				}
			}
			out.network[q] = lines
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return out, fmt.Errorf("the queuing step rewrites %s and %s, and the spec leaves queues unmanaged that it cannot carry over as they run: %s", QueuingPolicy, NetworkPolicy, strings.Join(errs, "; "))
	}
	return out, nil
}

func matchAny(res []*regexp.Regexp, l string) bool {
	for _, re := range res {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
