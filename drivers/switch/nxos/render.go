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

// Watchdog limits: `priority-flow-control watch-dog interval` (poll,
// 100..1000 ms, default 100), `priority-flow-control watch-dog
// shutdown-multiplier` (detect = poll x 1..10, default 1) and
// `priority-flow-control auto-restore multiplier` (restore = poll x
// 0..100, default 10).
const (
	DefaultWDPoll     = 100
	DefaultWDShutdown = 1
	DefaultWDRestore  = 10
)

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
	table    [64]int
	def      int   // qos-group of unclassified traffic
	lossless []int // no-drop CoS values
	cos      bool  // a port trusts pcp: FABCTL-QOS-COS is rendered
	poll     int   // watchdog interval, ms
	shut     int   // shutdown multiplier
	restore  int   // auto-restore multiplier
}

// Build checks that the intent can be expressed on NX-OS and returns its
// configuration plan.
func Build(sw *intent.Switch) (*Plan, error) {
	p := &Plan{sw: sw, table: sw.DSCPToTC}
	if sw.Trust != spec.TrustDSCP || sw.Transport == "infiniband" {
		return nil, fmt.Errorf("trust %q: the switch's default classification is DSCP on NX-OS (class-map type qos ... match dscp); ports may trust pcp", sw.Trust)
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
	if w := sw.Watchdog; w.Enabled {
		if w.Action != "drop" {
			return nil, fmt.Errorf("PFC watchdog action %q: NX-OS's watchdog shuts the queue and drops (action drop)", w.Action)
		}
		p.poll = int(w.Poll / time.Millisecond)
		if w.Poll%time.Millisecond != 0 || p.poll < 100 || p.poll > 1000 {
			return nil, fmt.Errorf("PFC watchdog poll %v: NX-OS's watch-dog interval is 100..1000 ms", w.Poll)
		}
		var ok bool
		if p.shut, ok = multiple(w.Detect, w.Poll, 1, 10); !ok {
			return nil, fmt.Errorf("PFC watchdog detect %v: NX-OS detects after poll x shutdown-multiplier 1..10 (poll %v)", w.Detect, w.Poll)
		}
		if p.restore, ok = multiple(w.Restore, w.Poll, 0, 100); !ok {
			return nil, fmt.Errorf("PFC watchdog restore %v: NX-OS restores after poll x auto-restore multiplier 0..100 (poll %v)", w.Restore, w.Poll)
		}
	}
	for _, port := range sw.Ports {
		if port.MTU < 576 || port.MTU > MaxMTU-L2Overhead {
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
		case spec.TrustPCP:
			p.cos = true
		default:
			return nil, fmt.Errorf("port %s: trust %q: NX-OS classifies on dscp (%s) or pcp (%s)", port.Name, port.Trust, QoSPolicy, CoSPolicy)
		}
	}
	return p, nil
}

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
// trusts pcp).
func (p *Plan) CoSLines(cl *clear) []string {
	if !p.cos {
		return nil
	}
	var out []string
	for _, tc := range p.cosGroups() {
		out = append(out, "class-map type qos match-any "+CoSClassPrefix+strconv.Itoa(tc), "  match cos "+strconv.Itoa(tc))
	}
	out = append(out, "policy-map type qos "+CoSPolicy)
	for _, tc := range p.cosGroups() {
		out = append(out, "  class "+CoSClassPrefix+strconv.Itoa(tc), "    set qos-group "+strconv.Itoa(tc))
	}
	if cl != nil {
		for _, tc := range cl.staleTCs {
			if tc != 0 {
				out = append(out, "  no class "+CoSClassPrefix+strconv.Itoa(tc))
			}
		}
		for _, tc := range cl.staleTCs {
			if tc != 0 {
				out = append(out, "no class-map type qos match-any "+CoSClassPrefix+strconv.Itoa(tc))
			}
		}
	}
	return out
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
// the diff's before values; Render starts empty).
type clear struct {
	before    *[64]int          // the live DSCP table (nil: no classification policy)
	beforeDef int               // its default
	staleTCs  []int             // queuing/network-qos classes to remove
	prioOff   map[int]bool      // `no priority level 1`
	bwOff     map[int]bool      // `no bandwidth remaining percent`
	ecnOff    map[int]bool      // `no random-detect`
	pauseOff  map[int]bool      // `no pause pfc-cos N`
	pfcOff    map[string]bool   // ports: `no priority-flow-control mode`
	wdOff     map[string]bool   // ports: `priority-flow-control watch-dog-interval off`
	flowOff   map[string]bool   // ports: `no flowcontrol receive|send`
	qosOff    map[string]string // ports: the input policy attached before, to detach when the trust changes
}

// ClassificationLines are the class-maps and the qos policy.
func (p *Plan) ClassificationLines(cl *clear) []string {
	groups := groupsOf(&p.table, p.def)
	var before map[int][]int
	if cl != nil && cl.before != nil {
		before = groupsOf(cl.before, cl.beforeDef)
	}
	var out []string
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
	var stale []int
	for _, tc := range keys(before) {
		if _, ok := groups[tc]; !ok {
			stale = append(stale, tc)
			out = append(out, "  no class "+ClassMapPrefix+strconv.Itoa(tc))
		}
	}
	if p.def != 0 {
		out = append(out, "  class "+classDefault, "    set qos-group "+strconv.Itoa(p.def))
	} else if cl != nil && cl.before != nil && cl.beforeDef != 0 {
		out = append(out, "  class "+classDefault, "    no set qos-group")
	}
	for _, tc := range stale {
		out = append(out, "no class-map type qos match-any "+ClassMapPrefix+strconv.Itoa(tc))
	}
	return out
}

// QueuingLines are the queuing and network-qos policies and system qos.
func (p *Plan) QueuingLines(cl *clear) []string {
	out := []string{"policy-map type queuing " + QueuingPolicy}
	has0 := false
	for _, tc := range p.sw.TCs {
		has0 = has0 || tc.TC == 0
		out = append(out, "  class type queuing "+queueClass(tc.TC))
		if tc.Strict {
			if cl != nil && cl.bwOff[tc.TC] {
				out = append(out, "    no bandwidth remaining percent")
			}
			out = append(out, "    "+strictLevel)
		} else {
			if cl != nil && cl.prioOff[tc.TC] {
				out = append(out, "    no priority")
			}
			out = append(out, "    bandwidth remaining percent "+strconv.Itoa(tc.Bandwidth))
		}
		if e := tc.ECN; e != nil {
			out = append(out, fmt.Sprintf("    random-detect minimum-threshold %s kbytes maximum-threshold %s kbytes drop-probability %d%s",
				kbytes(e.Min), kbytes(e.Max), int(e.Probability), wredSuffix))
		} else if cl != nil && cl.ecnOff[tc.TC] {
			out = append(out, "    no random-detect")
		}
	}
	if cl != nil {
		for _, tc := range cl.staleTCs {
			out = append(out, "  no class type queuing "+queueClass(tc))
		}
	}
	out = append(out, "policy-map type network-qos "+NetworkPolicy)
	for _, tc := range p.sw.TCs {
		out = append(out, "  class type network-qos "+nqClass(tc.TC))
		if tc.Lossless {
			out = append(out, "    pause pfc-cos "+strconv.Itoa(tc.TC))
		} else if cl != nil && cl.pauseOff[tc.TC] {
			out = append(out, "    no pause pfc-cos "+strconv.Itoa(tc.TC))
		}
		out = append(out, "    mtu "+strconv.Itoa(NetworkMTU))
	}
	if !has0 {
		out = append(out, "  class type network-qos "+nqClass(0), "    mtu "+strconv.Itoa(NetworkMTU))
	}
	if cl != nil {
		for _, tc := range cl.staleTCs {
			if tc != 0 {
				out = append(out, "  no class type network-qos "+nqClass(tc))
			}
		}
	}
	return append(out, "system qos",
		"  service-policy type queuing output "+QueuingPolicy,
		"  service-policy type network-qos "+NetworkPolicy)
}

// WatchdogLines are the global PFC watchdog lines.
func (p *Plan) WatchdogLines(clearAll bool) []string {
	if !p.sw.Watchdog.Enabled {
		if clearAll {
			return []string{"no priority-flow-control watch-dog-interval", "no priority-flow-control watch-dog interval",
				"no priority-flow-control watch-dog shutdown-multiplier", "no priority-flow-control auto-restore multiplier"}
		}
		return nil
	}
	return []string{
		"priority-flow-control watch-dog-interval on",
		"priority-flow-control watch-dog interval " + strconv.Itoa(p.poll),
		"priority-flow-control watch-dog shutdown-multiplier " + strconv.Itoa(p.shut),
		"priority-flow-control auto-restore multiplier " + strconv.Itoa(p.restore),
	}
}

// InterfaceLines is one managed port's section.
func (p *Plan) InterfaceLines(port intent.Port, cl *clear) []string {
	out := []string{"interface " + port.Name}
	switch {
	case len(port.PFC) > 0:
		out = append(out, "  priority-flow-control mode on")
	case cl != nil && cl.pfcOff[port.Name]:
		out = append(out, "  no priority-flow-control mode")
	}
	switch {
	case port.Watchdog:
		out = append(out, "  priority-flow-control watch-dog-interval on")
	case p.sw.Watchdog.Enabled, cl != nil && cl.wdOff[port.Name]:
		// A global `watch-dog-interval on` covers every port without an
		// interface setting (and fabctl leaves a global line it no longer
		// renders alone): turn it off where the intent has no watchdog.
		out = append(out, "  priority-flow-control watch-dog-interval off")
	}
	out = append(out, "  mtu "+strconv.Itoa(port.MTU))
	if port.Pause {
		out = append(out, "  flowcontrol receive on", "  flowcontrol send on")
	} else if cl != nil && cl.flowOff[port.Name] {
		out = append(out, "  no flowcontrol receive", "  no flowcontrol send")
	}
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
	lines = append(lines, p.ClassificationLines(nil)...)
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
