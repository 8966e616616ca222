package cumulus

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/fabctl/fabctl/intent"
)

// Profile is the NVUE QoS profile fabctl configures: the global one every
// port uses unless it names another.
const Profile = "default-global"

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

func sectionRank(s string) int {
	for i, x := range []string{secRoCE, secMapping, secPFC, secECN, secScheduler, secWatchdog} {
		if s == x {
			return i
		}
	}
	return 100 // interfaces last
}

// rendering holds the rendered sections of one switch.
type rendering struct {
	sw       *intent.Switch
	sections map[string][]string
}

func lossless(sw *intent.Switch) bool {
	for _, tc := range sw.TCs {
		if tc.Lossless {
			return true
		}
	}
	return false
}

// pfcPrios is the union of the ports' PFC priorities; NVUE's
// default-global PFC profile is one set for every port, so ports that
// disagree are an error.
func pfcPrios(sw *intent.Switch) ([]int, error) {
	var set []int
	first := ""
	for i, p := range sw.Ports {
		s := fmt.Sprint(p.PFC)
		if i == 0 {
			first, set = s, append([]int(nil), p.PFC...)
			continue
		}
		if s != first {
			return nil, fmt.Errorf("port %s has PFC priorities %v but %s has %s: the NVUE %s PFC profile is one set for all ports",
				p.Name, p.PFC, sw.Ports[0].Name, first, Profile)
		}
	}
	sort.Ints(set)
	return set, nil
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
	switch sw.Trust {
	case "dscp":
		m = append(m, "nv set qos mapping "+Profile+" trust l3")
	case "pcp":
		m = append(m, "nv set qos mapping "+Profile+" trust l2")
	}
	if sw.Trust == "dscp" && sw.Transport != "infiniband" {
		for d, tc := range sw.DSCPToTC {
			m = append(m, fmt.Sprintf("nv set qos mapping %s dscp %d switch-priority %d", Profile, d, tc))
		}
	}
	// Switch priority N is traffic class N: PFC priorities are the TCs.
	for sp := 0; sp < 8; sp++ {
		m = append(m, fmt.Sprintf("nv set qos egress-queue-mapping %s switch-priority %d traffic-class %d", Profile, sp, sp))
	}
	p.sections[secMapping] = m
	prios, err := pfcPrios(sw)
	if err != nil {
		return nil, err
	}
	pfc := []string{"nv unset qos pfc " + Profile + " switch-priority"}
	for _, pr := range prios {
		pfc = append(pfc, fmt.Sprintf("nv set qos pfc %s switch-priority %d", Profile, pr))
	}
	if len(prios) > 0 {
		pfc = append(pfc, "nv set qos pfc "+Profile+" tx enable rx enable")
	}
	p.sections[secPFC] = pfc
	var ecn, sched []string
	for _, tc := range sw.TCs {
		if tc.ECN != nil {
			ecn = append(ecn, fmt.Sprintf("nv set qos congestion-control %s traffic-class %d min-threshold %d max-threshold %d probability %s ecn enable",
				Profile, tc.TC, int64(tc.ECN.Min), int64(tc.ECN.Max), strconv.FormatFloat(tc.ECN.Probability, 'f', -1, 64)))
		} else {
			// The RoCE baseline marks TC3; a TC without ECN says so.
			ecn = append(ecn, fmt.Sprintf("nv unset qos congestion-control %s traffic-class %d", Profile, tc.TC),
				fmt.Sprintf("nv set qos congestion-control %s traffic-class %d ecn disable", Profile, tc.TC))
		}
		if tc.Strict {
			sched = append(sched, fmt.Sprintf("nv unset qos egress-scheduler %s traffic-class %d bw-percent", Profile, tc.TC),
				fmt.Sprintf("nv set qos egress-scheduler %s traffic-class %d mode strict", Profile, tc.TC))
		} else {
			sched = append(sched, fmt.Sprintf("nv set qos egress-scheduler %s traffic-class %d mode dwrr bw-percent %d", Profile, tc.TC, tc.Bandwidth))
		}
	}
	p.sections[secECN] = ecn
	p.sections[secScheduler] = sched
	if sw.Watchdog.Enabled {
		poll, rob := watchdogParams(sw)
		p.sections[secWatchdog] = []string{fmt.Sprintf("nv set qos pfc-watchdog polling-interval %d robustness %d", poll, rob)}
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
