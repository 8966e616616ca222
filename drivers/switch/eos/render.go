package eos

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

// ProfileName is the `qos profile` fabctl owns for the switch's default
// port QoS (the switch's trust, PFC on the lossless classes, the
// fabric's watchdog) and applies to its ports with `service-profile`.
// Ports whose trust, PFC priorities or watchdog differ (host-facing
// ports without PFC, a port trusting CoS) get a profile of their own,
// named by how they differ (profileName): one profile per distinct port
// QoS shape, the same tx-queues in each. FABCTL is always rendered: it
// carries the switch-level trust and lossless classes fabctl reads back.
const ProfileName = "FABCTL"

// KByte is EOS's "kbytes" unit for random-detect thresholds as fabctl
// renders and reads it (1000 bytes). The ECN fields carry a 5 %
// tolerance, which also covers a platform that counts 1024.
const KByte = 1000

// MTU: EOS's interface `mtu` is the L3 (IP) MTU, the number fabctl's
// intent carries, so it is rendered and read back unchanged (no L2
// overhead, unlike SONiC's PORT mtu). EOS accepts 68..9214 (AVD's
// p2p_uplinks_mtu examples use 9214); the default is 1500.
const (
	MaxMTU     = 9214
	DefaultMTU = 1500
)

// No EOS default DSCP → traffic-class table of a hardware platform is in
// any vendor source (audit E1; docs/vendor-sources.md): fabctl writes the
// whole map, all 64 code points, and reads back the map the switch runs
// from `show running-config all` (ReadConfig), where a code point equal
// to the built-in map is printed too.

// shape is the port QoS a qos profile carries.
type shape struct {
	trust    string
	pfc      []int
	watchdog bool
}

func (s shape) equal(o shape) bool {
	return s.trust == o.trust && ints(s.pfc) == ints(o.pfc) && s.watchdog == o.watchdog
}

// profileRef is one qos profile fabctl renders.
type profileRef struct {
	name string
	shape
}

// Plan is the EOS configuration fabctl manages for one switch.
type Plan struct {
	sw       *intent.Switch
	dscp     bool
	table    [64]int
	lossless []int
	profiles []*profileRef          // FABCTL first, then the others by name
	byPort   map[string]*profileRef // managed port -> its profile
	// queue is the transmit-queue sub-mode keyword of the switch's chip
	// family (QueueSand, QueueStrata; family.go), "" when the family is
	// unknown: no queue lines are rendered then (Unexpressible lists
	// the queue settings).
	queue string
	// cos: the switch or a port trusts PCP, so the global CoS map is
	// written (CoSLines).
	cos bool
	// ifTrust: managed ports whose interface has a `qos trust` line of
	// its own (FactInterfaceTrust): their sections write it too.
	ifTrust map[string]bool
}

// profileName names the profile of a port QoS shape: FABCTL for the
// switch's default shape, else FABCTL- and how the shape differs, so a
// name always means the same content: the trust when it is not the
// switch's (COS, DSCP), the PFC priorities (PFC34, NOPFC) and, with
// PFC, the watchdog when it is not the fabric's (WD, NOWD). Names stay
// short enough for EOS's mode prompts inside a config session
// (scrapligo's arista_eos patterns allow 63 characters).
func profileName(sw *intent.Switch, def, s shape) string {
	if s.equal(def) {
		return ProfileName
	}
	parts := []string{ProfileName}
	if s.trust != sw.Trust {
		parts = append(parts, strings.ToUpper(eosTrust(s.trust)))
	}
	if len(s.pfc) == 0 {
		parts = append(parts, "NOPFC")
	} else {
		parts = append(parts, "PFC"+join(s.pfc, ""))
		if s.watchdog != sw.Watchdog.Enabled {
			if s.watchdog {
				parts = append(parts, "WD")
			} else {
				parts = append(parts, "NOWD")
			}
		}
	}
	return strings.Join(parts, "-")
}

// Profiles lists the qos profile names the plan renders, FABCTL first.
func (p *Plan) Profiles() []string {
	out := make([]string, len(p.profiles))
	for i, r := range p.profiles {
		out[i] = r.name
	}
	return out
}

func (p *Plan) profile(name string) *profileRef {
	for _, r := range p.profiles {
		if r.name == name {
			return r
		}
	}
	return nil
}

// Build checks that the intent can be expressed on EOS and returns its
// configuration plan with Sand's `tx-queue` keyword (an offline render,
// which has read no model).
func Build(sw *intent.Switch) (*Plan, error) { return BuildFor(sw, QueueSand) }

// BuildFor is Build for a chip family's queue keyword (QueueSand,
// QueueStrata; "" renders no queue lines).
func BuildFor(sw *intent.Switch, queue string) (*Plan, error) {
	p := &Plan{sw: sw, dscp: sw.Trust == spec.TrustDSCP && sw.Transport != "infiniband", table: sw.DSCPToTC, queue: queue}
	if sw.Trust != spec.TrustDSCP && sw.Trust != spec.TrustPCP {
		return nil, fmt.Errorf("trust %q: EOS qos profiles trust dscp or cos", sw.Trust)
	}
	for _, tc := range sw.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			return nil, fmt.Errorf("traffic class %d: EOS has tx-queues 0-7", tc.TC)
		}
		if !tc.Strict && (tc.Bandwidth < 1 || tc.Bandwidth > 100) {
			return nil, fmt.Errorf("traffic class %d: bandwidth percent %d outside EOS's 1..100", tc.TC, tc.Bandwidth)
		}
		if e := tc.ECN; e != nil {
			if e.Probability != math.Trunc(e.Probability) || e.Probability < 1 || e.Probability > 100 {
				return nil, fmt.Errorf("traffic class %d: ECN probability %v: EOS max-mark-probability is a whole percent 1..100", tc.TC, e.Probability)
			}
			if e.Min < KByte || e.Max < e.Min {
				return nil, fmt.Errorf("traffic class %d: ECN thresholds %d..%d bytes: EOS needs 1 kbyte <= minimum <= maximum", tc.TC, e.Min, e.Max)
			}
		}
		if tc.Lossless {
			p.lossless = append(p.lossless, tc.TC)
		}
	}
	if sw.Watchdog.Enabled && sw.Watchdog.Action != "drop" {
		return nil, fmt.Errorf("PFC watchdog action %q: this driver renders EOS's `override action drop` only", sw.Watchdog.Action)
	}
	if w := sw.Watchdog; w.Enabled {
		// AVD's schema patterns (testdata/vendor/eos/avd-pfc-schema.txt:17-20):
		// timeout and recovery-time in 10 ms steps, polling-interval in 1 ms.
		for _, v := range []struct {
			name string
			d    time.Duration
			step time.Duration
		}{{"timeout", w.Detect, 10 * time.Millisecond}, {"recovery-time", w.Restore, 10 * time.Millisecond}, {"polling-interval", w.Poll, time.Millisecond}} {
			if v.d <= 0 || v.d%v.step != 0 {
				return nil, fmt.Errorf("PFC watchdog %s %v: EOS takes seconds in steps of %v", v.name, v.d, v.step)
			}
		}
	}
	def := shape{trust: sw.Trust, pfc: sorted(p.lossless), watchdog: sw.Watchdog.Enabled && len(p.lossless) > 0}
	p.profiles = []*profileRef{{name: ProfileName, shape: def}}
	p.byPort = map[string]*profileRef{}
	var others []*profileRef
	for _, port := range sw.Ports {
		if port.MTU < 68 || port.MTU > MaxMTU {
			return nil, fmt.Errorf("port %s: mtu %d outside EOS's 68..%d (EOS mtu is the IP MTU)", port.Name, port.MTU, MaxMTU)
		}
		if port.Trust != spec.TrustDSCP && port.Trust != spec.TrustPCP {
			return nil, fmt.Errorf("port %s: trust %q: EOS qos profiles trust dscp or cos", port.Name, port.Trust)
		}
		s := shape{trust: port.Trust, pfc: sorted(port.PFC), watchdog: port.Watchdog && sw.Watchdog.Enabled && len(port.PFC) > 0}
		name := profileName(sw, def, s)
		r := p.profile(name)
		if r == nil {
			for _, o := range others {
				if o.name == name {
					r = o
				}
			}
		}
		if r == nil {
			r = &profileRef{name: name, shape: s}
			others = append(others, r)
		}
		p.byPort[port.Name] = r
		p.cos = p.cos || port.Trust == spec.TrustPCP
	}
	p.cos = p.cos || sw.Trust == spec.TrustPCP
	sort.Slice(others, func(i, j int) bool { return others[i].name < others[j].name })
	p.profiles = append(p.profiles, others...)
	return p, nil
}

func eosTrust(t string) string {
	if t == spec.TrustPCP {
		return "cos"
	}
	return t
}

// kbytes renders a threshold in EOS's kbytes, rounded to the nearest.
func kbytes(b spec.Bytes) string {
	return strconv.FormatInt(int64(math.Round(float64(b)/KByte)), 10)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// DSCPLines are the `qos map dscp <ints> to traffic-class <n>` lines
// (avd-qos-profile.cfg:51), grouped by traffic class: all 64 code points,
// since no default table is sourced.
func (p *Plan) DSCPLines() []string {
	if !p.dscp {
		return nil
	}
	byTC := map[int][]int{}
	for d, tc := range p.table {
		byTC[tc] = append(byTC[tc], d)
	}
	return dscpMapLines(byTC)
}

// CoSLines are the `qos map cos <ints> to traffic-class <n>` lines
// (avd-qos-profile.cfg:49) of a switch where PCP is trusted: CoS p to
// traffic class p, fabctl's meaning of a class's priority on a PCP port
// (SONiC's DOT1P_TO_TC_MAP is the same identity). EOS's own CoS map is
// the platform's and in no source for hardware (vEOS sends every CoS to
// traffic-class 8, pyeapi-running-config-all.txt:49), so it is written,
// never assumed.
func (p *Plan) CoSLines() []string {
	if !p.cos {
		return nil
	}
	out := make([]string, 8)
	for c := range out {
		out[c] = "qos map cos " + strconv.Itoa(c) + " to traffic-class " + strconv.Itoa(c)
	}
	return out
}

// dscpMapLines are `qos map dscp <ints> to traffic-class <n>` lines, one
// per class in class order (code points as given, ascending).
func dscpMapLines(byTC map[int][]int) []string {
	tcs := make([]int, 0, len(byTC))
	for tc := range byTC {
		tcs = append(tcs, tc)
	}
	sort.Ints(tcs)
	var out []string
	for _, tc := range tcs {
		out = append(out, "qos map dscp "+join(byTC[tc], " ")+" to traffic-class "+strconv.Itoa(tc))
	}
	return out
}

// clear says what a change must explicitly undo in the profiles
// (Changes knows it from the diff's before values; Render starts empty).
type clear struct {
	txqs    []int // tx-queues to remove
	ecnOff  map[int]bool
	bwOff   map[int]bool
	pauseOf map[string]bool          // ports whose flowcontrol must be turned off
	prof    map[string]*profileClear // by profile name
}

// profileClear is what one profile must undo.
type profileClear struct {
	noDrop []int // no-drop priorities to remove
	pfcOff bool
}

// ProfileLines is one `qos profile` section (by name).
func (p *Plan) ProfileLines(name string, cl *clear) []string {
	ref := p.profile(name)
	if ref == nil {
		return nil
	}
	var pc *profileClear
	if cl != nil {
		pc = cl.prof[name]
	}
	// Forms and their sources: testdata/vendor/eos/shapes.txt. EOS prints
	// `no priority` / `priority strict` before `bandwidth percent`
	// (avd-qos-profile.cfg:15-22); cleared settings use the forms `show
	// running-config all` prints (pyeapi-running-config-all.txt).
	out := []string{"qos profile " + name, "   qos trust " + eosTrust(ref.trust)}
	for _, tc := range p.sw.TCs {
		if p.queue == "" {
			break
		}
		// tx-queue (Sand) or uc-tx-queue (Strata): the same lines in
		// either sub-mode (avd-uc-tx-queue.txt; family.go).
		out = append(out, "   "+p.queue+" "+strconv.Itoa(tc.TC))
		if tc.Strict {
			out = append(out, "      priority strict")
			if cl != nil && cl.bwOff[tc.TC] {
				out = append(out, "      no bandwidth percent")
			}
		} else {
			out = append(out, "      no priority", "      bandwidth percent "+strconv.Itoa(tc.Bandwidth))
		}
		if e := tc.ECN; e != nil {
			out = append(out, fmt.Sprintf("      random-detect ecn minimum-threshold %s kbytes maximum-threshold %s kbytes max-mark-probability %d",
				kbytes(e.Min), kbytes(e.Max), int(e.Probability)))
		} else if cl != nil && cl.ecnOff[tc.TC] {
			out = append(out, "      no random-detect ecn minimum-threshold")
		}
	}
	if cl != nil && p.queue != "" {
		// A tx-queue the intent no longer has goes back to EOS's defaults
		// (`no tx-queue` has no source).
		for _, q := range cl.txqs {
			out = append(out, "   "+p.queue+" "+strconv.Itoa(q), "      priority strict", "      no bandwidth percent", "      no random-detect ecn minimum-threshold")
		}
	}
	if len(ref.pfc) > 0 {
		out = append(out, "   priority-flow-control on")
	} else if pc != nil && pc.pfcOff {
		out = append(out, "   no priority-flow-control")
	}
	for _, q := range ref.pfc {
		out = append(out, "   priority-flow-control priority "+strconv.Itoa(q)+" no-drop")
	}
	if pc != nil {
		for _, q := range pc.noDrop {
			out = append(out, "   no priority-flow-control priority "+strconv.Itoa(q))
		}
	}
	// A watchdog the intent turns off is not expressible (its `no` form
	// has no source: Unexpressible), so no line removes it.
	if ref.watchdog && len(ref.pfc) > 0 {
		out = append(out, "   priority-flow-control pause watchdog")
	}
	return out
}

// InterfaceLines is one managed port's section.
func (p *Plan) InterfaceLines(port intent.Port, cl *clear) []string {
	out := []string{"interface " + port.Name, "   mtu " + strconv.Itoa(port.MTU)}
	// flowcontrol {receive|send} on: avd-interfaces.cfg:36, pyeapi-commands.txt:19-21;
	// no flowcontrol {receive|send}: pyeapi-running-config-all.txt:18-19.
	if port.Pause {
		out = append(out, "   flowcontrol receive on", "   flowcontrol send on")
	} else if cl != nil && cl.pauseOf[port.Name] {
		out = append(out, "   no flowcontrol receive", "   no flowcontrol send")
	}
	name := ProfileName
	if r := p.byPort[port.Name]; r != nil {
		name = r.name
	}
	out = append(out, "   service-profile "+name)
	if p.ifTrust[port.Name] {
		// The interface's own trust line (avd-qos-trust.txt (2)) is set
		// to the port's trust: whichever EOS applies, both agree.
		out = append(out, "   qos trust "+eosTrust(port.Trust))
	}
	return out
}

// WatchdogLines are the global PFC watchdog lines: one line per timer
// (avd-qos-profile.cfg:56-58) and the action override
// (avd-pfc-schema.txt:14); their removal has no sourced form (Unexpressible)
// (pyeapi-commands.txt:17).
func (p *Plan) WatchdogLines() []string {
	w := p.sw.Watchdog
	if !w.Enabled {
		// Removing the lines has no sourced form: Unexpressible lists it.
		return nil
	}
	return []string{
		"priority-flow-control pause watchdog default timeout " + seconds(w.Detect),
		"priority-flow-control pause watchdog default recovery-time " + seconds(w.Restore),
		"priority-flow-control pause watchdog default polling-interval " + seconds(w.Poll),
		"priority-flow-control pause watchdog override action drop",
	}
}

// Config renders the managed configuration as EOS CLI in running-config
// layout (sections separated by "!").
func (p *Plan) Config() string {
	var b strings.Builder
	block := func(lines []string) {
		if len(lines) == 0 {
			return
		}
		b.WriteString(strings.Join(lines, "\n") + "\n!\n")
	}
	block(p.DSCPLines())
	block(p.CoSLines())
	for _, r := range p.profiles {
		block(p.ProfileLines(r.name, nil))
	}
	for _, port := range p.sw.Ports {
		block(p.InterfaceLines(port, nil))
	}
	block(p.WatchdogLines())
	var notes []string
	if p.sw.Headroom > 0 {
		notes = append(notes, fmt.Sprintf("! buffer/headroom %d B per lossless priority: not rendered (%s)", p.sw.Headroom, headroomReason))
	}
	for _, port := range p.sw.Ports {
		if port.CableLength > 0 {
			notes = append(notes, "! cable lengths: not rendered, EOS has no cable-length setting (headroom is platform-computed)")
			break
		}
	}
	if len(notes) > 0 {
		block(notes)
	}
	b.WriteString("end\n")
	return b.String()
}

func sorted(v []int) []int {
	s := append([]int(nil), v...)
	sort.Ints(s)
	return s
}

func join(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// ints is the canonical state form of a priority set ("3,4").
func ints(v []int) string { return join(sorted(v), ",") }
