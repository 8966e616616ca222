package nxos

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Names of the objects fabctl owns on the switch.
const (
	QoSPolicy      = "FABCTL-QOS"       // policy-map type qos (DSCP -> qos-group), input on the managed ports that trust DSCP
	CoSPolicy      = "FABCTL-QOS-COS"   // policy-map type qos (CoS -> qos-group), input on the managed ports that trust PCP
	CoSClassPrefix = "FABCTL-COS"       // class-map type qos match-any FABCTL-COS<n>
	QueuingPolicy  = "FABCTL-QUEUING"   // policy-map type queuing, system qos output
	NetworkPolicy  = "FABCTL-NQOS"      // policy-map type network-qos, system qos
	ClassMapPrefix = "FABCTL-TC"        // class-map type qos match-any FABCTL-TC<n>
	classDefault   = "class-default"    // unclassified traffic: qos-group 0 unless set
	queuePrefix    = "c-out-8q-q"       // system queuing classes of the 8-queue template
	nqPrefix       = "c-8q-nq"          // system network-qos classes
	wredSuffix     = " weight 0 ecn"    // WRED in mark-only mode: without `ecn` it drops RoCE
	strictLevel    = "priority level 1" // strict priority (CNP)
)

// KByte is NX-OS's "kbytes" unit for random-detect thresholds as fabctl
// renders and reads it (1000 bytes, so 150 KB renders as Cisco's AI/ML
// blueprint writes it: "150 kbytes"). The ECN fields carry a 5 %
// tolerance, which also covers a platform that counts 1024.
const KByte = 1000

// MTU. NX-OS has two MTUs on the path of a frame:
//
//   - the interface `mtu` (576..9216, default 1500) is, on the routed
//     ports fabctl configures, the L3 MTU: the largest IP packet, the
//     number fabctl's intent carries, so it is rendered and read back
//     unchanged (an IP MTU of 9000 is `mtu 9000`);
//   - the network-qos class `mtu` (1500..9216) is the largest frame the
//     class's queue accepts, L2 header included. fabctl sets it to the
//     platform maximum, NetworkMTU = 9216, in every class it configures,
//     so the queue never limits a port: an IP MTU of 9000 needs frames of
//     9000 + 14 (Ethernet) + 4 (802.1Q) + 4 (FCS) = 9022 bytes.
//
// The intent's IP MTU must therefore be at most 9216 - 22 = 9194 for the
// largest frames to pass the network-qos MTU.
const (
	MaxMTU     = 9216
	DefaultMTU = 1500
	NetworkMTU = 9216
	L2Overhead = 22
)

// The PFC watchdog: fabctl renders only the switch
// `priority-flow-control watch-dog-interval on` (global and per
// interface; testdata/vendor/nxos/cisco-roce-enable.cfg:11,56). No Cisco
// text reached shows the tuning tokens (`priority-flow-control watch-dog
// interval`, `... watch-dog shutdown-multiplier`, `priority-flow-control
// auto-restore multiplier`; cisco-pfc-guide.txt), so the watchdog's
// poll, detect and restore times are not expressible (Unexpressible);
// its action is drop (Cisco: "all outgoing packets are dropped",
// cisco-pfc-guide.txt:19-20).

func queueClass(tc int) string {
	if tc == 0 {
		return queuePrefix + "-default"
	}
	return queuePrefix + strconv.Itoa(tc)
}

func nqClass(tc int) string {
	if tc == 0 {
		return nqPrefix + "-default"
	}
	return nqPrefix + strconv.Itoa(tc)
}

// Plan is the NX-OS configuration fabctl manages for one switch.
type Plan struct {
	sw       *intent.Switch
	l2       map[string]bool // layer-2 ports (l2mtu.go), nil when unknown
	table    [64]int
	def      int   // qos-group of unclassified traffic
	lossless []int // no-drop CoS values
	cos      bool  // a port trusts pcp: FABCTL-QOS-COS is rendered
	// mtuOnly: a Nexus 9800 (Cisco Silicon One, siliconone.go): an
	// interface block carries its MTU and nothing of the QoS forms.
	mtuOnly bool
	// foreign: managed ports bound to an input qos policy that is not
	// fabctl's (FactQoSInput, foreign.go): port -> policy.
	foreign map[string]string
	// carry: the running lines of the queues the spec leaves unmanaged,
	// copied into the queuing and network-qos policies (carry.go).
	carry carried
}

// Build checks that the intent can be expressed on NX-OS and returns its
// configuration plan.
func Build(sw *intent.Switch) (*Plan, error) {
	p := &Plan{sw: sw, table: sw.DSCPToTC}
	if sw.Trust != spec.TrustDSCP && sw.Trust != spec.TrustPCP || sw.Transport == "infiniband" {
		return nil, fmt.Errorf("trust %q: NX-OS classifies on dscp (%s) or pcp (%s)", sw.Trust, QoSPolicy, CoSPolicy)
	}
	p.def = intent.DSCPDefault(&p.table)
	for _, tc := range p.table {
		if tc < 0 || tc > 7 {
			return nil, fmt.Errorf("DSCP maps to traffic class %d: NX-OS has qos-groups 0-7", tc)
		}
	}
	for _, tc := range sw.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			return nil, fmt.Errorf("traffic class %d: NX-OS has qos-groups 0-7", tc.TC)
		}
		if !tc.Strict && (tc.Bandwidth < 0 || tc.Bandwidth > 100) {
			return nil, fmt.Errorf("traffic class %d: bandwidth remaining percent %d outside NX-OS's 0..100", tc.TC, tc.Bandwidth)
		}
		if e := tc.ECN; e != nil {
			if e.Probability != math.Trunc(e.Probability) || e.Probability < 0 || e.Probability > 100 {
				return nil, fmt.Errorf("traffic class %d: ECN probability %v: NX-OS drop-probability is a whole percent 0..100", tc.TC, e.Probability)
			}
			if e.Min < KByte || e.Max < e.Min {
				return nil, fmt.Errorf("traffic class %d: ECN thresholds %d..%d bytes: NX-OS needs 1 kbyte <= minimum <= maximum", tc.TC, e.Min, e.Max)
			}
		}
		if tc.Lossless {
			p.lossless = append(p.lossless, tc.TC)
		}
	}
	sort.Ints(p.lossless)
	if w := sw.Watchdog; w.Enabled && w.Action != "drop" {
		// Cisco: on a stuck no-drop queue "all outgoing packets are
		// dropped" (cisco-pfc-guide.txt:19-20); there is no other action.
		return nil, fmt.Errorf("PFC watchdog action %q: NX-OS's watchdog shuts the queue and drops (action drop)", w.Action)
	}
	for _, port := range sw.Ports {
		// A port whose MTU is only a floor (the spec sets none) carries
		// the device's own MTU when the device runs more (plan's
		// liveFloors), e.g. the `mtu 9216` of Cisco's own examples
		// (cisco-mtu-l2.txt) and Microsoft's Azure Local configuration
		// (azure-local-tor-qos.cfg): fabctl does not set it, a step that
		// rewrites the interface re-sends what runs. A floor from the
		// hosts above the range is lint's finding (the PortMTU limit,
		// validate --static).
		carried := port.MTUFloor && port.MTU <= JumboMTU
		if port.MTU < 576 || port.MTU > MaxMTU-L2Overhead && !carried {
			return nil, fmt.Errorf("port %s: mtu %d outside 576..%d (NX-OS interface mtu is the IP MTU; frames must fit the network-qos mtu %d)", port.Name, port.MTU, MaxMTU-L2Overhead, NetworkMTU)
		}
		// Per port, NX-OS turns PFC on or off (priority-flow-control
		// mode) and the watchdog; which priorities are no-drop is the
		// system network-qos policy's, one set for every port.
		if len(port.PFC) > 0 && ints(port.PFC) != ints(p.lossless) {
			return nil, fmt.Errorf("port %s: PFC priorities %s differ from the no-drop classes %s; NX-OS's no-drop classes are system-wide (policy-map type network-qos): a port can only turn PFC on (these priorities) or off (pfc = [])", port.Name, ints(port.PFC), ints(p.lossless))
		}
		switch port.Trust {
		case spec.TrustDSCP:
			if sw.Trust == spec.TrustPCP {
				// The DSCP map is the switch's (FABCTL-QOS), and a
				// switch trusting pcp has none (intent.Switch.Flatten).
				return nil, fmt.Errorf("port %s: trust dscp on a switch that trusts pcp: NX-OS's DSCP classification (%s) carries the switch's DSCP map, which a pcp switch does not have; set the switch's trust to dscp and the pcp ports' trust to pcp", port.Name, QoSPolicy)
			}
		case spec.TrustPCP:
			p.cos = true
		default:
			return nil, fmt.Errorf("port %s: trust %q: NX-OS classifies on dscp (%s) or pcp (%s)", port.Name, port.Trust, QoSPolicy, CoSPolicy)
		}
	}
	return p, nil
}

// dscp: the switch classifies on DSCP (FABCTL-QOS is rendered). A switch
// whose trust is pcp classifies every managed port by CoS
// (FABCTL-QOS-COS) and has no DSCP map (Build refuses a dscp port there).
func (p *Plan) dscp() bool { return p.sw.Trust == spec.TrustDSCP }

// inputPolicy is the classification policy of a port: one policy per
// distinct port trust, the QoS shape NX-OS sets per port with a policy
// (PFC on/off and the watchdog are interface lines).
func inputPolicy(port intent.Port) string {
	if port.Trust == spec.TrustPCP {
		return CoSPolicy
	}
	return QoSPolicy
}

// cosGroups are the CoS values FABCTL-QOS-COS classifies: PCP n is
// priority n, which is traffic class n (as SONiC's DOT1P_TO_TC_MAP), for
// the intent's traffic classes other than 0; every other CoS is
// class-default's qos-group 0.
func (p *Plan) cosGroups() []int {
	var out []int
	for _, tc := range p.sw.TCs {
		if tc.TC != 0 {
			out = append(out, tc.TC)
		}
	}
	sort.Ints(out)
	return out
}

// CoSLines are the CoS class-maps and FABCTL-QOS-COS (only when a port
// trusts pcp). A class the intent drops is removed by rebuilding the
// policy (rebuildQoS), never with `no class` (no vendor source).
func (p *Plan) CoSLines(cl *clear) []string {
	if !p.cos {
		return nil
	}
	var stale []int
	if cl != nil && cl.cosLive {
		for _, tc := range cl.staleTCs {
			if tc != 0 {
				stale = append(stale, tc)
			}
		}
	}
	var out, names []string
	for _, tc := range stale {
		names = append(names, CoSClassPrefix+strconv.Itoa(tc))
	}
	out, tail := cl.rebuildQoS(CoSPolicy, names, func(t string) bool { return strings.HasPrefix(t, "pcp") })
	for _, tc := range p.cosGroups() {
		out = append(out, "class-map type qos match-any "+CoSClassPrefix+strconv.Itoa(tc), "  match cos "+strconv.Itoa(tc))
	}
	out = append(out, "policy-map type qos "+CoSPolicy)
	for _, tc := range p.cosGroups() {
		out = append(out, "  class "+CoSClassPrefix+strconv.Itoa(tc), "    set qos-group "+strconv.Itoa(tc))
	}
	out = append(out, "  class "+classDefault, "    set qos-group 0")
	return append(out, tail...)
}

// rebuildQoS removes a classification policy so it can be written anew
// without the classes in stale, using only documented removal forms
// (cisco-roce-enable.cfg:66,75-76): every managed port that has the policy
// (live trust matching attached) is detached first and re-attached after
// (tail). With no stale class it returns nothing.
func (cl *clear) rebuildQoS(policy string, stale []string, attached func(trust string) bool) (head, tail []string) {
	if cl == nil || len(stale) == 0 {
		return nil, nil
	}
	var ports []string
	for _, name := range cl.portOrder {
		if _, other := cl.foreign[name]; !other && attached(cl.liveTrust[name]) {
			ports = append(ports, name)
		}
	}
	for _, name := range ports {
		head = append(head, "interface "+name, "  no service-policy type qos input "+policy)
	}
	head = append(head, "no policy-map type qos "+policy)
	for _, c := range stale {
		head = append(head, "no class-map type qos match-any "+c)
	}
	for _, name := range ports {
		tail = append(tail, "interface "+name, "  service-policy type qos input "+policy)
		cl.detached[name] = true
	}
	return head, tail
}

func multiple(d, unit time.Duration, lo, hi int) (int, bool) {
	if unit <= 0 || d%unit != 0 {
		return 0, false
	}
	n := int(d / unit)
	return n, n >= lo && n <= hi
}

// groups returns the DSCP values per qos-group other than the default.
func groupsOf(table *[64]int, def int) map[int][]int {
	out := map[int][]int{}
	for d, tc := range table {
		if tc != def {
			out[tc] = append(out[tc], d)
		}
	}
	return out
}

// rangeList renders values as NX-OS lists them: "24-31,48".
func rangeList(v []int) string {
	s := sorted(v)
	var parts []string
	for i := 0; i < len(s); i++ {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(s[i])+"-"+strconv.Itoa(s[j]))
		} else {
			parts = append(parts, strconv.Itoa(s[i]))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// kbytes renders a threshold in kbytes, rounded to the nearest.
func kbytes(b spec.Bytes) string {
	return strconv.FormatInt(int64(math.Round(float64(b)/KByte)), 10)
}

// clear says what a change must explicitly undo (Changes knows it from
// the diff's before values; Render starts empty). NX-OS negations fabctl
// sends are only the documented ones (testdata/vendor/nxos/shapes.txt);
// a setting that would need an undocumented one is removed by rebuilding
// its policy with `no policy-map ...` / `no class-map ...` (documented,
// cisco-roce-enable.cfg:73-77) and writing it anew.
type clear struct {
	before    *[64]int          // the live DSCP table (nil: no classification policy)
	beforeDef int               // its default
	staleTCs  []int             // traffic classes the intent dropped
	cosLive   bool              // FABCTL-QOS-COS is on the switch (a port reads pcp)
	rebuildQ  bool              // the queuing policy holds what only its removal clears
	rebuildNQ bool              // the network-qos policy holds a no-drop class the intent dropped
	ownQ      string            // FactOwnQueuing: fabctl's queuing policy attached, present or absent ("")
	ownNQ     string            // FactOwnNetwork: likewise for network-qos
	pfcOff    map[string]bool   // ports: `no priority-flow-control mode on`
	wdOff     map[string]bool   // ports: `no priority-flow-control watch-dog-interval on`
	qosOff    map[string]string // ports: the input policy attached before, to detach when the trust changes
	liveTrust map[string]string // managed ports: the trust the switch has now (dscp, pcp..., none)
	portOrder []string          // managed ports in intent order
	detached  map[string]bool   // ports a policy rebuild detached (and re-attached)
	foreign   map[string]string // managed ports bound to another input qos policy (Plan.foreign)
}

// ClassificationLines are the class-maps and the qos policy, which
// always ends with class-default -> set qos-group <default> as Cisco's
// recipe writes it (cisco-roce-enable.cfg:29-30). DSCP values that move
// to another class leave their old one with `no match dscp` (Cisco NX-OS
// command reference, cisco-cmdref-qos.txt); a class the intent drops is
// removed by rebuilding the policy (rebuildQoS).
func (p *Plan) ClassificationLines(cl *clear) []string {
	groups := groupsOf(&p.table, p.def)
	var before map[int][]int
	if cl != nil && cl.before != nil {
		before = groupsOf(cl.before, cl.beforeDef)
	}
	var stale []string
	for _, tc := range keys(before) {
		if _, ok := groups[tc]; !ok {
			stale = append(stale, ClassMapPrefix+strconv.Itoa(tc))
		}
	}
	out, tail := cl.rebuildQoS(QoSPolicy, stale, func(t string) bool { return t == "dscp" })
	for _, tc := range keys(groups) {
		out = append(out, "class-map type qos match-any "+ClassMapPrefix+strconv.Itoa(tc))
		var gone []int
		for _, d := range before[tc] {
			if p.table[d] != tc {
				gone = append(gone, d)
			}
		}
		if len(gone) > 0 {
			out = append(out, "  no match dscp "+rangeList(gone))
		}
		out = append(out, "  match dscp "+rangeList(groups[tc]))
	}
	out = append(out, "policy-map type qos "+QoSPolicy)
	for _, tc := range keys(groups) {
		out = append(out, "  class "+ClassMapPrefix+strconv.Itoa(tc), "    set qos-group "+strconv.Itoa(tc))
	}
	out = append(out, "  class "+classDefault, "    set qos-group "+strconv.Itoa(p.def))
	return append(out, tail...)
}

// ClassificationOffLines remove the DSCP classification a switch that
// now trusts pcp no longer has: the policy, then its class-maps (the
// removal forms of cisco-roce-enable.cfg:73,76). The ports bound to it
// are moved to FABCTL-QOS-COS first (changes: every managed port's
// section precedes these lines in the step); nothing when the switch had
// no DSCP classification.
func (p *Plan) ClassificationOffLines(cl *clear) []string {
	if cl == nil || cl.before == nil {
		return nil
	}
	out := []string{"no policy-map type qos " + QoSPolicy}
	for _, tc := range keys(groupsOf(cl.before, cl.beforeDef)) {
		out = append(out, "no class-map type qos match-any "+ClassMapPrefix+strconv.Itoa(tc))
	}
	return out
}

// QueuingLines are the queuing and network-qos policies and system qos.
// The queuing policy lists every class of the 8-queue template; a class
// the intent does not use gets `bandwidth remaining percent 0`, as Cisco's
// recipe and Microsoft's guide write it (cisco-roce-enable.cfg:34-47,
// microsoft-azure-local-n9k.cfg:33-42); a queue the spec leaves unmanaged
// keeps the lines the device runs for it (carry.go). What only an undocumented `no`
// form could clear (a class's priority, bandwidth or random-detect, a
// no-drop class) is cleared by detaching the policy from system qos and
// removing it first (cisco-roce-enable.cfg:70-74).
func (p *Plan) QueuingLines(cl *clear) []string {
	var out []string
	if cl != nil && cl.rebuildQ {
		out = append(out, rebuildHead(cl.ownQ, "queuing", QueuingPolicy)...)
	}
	out = append(out, "policy-map type queuing "+QueuingPolicy)
	byTC := map[int]intent.TC{}
	for _, tc := range p.sw.TCs {
		byTC[tc.TC] = tc
	}
	for q := 0; q < 8; q++ {
		out = append(out, "  class type queuing "+queueClass(q))
		tc, ok := byTC[q]
		if lines, kept := p.carry.queuing[q]; !ok && kept {
			// Unmanaged: the device's own lines, verbatim (carry.go).
			for _, l := range lines {
				out = append(out, "    "+l)
			}
			continue
		}
		switch {
		case !ok:
			out = append(out, "    bandwidth remaining percent 0")
			continue
		case tc.Strict:
			out = append(out, "    "+strictLevel)
		default:
			out = append(out, "    bandwidth remaining percent "+strconv.Itoa(tc.Bandwidth))
		}
		if e := tc.ECN; e != nil {
			out = append(out, fmt.Sprintf("    random-detect minimum-threshold %s kbytes maximum-threshold %s kbytes drop-probability %d%s",
				kbytes(e.Min), kbytes(e.Max), int(e.Probability), wredSuffix))
		}
	}
	if cl != nil && cl.rebuildNQ {
		out = append(out, rebuildHead(cl.ownNQ, "network-qos", NetworkPolicy)...)
	}
	out = append(out, "policy-map type network-qos "+NetworkPolicy)
	has0 := false
	for _, tc := range p.sw.TCs {
		has0 = has0 || tc.TC == 0
	}
	if _, kept := p.carry.network[0]; !has0 && !kept {
		out = append(out, "  class type network-qos "+nqClass(0), "    mtu "+strconv.Itoa(NetworkMTU))
	}
	for _, tc := range p.sw.TCs {
		out = append(out, "  class type network-qos "+nqClass(tc.TC))
		if tc.Lossless {
			out = append(out, "    pause pfc-cos "+strconv.Itoa(tc.TC))
		}
		out = append(out, "    mtu "+strconv.Itoa(NetworkMTU))
	}
	for q := 0; q < 8; q++ {
		// Unmanaged network-qos classes: the device's own lines (carry.go).
		if lines, kept := p.carry.network[q]; kept {
			out = append(out, "  class type network-qos "+nqClass(q))
			for _, l := range lines {
				out = append(out, "    "+l)
			}
		}
	}
	return append(out, "system qos",
		"  service-policy type queuing output "+QueuingPolicy,
		"  service-policy type network-qos "+NetworkPolicy)
}

// WatchdogLines are the global PFC watchdog lines: the switch only
// (cisco-roce-enable.cfg:11), removed with the full positive line (l.68).
func (p *Plan) WatchdogLines(clearAll bool) []string {
	if !p.sw.Watchdog.Enabled {
		if clearAll {
			return []string{"no priority-flow-control watch-dog-interval on"}
		}
		return nil
	}
	return []string{"priority-flow-control watch-dog-interval on"}
}

// InterfaceLines is one managed port's section (cisco-roce-enable.cfg:54-58;
// removal forms l.64-66).
func (p *Plan) InterfaceLines(port intent.Port, cl *clear) []string {
	out := []string{"interface " + port.Name}
	mtu := port.MTU
	if p.l2[port.Name] {
		mtu = l2MTU(mtu) // default or system jumbo MTU only (l2mtu.go)
	}
	if p.mtuOnly {
		return append(out, "  mtu "+strconv.Itoa(mtu))
	}
	switch {
	case len(port.PFC) > 0:
		out = append(out, "  priority-flow-control mode on")
	case cl != nil && cl.pfcOff[port.Name]:
		out = append(out, "  no priority-flow-control mode on")
	}
	switch {
	case port.Watchdog:
		out = append(out, "  priority-flow-control watch-dog-interval on")
	case cl != nil && cl.wdOff[port.Name]:
		out = append(out, "  no priority-flow-control watch-dog-interval on")
	}
	out = append(out, "  mtu "+strconv.Itoa(mtu))
	if cl != nil && cl.qosOff[port.Name] != "" && cl.qosOff[port.Name] != inputPolicy(port) {
		// Detach first: one input qos policy per interface.
		out = append(out, "  no service-policy type qos input "+cl.qosOff[port.Name])
	}
	return append(out, "  service-policy type qos input "+inputPolicy(port))
}

// Config renders the managed configuration as NX-OS CLI in
// running-config layout.
func (p *Plan) Config() string {
	var lines []string
	if p.dscp() {
		lines = append(lines, p.ClassificationLines(nil)...)
	}
	lines = append(lines, p.CoSLines(nil)...)
	lines = append(lines, p.QueuingLines(nil)...)
	lines = append(lines, p.WatchdogLines(false)...)
	for _, port := range p.sw.Ports {
		lines = append(lines, "")
		lines = append(lines, p.InterfaceLines(port, nil)...)
	}
	var notes []string
	if p.sw.Headroom > 0 {
		notes = append(notes, fmt.Sprintf("! buffer/headroom %d B per lossless priority: not rendered, NX-OS sizes PFC headroom itself (pause buffer-size is optional below 100 m)", p.sw.Headroom))
	}
	if p.sw.Watchdog.Enabled {
		notes = append(notes, fmt.Sprintf("! PFC watchdog poll %v, detect %v, restore %v: not rendered, no Cisco source shows the NX-OS watchdog timer commands (NX-OS keeps its own)", p.sw.Watchdog.Poll, p.sw.Watchdog.Detect, p.sw.Watchdog.Restore))
		var off []string
		for _, port := range p.sw.Ports {
			if !port.Watchdog {
				off = append(off, port.Name)
			}
		}
		if len(off) > 0 {
			notes = append(notes, "! PFC watchdog off on "+strings.Join(off, ", ")+": not rendered, the switch's watch-dog-interval on covers every port (no documented per-port off)")
		}
	}
	for _, port := range p.sw.Ports {
		if port.Pause {
			notes = append(notes, "! link-level pause (flowcontrol): not rendered, no vendor source for NX-OS flowcontrol")
			break
		}
	}
	for _, port := range p.sw.Ports {
		if port.CableLength > 0 {
			notes = append(notes, "! cable lengths: not rendered, NX-OS has no cable-length setting (headroom is platform-computed)")
			break
		}
	}
	if len(notes) > 0 {
		lines = append(append(lines, ""), notes...)
	}
	return strings.Join(lines, "\n") + "\n"
}

func keys(m map[int][]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sorted(v []int) []int {
	s := append([]int(nil), v...)
	sort.Ints(s)
	return s
}

// ints is the canonical state form of a priority set ("3,4").
func ints(v []int) string {
	s := sorted(v)
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Itoa(x)
	}
	return strings.Join(out, ",")
}
