package eos

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/sshcli"
	"github.com/fabctl/fabctl/intent"
)

// changes groups a diff into steps. EOS commands set a value whatever
// was there, so a step carries the whole desired section for its scope
// (qos map, the qos profile, one interface, the watchdog lines) plus the
// `no` lines for what the diff says is configured and no longer wanted.
// Each section appears once, in the first step that needs it; payload
// lines are indented like the running-config (three spaces per mode).
func changes(sw *intent.Switch, diff []intent.AttrChange, fields []intent.Field) ([]drivers.Change, error) {
	p, err := Build(sw)
	if err != nil {
		return nil, err
	}
	cl := clearsFrom(p, diff)
	type group struct {
		key   string
		paths []string
		dis   string
	}
	var order []string
	groups := map[string]*group{}
	for _, c := range diff {
		g := groupOf(c.Path)
		if groups[g] == nil {
			groups[g] = &group{key: g}
			order = append(order, g)
		}
		gr := groups[g]
		gr.paths = append(gr.paths, c.Path)
		if f, ok := intent.FieldFor(fields, c.Path); ok && f.Disruptive != "" && gr.dis == "" {
			gr.dis = f.Disruptive
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return groupRank(order[i]) < groupRank(order[j]) })
	ports := map[string]intent.Port{}
	for _, port := range sw.Ports {
		ports[port.Name] = port
	}
	done := map[string]bool{}
	var out []drivers.Change
	for _, g := range order {
		gr := groups[g]
		var payload []string
		add := func(section string, lines []string) {
			if !done[section] {
				done[section] = true
				payload = append(payload, lines...)
			}
		}
		for _, path := range gr.paths {
			switch {
			case strings.HasPrefix(path, "dscp/"):
				add("dscp", p.DSCPLines(true))
			case path == "trust" || strings.HasPrefix(path, "tc/"):
				add("profile", p.ProfileLines(cl))
			case strings.HasPrefix(path, "pfcwd/"):
				add("watchdog", p.WatchdogLines(true))
			case strings.HasPrefix(path, "port/"):
				name, attr := splitPort(path)
				switch attr {
				case "pfc", "pfcwd", "trust":
					add("profile", p.ProfileLines(cl))
				case "cable":
					continue // no EOS setting
				}
				if port, ok := ports[name]; ok {
					add("interface "+name, p.InterfaceLines(port, cl))
				} else {
					// A port the intent no longer names keeps its config:
					// fabctl never touches unnamed ports (intent.Diff does not
					// produce this), so there is nothing to send.
					continue
				}
			}
		}
		out = append(out, drivers.Change{Paths: gr.paths, Summary: fmt.Sprintf("%s (%d setting(s))", g, len(gr.paths)),
			Payload: payload, Disruptive: gr.dis})
	}
	return out, nil
}

// clearsFrom reads from the diff's before values what the profile and
// interfaces have that the intent no longer wants.
func clearsFrom(p *Plan, diff []intent.AttrChange) *clear {
	cl := &clear{ecnOff: map[int]bool{}, bwOff: map[int]bool{}, pauseOf: map[string]bool{}}
	want := map[int]bool{}
	for _, tc := range p.sw.TCs {
		want[tc.TC] = true
	}
	noDrop := map[int]bool{}
	for _, q := range p.ref.pfc {
		noDrop[q] = true
	}
	stale := map[int]bool{}
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
			if attr == "lossless" && c.Before == "true" && !noDrop[q] {
				stale[q] = true
			}
		}
		if strings.HasPrefix(c.Path, "port/") {
			name, attr := splitPort(c.Path)
			switch attr {
			case "pfc":
				for _, s := range strings.Split(c.Before, ",") {
					if q, err := strconv.Atoi(s); err == nil && q >= 0 && q < 8 && !noDrop[q] {
						stale[q] = true
					}
				}
				if c.Before != "" && len(p.ref.pfc) == 0 {
					cl.pfcOff = true
				}
			case "pfcwd":
				if c.Before == "true" && !p.ref.watchdog {
					cl.wdOff = true
				}
			case "pause":
				if c.Before == "true" {
					cl.pauseOf[name] = true
				}
			}
		}
	}
	for q := range stale {
		cl.noDrop = append(cl.noDrop, q)
	}
	sort.Ints(cl.noDrop)
	for q := range txq {
		cl.txqs = append(cl.txqs, q)
	}
	sort.Ints(cl.txqs)
	return cl
}

// splitPort splits "port/Ethernet1/1/mtu" into "Ethernet1/1" and "mtu".
func splitPort(path string) (string, string) {
	rest := strings.TrimPrefix(path, "port/")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return rest, ""
	}
	return rest[:i], rest[i+1:]
}

func groupOf(path string) string {
	switch {
	case strings.HasPrefix(path, "dscp/"):
		return "classification (qos map dscp)"
	case path == "trust" || strings.HasPrefix(path, "tc/"):
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
// the CLI, with an explicit `exit` for every mode left (sshcli.Script).
func Script(lines []string) []string { return sshcli.Script(lines) }

func flatten(nodes []*Node) []string { return sshcli.ScriptOf(nodes) }
