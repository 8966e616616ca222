package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// reread settles which traffic classes the switches have before import
// infers anything: a driver reads the classes its intent names (with the
// device's values or defaults for them) beside the ones configured on
// the device, so a read with the inventory's classes shows classes the
// fabric does not run and can miss ones it does. Each switch is read
// once with no class named, which leaves what is configured (a driver
// that reads only the classes it is told of shows none and is not
// counted); the traffic classes at least half of those reads show are
// read on every switch; then every
// switch is read again naming exactly them, as plan of the written spec
// will read it.
func reread(fab *intent.Fabric, devs []*device, rep *Report) {
	byAddr := map[string]*intent.Switch{}
	for _, sw := range fab.Switches {
		byAddr[sw.Addr()] = sw
	}
	count := map[int]int{}
	probed := 0
	for _, d := range devs {
		sw := byAddr[d.addr]
		if sw == nil || d.live == nil || d.obs.Read == nil {
			continue
		}
		probe := *sw
		probe.TCs = nil
		st, err := d.obs.Read(&probe)
		if err != nil {
			continue
		}
		tcs := configuredTCs(st)
		if len(tcs) == 0 {
			continue // a driver that reads only the classes it is told of says nothing here
		}
		probed++
		for _, tc := range tcs {
			count[tc]++
		}
	}
	if probed == 0 {
		return
	}
	var set []int
	for tc := 0; tc < 8; tc++ {
		if count[tc]*2 >= probed { // a tie reads the class: the reads decide (inferClasses)
			set = append(set, tc)
		}
	}
	if len(set) == 0 {
		return // nothing configured shows: the inventory's classes name what to read
	}
	for _, d := range devs {
		sw := byAddr[d.addr]
		if sw == nil || d.live == nil || d.obs.Read == nil {
			continue
		}
		if slices.Equal(tcNumbers(sw.TCs), set) {
			continue // the first read named these
		}
		in := *sw
		in.TCs = make([]intent.TC, len(set))
		for i, tc := range set {
			in.TCs[i] = intent.TC{TC: tc}
		}
		st, err := d.obs.Read(&in)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: read again with the traffic classes %v: %v (its first read is used)", d.addr, set, err))
			continue
		}
		d.live = clean(st)
	}
}

// configuredTCs are the traffic classes a switch State has settings of.
func configuredTCs(st intent.State) []int {
	seen := [8]bool{}
	for k := range st {
		rest, ok := strings.CutPrefix(k, "tc/")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, "/")
		if tc, err := strconv.Atoi(n); err == nil && tc >= 0 && tc < 8 {
			seen[tc] = true
		}
	}
	var out []int
	for tc, ok := range seen {
		if ok {
			out = append(out, tc)
		}
	}
	return out
}

func tcNumbers(tcs []intent.TC) []int {
	out := make([]int, len(tcs))
	for i, tc := range tcs {
		out[i] = tc.TC
	}
	return out
}
