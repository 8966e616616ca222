package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

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
func reread(fab *intent.Fabric, devs []*device, rep *Report, par int) {
	byAddr := map[string]*intent.Switch{}
	for _, sw := range fab.Switches {
		byAddr[sw.Addr()] = sw
	}
	var sws []*device
	for _, d := range devs {
		if byAddr[d.addr] != nil && d.live != nil && d.obs.Read != nil {
			sws = append(sws, d)
		}
	}
	probes := make([]intent.State, len(sws))
	errs := make([]error, len(sws))
	parallel(len(sws), par, func(i int) {
		probe := *byAddr[sws[i].addr]
		probe.TCs = nil
		probes[i], errs[i] = sws[i].obs.Read(&probe)
	})
	count := map[int]int{}
	probed := 0
	for i, st := range probes {
		if errs[i] != nil {
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
	readNaming(byAddr, sws, set, rep, par)
}

// rereadWritten reads the switches again naming the traffic classes the
// written spec has (classes, by priority) when they are not the ones
// reread named: a class whose scheduling the spec cannot say is not
// written (inferClasses), and a driver's read of the others can depend
// on it (NX-OS compares a port's CoS classification with the intent's
// classes), so the residuals are computed on the read plan will make.
func rereadWritten(fab *intent.Fabric, devs []*device, classes []class, rep *Report, par int) {
	if classes == nil {
		return // the inventory's classes are kept: reread named them
	}
	set := make([]int, len(classes))
	for i, c := range classes {
		set[i] = c.prio
	}
	slices.Sort(set)
	byAddr := map[string]*intent.Switch{}
	for _, sw := range fab.Switches {
		byAddr[sw.Addr()] = sw
	}
	var sws []*device
	for _, d := range devs {
		if byAddr[d.addr] != nil && d.live != nil && d.obs.Read != nil && !slices.Equal(d.readTCs, set) {
			sws = append(sws, d)
		}
	}
	readNaming(byAddr, sws, set, rep, par)
}

// readNaming reads each switch of sws again with exactly the traffic
// classes set (a switch whose intent names them already is not read).
func readNaming(byAddr map[string]*intent.Switch, sws []*device, set []int, rep *Report, par int) {
	again := make([]intent.State, len(sws))
	errs := make([]error, len(sws))
	parallel(len(sws), par, func(i int) {
		sw := byAddr[sws[i].addr]
		if sws[i].readTCs == nil && slices.Equal(tcNumbers(sw.TCs), set) {
			return // the first read named these
		}
		in := *sw
		in.TCs = make([]intent.TC, len(set))
		for j, tc := range set {
			in.TCs[j] = intent.TC{TC: tc}
		}
		again[i], errs[i] = sws[i].obs.Read(&in)
	})
	for i, d := range sws {
		switch {
		case errs[i] != nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: read again with the traffic classes %v: %v (its first read is used)", d.addr, set, errs[i]))
		case again[i] != nil:
			d.live = clean(again[i])
			d.readTCs = set
		}
	}
}

// parallel runs fn(0..n-1) on at most par goroutines.
func parallel(n, par int, fn func(i int)) {
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}(i)
	}
	wg.Wait()
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
