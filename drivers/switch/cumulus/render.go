package cumulus

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// Profile is the NVUE QoS profile fabctl configures: the global one every
// port uses unless it names another.
const Profile = "default-global"

// Ports whose PFC priorities or trust differ from the switch's (a lossy
// storage port, a port trusting PCP) use NVUE profiles of their own, one
// per distinct setting, assigned with `nv set interface swpN qos pfc
// profile P` / `qos mapping profile P`; the names say what they hold, so
// a name always means the same content: fabctl-pfc34, fabctl-nopfc
// (PFC tx and rx disabled), fabctl-trust-l2, fabctl-trust-l3. The PFC
// watchdog is per interface already; ECN and scheduling are the same on
// every port (default-global).
const (
	pfcProfilePrefix = "fabctl-pfc"
	noPFCProfile     = "fabctl-nopfc"
	trustProfile     = "fabctl-trust-" // + l2 | l3
)

// Section names, in the order a transaction sets them.
const (
	secRoCE      = "roce"
	secMapping   = "mapping"
	secPFC       = "pfc"
	secECN       = "ecn"
	secScheduler = "scheduler"
	secWatchdog  = "watchdog"
	secIf        = "interface " // + port name
)

// sectionRank orders sections; a profile's section ("pfc fabctl-nopfc",
// "mapping fabctl-trust-l2") ranks with its kind.
func sectionRank(s string) int {
	kind, _, _ := strings.Cut(s, " ")
	for i, x := range []string{secRoCE, secMapping, secPFC, secECN, secScheduler, secWatchdog} {
		if kind == x {
			return i
		}
	}
	return 100 // interfaces last
}

// rendering holds the rendered sections of one switch.
type rendering struct {
	sw       *intent.Switch
	sections map[string][]string
	pfcOf    map[string]string // port -> PFC profile
	mapOf    map[string]string // port -> mapping profile
	cable    map[string]int    // PFC profile -> cable-length (m), 0: not set
	defPFC   []int
}

func lossless(sw *intent.Switch) bool {
	for _, tc := range sw.TCs {
		if tc.Lossless {
			return true
		}
	}
	return false
}

// losslessPrios are the priorities of the lossless classes: the
// default-global PFC profile's set (switch priority N is TC N).
func losslessPrios(sw *intent.Switch) []int {
	var out []int
	for _, tc := range sw.TCs {
		if tc.Lossless {
			out = append(out, tc.TC)
		}
	}
	sort.Ints(out)
	return out
}

func nvTrust(t string) string {
	if t == "pcp" {
		return "l2"
	}
	return "l3"
}

// pfcProfileFor names the PFC profile of a priority set.
func pfcProfileFor(prios, def []int) string {
	switch {
	case intsString(prios) == intsString(def):
		return Profile
	case len(prios) == 0:
		return noPFCProfile
	}
	return pfcProfilePrefix + strings.ReplaceAll(intsString(prios), ",", "")
}

// pfcLines render a PFC profile: the priorities (after clearing the
// old ones) and tx/rx enabled, or, for no priorities, tx and rx disabled;
// then the profile's cable length (metres, 0: not set). One attribute
// and one value per command, as every NVIDIA example writes it
// (testdata/vendor/cumulus/qos-guide-514.txt:17-20).
func pfcLines(name string, prios []int, cable int) []string {
	out := []string{"nv unset qos pfc " + name + " switch-priority"}
	for _, pr := range prios {
		out = append(out, fmt.Sprintf("nv set qos pfc %s switch-priority %d", name, pr))
	}
	switch {
	case len(prios) > 0:
		out = append(out, "nv set qos pfc "+name+" tx enable", "nv set qos pfc "+name+" rx enable")
	case name != Profile:
		out = append(out, "nv set qos pfc "+name+" tx disable", "nv set qos pfc "+name+" rx disable")
	}
	if cable > 0 {
		out = append(out, fmt.Sprintf("nv set qos pfc %s cable-length %d", name, cable))
	}
	return out
}

// cableMetres is a cable length as NVUE's cable-length takes it: whole
// metres, 1-100000 (qos-guide-514.txt:20, nvue-reference-qos.txt:10),
// rounded up (a longer cable only reserves more headroom).
func cableMetres(l float64) int {
	if l <= 0 {
		return 0
	}
	m := int(math.Ceil(l))
	if m > 100000 {
		m = 100000
	}
	return m
}

// scheduledTC is the traffic class switch priority sp is queued on:
// itself when the intent has that class, else the best-effort class
// (the first DWRR class that is not lossless, as NVUE's RoCE mode maps
// every other priority to TC0, roce-514.txt:30-36). NVUE gives a class
// without a DWRR weight no bandwidth ("a DWRR value of 0 (no egress
// scheduling)", qos-guide-514.txt:52-53), so a priority that carries no
// RDMA must not land on one.
func scheduledTC(sw *intent.Switch, sp int) int {
	for _, tc := range sw.TCs {
		if tc.TC == sp {
			return sp
		}
	}
	for _, tc := range sw.TCs {
		if !tc.Strict && !tc.Lossless && tc.Bandwidth > 0 {
			return tc.TC
		}
	}
	for _, tc := range sw.TCs {
		if !tc.Strict && tc.Bandwidth > 0 {
			return tc.TC
		}
	}
	if len(sw.TCs) > 0 {
		return sw.TCs[0].TC
	}
	return sp
}

// mappingLines render a mapping profile: its trust and, trusting DSCP,
// all 64 code points.
func mappingLines(sw *intent.Switch, name, trust string) []string {
	m := []string{"nv set qos mapping " + name + " trust " + nvTrust(trust)}
	if trust == "dscp" && sw.Transport != "infiniband" {
		for d, tc := range sw.DSCPToTC {
			m = append(m, fmt.Sprintf("nv set qos mapping %s dscp %d switch-priority %d", name, d, tc))
		}
	}
	return m
}

// Build renders every section of sw.
func Build(sw *intent.Switch) (*rendering, error) {
	p := &rendering{sw: sw, sections: map[string][]string{}}
	if lossless(sw) {
		// The documented baseline (RoCE page): trust, maps, PFC on SP3,
		// ECN on TC3 and ETS, then the explicit overrides below.
		p.sections[secRoCE] = []string{"nv set qos roce"}
	}
	var m []string
	if sw.Trust == "dscp" || sw.Trust == "pcp" {
		m = mappingLines(sw, Profile, sw.Trust)
	}
	// Switch priority N is traffic class N for the intent's classes (PFC
	// priorities are the TCs); the other priorities go to the best-effort
	// class (scheduledTC).
	for sp := 0; sp < 8; sp++ {
		m = append(m, fmt.Sprintf("nv set qos egress-queue-mapping %s switch-priority %d traffic-class %d", Profile, sp, scheduledTC(sw, sp)))
	}
	p.sections[secMapping] = m
	p.defPFC = losslessPrios(sw)
	p.pfcOf, p.mapOf, p.cable = map[string]string{}, map[string]string{}, map[string]int{}
	prioOf := map[string][]int{Profile: p.defPFC}
	for _, port := range sw.Ports {
		prios := append([]int(nil), port.PFC...)
		sort.Ints(prios)
		pn := pfcProfileFor(prios, p.defPFC)
		p.pfcOf[port.Name] = pn
		prioOf[pn] = prios
		// One cable-length per PFC profile: the longest of its ports.
		if c := cableMetres(float64(port.CableLength)); c > p.cable[pn] {
			p.cable[pn] = c
		}
	}
	for pn, prios := range prioOf {
		sec := secPFC
		if pn != Profile {
			sec += " " + pn
		}
		p.sections[sec] = pfcLines(pn, prios, p.cable[pn])
	}
	for _, port := range sw.Ports {
		mn := Profile
		if port.Trust != sw.Trust {
			if port.Trust != "dscp" && port.Trust != "pcp" {
				return nil, fmt.Errorf("port %s: trust %q: NVUE mapping profiles trust l3 (dscp) or l2 (pcp)", port.Name, port.Trust)
			}
			mn = trustProfile + nvTrust(port.Trust)
			p.sections[secMapping+" "+mn] = mappingLines(sw, mn, port.Trust)
		}
		p.mapOf[port.Name] = mn
	}
	var ecn, sched []string
	for _, tc := range sw.TCs {
		if tc.ECN != nil {
			if pr := tc.ECN.Probability; pr != math.Trunc(pr) || pr < 1 || pr > 100 {
				return nil, fmt.Errorf("traffic class %d: ECN probability %v: NVUE's congestion-control probability is a whole percent between 1 and 100 (nvue-reference-qos.txt:13)", tc.TC, pr)
			}
			// One attribute per command (qos-guide-514.txt:43-45,47;
			// probability: nvue-reference-qos.txt:13).
			cc := fmt.Sprintf("nv set qos congestion-control %s traffic-class %d ", Profile, tc.TC)
			ecn = append(ecn, cc+"min-threshold "+strconv.FormatInt(int64(tc.ECN.Min), 10),
				cc+"max-threshold "+strconv.FormatInt(int64(tc.ECN.Max), 10),
				cc+"probability "+strconv.Itoa(int(tc.ECN.Probability)),
				cc+"ecn enable")
		} else {
			// The RoCE baseline marks TC3; a TC without ECN says so.
			ecn = append(ecn, fmt.Sprintf("nv unset qos congestion-control %s traffic-class %d", Profile, tc.TC),
				fmt.Sprintf("nv set qos congestion-control %s traffic-class %d ecn disable", Profile, tc.TC))
		}
		if tc.Strict {
			sched = append(sched, fmt.Sprintf("nv unset qos egress-scheduler %s traffic-class %d bw-percent", Profile, tc.TC),
				fmt.Sprintf("nv set qos egress-scheduler %s traffic-class %d mode strict", Profile, tc.TC))
		} else {
			// mode and bw-percent are two commands (qos-guide-514.txt:54-55).
			sched = append(sched, fmt.Sprintf("nv set qos egress-scheduler %s traffic-class %d mode dwrr", Profile, tc.TC),
				fmt.Sprintf("nv set qos egress-scheduler %s traffic-class %d bw-percent %d", Profile, tc.TC, tc.Bandwidth))
		}
	}
	p.sections[secECN] = ecn
	p.sections[secScheduler] = sched
	if sw.Watchdog.Enabled {
		poll, rob := watchdogParams(sw)
		// Two commands (qos-guide-514.txt:38-39).
		p.sections[secWatchdog] = []string{fmt.Sprintf("nv set qos pfc-watchdog polling-interval %d", poll),
			fmt.Sprintf("nv set qos pfc-watchdog robustness %d", rob)}
	}
	for _, port := range sw.Ports {
		p.sections[secIf+port.Name] = p.interfaceLines(port)
	}
	return p, nil
}

// watchdogParams: NVUE's watchdog declares a storm after `robustness`
// polls of a paused queue, so detect = polling-interval x robustness.
func watchdogParams(sw *intent.Switch) (poll, rob int) {
	poll = int(sw.Watchdog.Poll.Milliseconds())
	if poll <= 0 {
		poll = 100
	}
	det := int(sw.Watchdog.Detect.Milliseconds())
	rob = (det + poll - 1) / poll
	if rob < 1 {
		rob = 1
	}
	return poll, rob
}

// interfaceLines: NVUE's `link mtu` is the Linux netdev MTU, which is the
// IP (L3) MTU: the ASIC adds the Ethernet header (14 B + 4 B per VLAN tag
// + FCS) itself, so the intent's IP MTU is rendered unchanged (9216 max).
func (p *rendering) interfaceLines(port intent.Port) []string {
	out := []string{fmt.Sprintf("nv set interface %s link mtu %d", port.Name, port.MTU)}
	if port.Watchdog && p.sw.Watchdog.Enabled {
		out = append(out, fmt.Sprintf("nv set interface %s qos pfc-watchdog", port.Name))
	} else {
		out = append(out, fmt.Sprintf("nv unset interface %s qos pfc-watchdog", port.Name))
	}
	// Back to default-global, or the profile of the port's own setting.
	for _, pr := range []struct{ kind, name string }{{"pfc", p.pfcOf[port.Name]}, {"mapping", p.mapOf[port.Name]}} {
		if pr.name == Profile || pr.name == "" {
			out = append(out, fmt.Sprintf("nv unset interface %s qos %s", port.Name, pr.kind))
		} else {
			out = append(out, fmt.Sprintf("nv set interface %s qos %s profile %s", port.Name, pr.kind, pr.name))
		}
	}
	return out
}

// Lines is the whole rendering in transaction order.
func (p *rendering) Lines() []string {
	var keys []string
	for k := range p.sections {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := sectionRank(keys[i]), sectionRank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	var out []string
	for _, k := range keys {
		out = append(out, p.sections[k]...)
	}
	return out
}
