package apply

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// Order is the order of the two waves of a run.
type Order string

// Orders. See docs/apply.md ("Waves") for the reasoning.
const (
	// SwitchesFirst: the network accepts more (a priority becomes
	// lossless, the MTU grows) before the hosts start to use it.
	SwitchesFirst Order = "switches-first"
	// HostsFirst: the hosts stop using something (a lossless priority, a
	// large MTU) before the network stops providing it.
	HostsFirst Order = "hosts-first"
)

// Direction summarises what a plan does to the lossless domain and MTUs.
type Direction struct {
	// Widen counts changes that make the fabric accept more (PFC enabled
	// on a priority, a class made lossless, an MTU raised); FirstWiden
	// describes the first ("switch.leaf1 port/Ethernet0/pfc "3" -> "3,4"").
	Widen      int
	FirstWiden string
	// Narrow and FirstNarrow: changes that take something away.
	Narrow      int
	FirstNarrow string
}

// WavePlan is the order a run applies devices in.
type WavePlan struct {
	Order  Order
	Reason string
	// Conflict is set when the plan both widens and narrows: no order keeps
	// every host within what its switches provide during the run.
	Conflict bool
	// Waves hold indexes into the device list, first wave first. Devices
	// without changes are in no wave.
	Waves [][]int
}

// widen/narrow paths: the PFC set of a switch port or host NIC, the
// lossless flag of a traffic class (switch or NIC), and MTUs.
var (
	pfcPaths      = []string{"port/*/pfc", "nic/*/pfc"}
	losslessPaths = []string{"tc/*/lossless", "nic/*/tc/*/lossless"}
	mtuPaths      = []string{"port/*/mtu", "nic/*/mtu"}
)

func matchAny(pats []string, p string) bool {
	for _, pat := range pats {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}

func prioSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out[p] = true
		}
	}
	return out
}

// classify says whether one setting change widens or narrows the fabric.
func classify(c intent.AttrChange) (widen, narrow bool) {
	switch {
	case matchAny(pfcPaths, c.Path):
		before, after := prioSet(c.Before), prioSet(c.After)
		for p := range after {
			if !before[p] {
				widen = true
			}
		}
		for p := range before {
			if !after[p] {
				narrow = true
			}
		}
	case matchAny(losslessPaths, c.Path):
		widen = c.After == "true" && c.Before != "true"
		narrow = c.Before == "true" && c.After != "true"
	case matchAny(mtuPaths, c.Path) && c.Action == intent.Update:
		before, _ := intent.FloorValue(c.Before)
		after, _ := intent.FloorValue(c.After) // ">=9000": the port is raised to 9000
		b, err1 := strconv.Atoi(before)
		a, err2 := strconv.Atoi(after)
		if err1 == nil && err2 == nil {
			widen, narrow = a > b, a < b
		}
	}
	return widen, narrow
}

// PlanDirection counts the widening and narrowing changes of a plan.
func PlanDirection(devs []*plan.DevicePlan) Direction {
	var d Direction
	for _, dp := range devs {
		for _, c := range dp.Changes {
			w, n := classify(c)
			if w {
				if d.Widen == 0 {
					d.FirstWiden = describe(dp, c)
				}
				d.Widen++
			}
			if n {
				if d.Narrow == 0 {
					d.FirstNarrow = describe(dp, c)
				}
				d.Narrow++
			}
		}
	}
	return d
}

func describe(dp *plan.DevicePlan, c intent.AttrChange) string {
	return fmt.Sprintf("%s %s %q -> %q", dp.Address, c.Path, c.Before, c.After)
}

// Waves orders the devices that have changes:
//
//   - the plan widens (PFC on a new priority, a class made lossless, a
//     larger MTU), or changes none of these: switches, then hosts;
//   - the plan only narrows: hosts, then switches;
//   - both: switches first, with Conflict set (see docs/apply.md: split
//     such a change into two applies).
//
// Within a wave, devices keep the plan's order.
func Waves(devs []*plan.DevicePlan) WavePlan {
	d := PlanDirection(devs)
	wp := WavePlan{Order: SwitchesFirst}
	switch {
	case d.Widen > 0 && d.Narrow > 0:
		wp.Conflict = true
		wp.Reason = fmt.Sprintf("the plan both widens (%s) and narrows (%s) the lossless domain or MTU; no order keeps every host within what its switches provide, so switches go first; to change without a window, apply the additions first and the removals in a second apply",
			first(d.FirstWiden, d.Widen), first(d.FirstNarrow, d.Narrow))
	case d.Narrow > 0:
		wp.Order = HostsFirst
		wp.Reason = fmt.Sprintf("the plan narrows the lossless domain or MTU (%s): hosts stop using it before switches stop providing it", first(d.FirstNarrow, d.Narrow))
	case d.Widen > 0:
		wp.Reason = fmt.Sprintf("the plan widens the lossless domain or MTU (%s): switches provide it before hosts use it", first(d.FirstWiden, d.Widen))
	default:
		wp.Reason = "no lossless or MTU change: switches first (default)"
	}
	var sw, hosts []int
	for i, dp := range devs {
		if !dp.HasChanges() || dp.Error != "" && !dp.Repair {
			continue
		}
		if dp.Kind == intent.KindHost {
			hosts = append(hosts, i)
		} else {
			sw = append(sw, i)
		}
	}
	firstWave, second := sw, hosts
	if wp.Order == HostsFirst {
		firstWave, second = hosts, sw
	}
	for _, w := range [][]int{firstWave, second} {
		if len(w) > 0 {
			wp.Waves = append(wp.Waves, w)
		}
	}
	return wp
}

func first(desc string, n int) string {
	if n == 1 {
		return desc
	}
	return fmt.Sprintf("%s and %d more such changes", desc, n-1)
}

// links maps each device address to the addresses of devices it is cabled
// to, from the switches' port peers ("host:nic" or "switch:port").
func links(devs []Device) map[string][]string {
	kindOf := map[string]string{}
	for _, d := range devs {
		kindOf[d.Plan.Name] = d.Plan.Address
	}
	out := map[string][]string{}
	for _, d := range devs {
		sw, ok := d.Target.Intent.(*intent.Switch)
		if !ok {
			continue
		}
		for _, p := range sw.Ports {
			name, _, _ := strings.Cut(p.Peer, ":")
			peer, ok := kindOf[name]
			if !ok || peer == d.Plan.Address {
				continue
			}
			out[d.Plan.Address] = append(out[d.Plan.Address], peer)
			out[peer] = append(out[peer], d.Plan.Address)
		}
	}
	for k, v := range out {
		sort.Strings(v)
		out[k] = compact(v)
	}
	return out
}

func compact(v []string) []string {
	out := v[:0]
	for i, s := range v {
		if i == 0 || s != v[i-1] {
			out = append(out, s)
		}
	}
	return out
}
