package eos

import (
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
)

// changes groups a diff into steps (clicore.Sections). EOS commands set
// a value whatever was there, so a step carries the whole desired
// section for its scope (qos map, the qos profile, one interface, the
// watchdog lines) plus the `no` lines for what the diff says is
// configured and no longer wanted; payload lines are indented like the
// running-config (three spaces per mode).
func changes(sw *intent.Switch, diff []intent.AttrChange, live intent.State) ([]drivers.Change, error) {
	if err := checkModel(sw, live); err != nil {
		return nil, err
	}
	fam, _, ok, _ := liveFamily(live, sw)
	if !ok {
		fam.Queue = "" // unknown chip: no queue lines (Unexpressible lists them)
	}
	p, err := BuildFor(sw, fam.Queue)
	if err != nil {
		return nil, err
	}
	p.ifTrust = map[string]bool{}
	for _, name := range strings.Split(live[FactInterfaceTrust], ",") {
		if name != "" {
			p.ifTrust[name] = true
		}
	}
	cl := clearsFrom(p, diff)
	ports := map[string]intent.Port{}
	for _, port := range sw.Ports {
		ports[port.Name] = port
	}
	key := func(path string) string {
		if path == drivers.PathSaved {
			return "" // the planner adds the save step; the engine saves
		}
		return groupOf(p, path)
	}
	return clicore.Sections(diff, fields, key, groupRank, func(path string, add func(string, func() []string)) {
		switch {
		case strings.HasPrefix(path, "dscp/"):
			add("dscp", func() []string { return p.DSCPLines() })
		case path == "trust" || strings.HasPrefix(path, "tc/"):
			// tx-queues are the same in every profile; the switch
			// trust and lossless classes are FABCTL's. PCP trust takes
			// the CoS map with it (CoSLines; Read folds the map into trust).
			if path == "trust" && p.cos {
				add("cos", func() []string { return p.CoSLines() })
			}
			for _, r := range p.profiles {
				add("profile "+r.name, func() []string { return p.ProfileLines(r.name, cl) })
			}
			if path == "trust" {
				// Ports with a trust line of their own follow the
				// switch's trust only if that line does.
				for _, port := range sw.Ports {
					if p.ifTrust[port.Name] {
						add("interface "+port.Name, func() []string { return p.InterfaceLines(port, cl) })
					}
				}
			}
		case strings.HasPrefix(path, "pfcwd/"):
			add("watchdog", func() []string { return p.WatchdogLines() })
		case strings.HasPrefix(path, "port/"):
			name, attr := splitPort(path)
			if attr == "cable" {
				return // no EOS setting
			}
			// The interface section names the port's profile: send the
			// profile first when the port's QoS changes, or when it is
			// one of the extra profiles (FABCTL exists whenever the
			// switch-level settings read back unchanged).
			if attr == "trust" && p.cos {
				add("cos", func() []string { return p.CoSLines() })
			}
			if r := p.byPort[name]; r != nil && (attr == "pfc" || attr == "pfcwd" || attr == "trust" || r.name != ProfileName) {
				add("profile "+r.name, func() []string { return p.ProfileLines(r.name, cl) })
			}
			// A port the intent no longer names keeps its config: fabctl
			// never touches unnamed ports (intent.Diff does not produce
			// this), so there is nothing to send.
			if port, ok := ports[name]; ok {
				add("interface "+name, func() []string { return p.InterfaceLines(port, cl) })
			}
		}
	}), nil
}

// clearsFrom reads from the diff's before values what the profiles and
// interfaces have that the intent no longer wants. A port's before
// values are what its profile must undo, for the profile the port now
// gets; the switch-level tc/N/lossless is FABCTL's.
func clearsFrom(p *Plan, diff []intent.AttrChange) *clear {
	cl := &clear{ecnOff: map[int]bool{}, bwOff: map[int]bool{}, pauseOf: map[string]bool{}, prof: map[string]*profileClear{}}
	want := map[int]bool{}
	for _, tc := range p.sw.TCs {
		want[tc.TC] = true
	}
	stale := map[string]map[int]bool{} // profile -> no-drop priorities to remove
	markStale := func(r *profileRef, q int) {
		for _, x := range r.pfc {
			if x == q {
				return
			}
		}
		if stale[r.name] == nil {
			stale[r.name] = map[int]bool{}
		}
		stale[r.name][q] = true
	}
	pc := func(name string) *profileClear {
		if cl.prof[name] == nil {
			cl.prof[name] = &profileClear{}
		}
		return cl.prof[name]
	}
	txq := map[int]bool{}
	for _, c := range diff {
		if strings.HasPrefix(c.Path, "tc/") {
			parts := strings.Split(c.Path, "/")
			q, err := strconv.Atoi(parts[1])
			if err != nil || q < 0 || q > 7 {
				continue
			}
			attr := strings.Join(parts[2:], "/")
			switch {
			case !want[q] && c.Before != "":
				txq[q] = true
			case attr == "bandwidth" && c.Before != "":
				cl.bwOff[q] = true
			case strings.HasPrefix(attr, "ecn/") && c.Before != "":
				cl.ecnOff[q] = true
			}
			if attr == "lossless" && c.Before == "true" {
				markStale(p.profiles[0], q)
			}
		}
		if strings.HasPrefix(c.Path, "port/") {
			name, attr := splitPort(c.Path)
			r := p.byPort[name]
			switch {
			case attr == "pfc" && r != nil:
				for _, s := range strings.Split(c.Before, ",") {
					if q, err := strconv.Atoi(s); err == nil && q >= 0 && q < 8 {
						markStale(r, q)
					}
				}
				if c.Before != "" && len(r.pfc) == 0 {
					pc(r.name).pfcOff = true
				}
			case attr == "pause":
				if c.Before == "true" {
					cl.pauseOf[name] = true
				}
			}
		}
	}
	for name, qs := range stale {
		for q := range qs {
			pc(name).noDrop = append(pc(name).noDrop, q)
		}
		sort.Ints(pc(name).noDrop)
	}
	for q := range txq {
		cl.txqs = append(cl.txqs, q)
	}
	sort.Ints(cl.txqs)
	return cl
}

var splitPort = clicore.SplitPort

func groupOf(p *Plan, path string) string {
	switch {
	case strings.HasPrefix(path, "dscp/"):
		return "classification (qos map dscp)"
	case path == "trust" || strings.HasPrefix(path, "tc/"):
		if len(p.profiles) > 1 {
			return "qos profiles " + strings.Join(p.Profiles(), ", ")
		}
		return "qos profile " + ProfileName
	case strings.HasPrefix(path, "pfcwd/"):
		return "PFC watchdog"
	case path == "buffer/headroom":
		return "headroom"
	case strings.HasPrefix(path, "port/"):
		name, _ := splitPort(path)
		return "interface " + name
	}
	return path
}

func groupRank(g string) int {
	switch {
	case strings.HasPrefix(g, "classification"):
		return 0
	case strings.HasPrefix(g, "qos profile"):
		return 1
	case strings.HasPrefix(g, "PFC watchdog"):
		return 2
	}
	return 3
}

// Script turns indented configuration lines into the commands typed at
// the CLI, with an explicit `exit` for every mode left (clicore.Script).
func Script(lines []string) []string { return clicore.Script(lines) }

func flatten(nodes []*Node) []string { return clicore.ScriptOf(nodes) }
