package eos

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers/switch/clicore"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// Node is one line of the configuration with its sub-mode lines.
type Node = clicore.ConfigNode

// ParseConfig parses `show running-config` (or rendered CLI) into its
// section tree by indentation (clicore.ParseIndented).
func ParseConfig(text string) []*Node { return clicore.ParseIndented(text) }

// find returns the first node with exactly this line.
func find(nodes []*Node, line string) *Node {
	for _, n := range nodes {
		if n.Line == line {
			return n
		}
	}
	return nil
}

// profile is a parsed `qos profile`.
type profile struct {
	trust    string
	txq      map[int]*Node
	pfcOn    bool
	noDrop   []int
	watchdog bool
}

func parseProfile(n *Node) *profile {
	p := &profile{txq: map[int]*Node{}}
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		f := strings.Fields(c.Line)
		switch {
		case len(f) == 3 && f[0] == "qos" && f[1] == "trust":
			p.trust = f[2]
		case len(f) == 2 && f[0] == "tx-queue":
			if q, err := strconv.Atoi(f[1]); err == nil && q >= 0 && q < 8 {
				p.txq[q] = c
			}
		case c.Line == "priority-flow-control on":
			p.pfcOn = true
		case len(f) == 4 && f[0] == "priority-flow-control" && f[1] == "priority" && f[3] == "no-drop":
			if q, err := strconv.Atoi(f[2]); err == nil && q >= 0 && q < 8 {
				p.noDrop = append(p.noDrop, q)
			}
		case c.Line == "priority-flow-control pause watchdog":
			p.watchdog = true
		}
	}
	return p
}

func (p *profile) lossless(q int) bool {
	for _, x := range p.noDrop {
		if x == q {
			return true
		}
	}
	return false
}

// ReadRunningConfig normalises `show running-config` into fabctl's
// state paths for the settings the switch intent manages.
func ReadRunningConfig(text string, sw *intent.Switch) (intent.State, error) {
	if sw == nil {
		return nil, errors.New("no switch intent")
	}
	nodes := ParseConfig(text)
	st := intent.State{}
	profiles := map[string]*profile{}
	interfaces := map[string]*Node{}
	var wdLine []string
	wdDrop := false
	table := [64]int{}
	for d := range table {
		table[d] = HWDefaultTC(d)
	}
	for _, n := range nodes {
		f := strings.Fields(n.Line)
		switch {
		case len(f) == 3 && f[0] == "qos" && f[1] == "profile":
			profiles[f[2]] = parseProfile(n)
		case len(f) == 2 && f[0] == "interface":
			interfaces[f[1]] = n
		case len(f) >= 6 && f[0] == "qos" && f[1] == "map" && f[2] == "dscp" && f[len(f)-2] == "traffic-class" && f[len(f)-3] == "to":
			tc, err := strconv.Atoi(f[len(f)-1])
			if err != nil || tc < 0 || tc > 7 {
				continue
			}
			for _, s := range f[3 : len(f)-3] {
				if d, err := strconv.Atoi(s); err == nil && d >= 0 && d < 64 {
					table[d] = tc
				}
			}
		case len(f) == 10 && strings.HasPrefix(n.Line, "priority-flow-control pause watchdog default timeout "):
			wdLine = f
		case n.Line == "priority-flow-control pause watchdog override action drop":
			wdDrop = true
		}
	}
	prof := profiles[ProfileName]
	if prof != nil && prof.trust != "" {
		st["trust"] = stateTrust(prof.trust)
	}
	if sw.Trust == spec.TrustDSCP && sw.Transport != "infiniband" {
		intent.PutDSCP(st, "", &table) // the map is global: read it whatever the profile says
	}

	// Traffic classes: the intent's and any tx-queue configured in the profile.
	tcs := map[int]bool{}
	for _, tc := range sw.TCs {
		tcs[tc.TC] = true
	}
	if prof != nil {
		for q := range prof.txq {
			tcs[q] = true
		}
	}
	// The other profiles the managed ports use must have the same
	// tx-queues: a difference shows on the tc/N path it concerns.
	var others []string
	seen := map[string]bool{ProfileName: true}
	for _, port := range sw.Ports {
		if n := interfaces[port.Name]; n != nil {
			for _, c := range n.Children {
				if f := strings.Fields(c.Line); len(f) == 2 && f[0] == "service-profile" && !seen[f[1]] && profiles[f[1]] != nil {
					seen[f[1]] = true
					others = append(others, f[1])
				}
			}
		}
	}
	sort.Strings(others)
	for tc := range tcs {
		pre := "tc/" + strconv.Itoa(tc) + "/"
		st[pre+"lossless"] = "false"
		if prof != nil {
			st[pre+"lossless"] = strconv.FormatBool(prof.pfcOn && prof.lossless(tc))
		}
		want := txQueue(prof, tc)
		for k, v := range want {
			st[pre+k] = v
		}
		for _, name := range others {
			got := txQueue(profiles[name], tc)
			for _, k := range []string{"sched", "bandwidth", "ecn/min", "ecn/max", "ecn/probability"} {
				if got[k] != want[k] {
					v := got[k]
					if v == "" {
						v = "not set"
					}
					cur, ok := st[pre+k]
					if !ok {
						cur = "not set"
					}
					st[pre+k] = cur + " (qos profile " + name + ": " + v + ")"
				}
			}
		}
	}

	// PFC watchdog (global).
	if wdLine != nil {
		st["pfcwd/detect"] = ms(wdLine[5])
		st["pfcwd/restore"] = ms(wdLine[7])
		st["pfcwd/poll"] = ms(wdLine[9])
	}
	if wdDrop {
		st["pfcwd/action"] = "drop"
	} else if wdLine != nil {
		st["pfcwd/action"] = "errdisable" // EOS's default watchdog action
	}

	for _, port := range sw.Ports {
		n, ok := interfaces[port.Name]
		if !ok {
			continue // not on this switch: the plan creates it and the apply fails naming it
		}
		pre := "port/" + port.Name + "/"
		st[pre+"mtu"] = strconv.Itoa(DefaultMTU)
		var sp *profile
		recv, send := false, false
		for _, c := range n.Children {
			f := strings.Fields(c.Line)
			switch {
			case len(f) == 2 && f[0] == "mtu":
				st[pre+"mtu"] = f[1]
			case len(f) == 2 && f[0] == "service-profile":
				sp = profiles[f[1]]
			case c.Line == "flowcontrol receive on":
				recv = true
			case c.Line == "flowcontrol send on":
				send = true
			}
		}
		st[pre+"pfc"] = ""
		st[pre+"pfcwd"] = "false"
		pt := "none"
		if sp != nil {
			if sp.pfcOn {
				st[pre+"pfc"] = ints(sp.noDrop)
				st[pre+"pfcwd"] = strconv.FormatBool(sp.watchdog)
			}
			if sp.trust != "" {
				pt = stateTrust(sp.trust)
			}
		}
		if pt != st["trust"] {
			st[pre+"trust"] = pt
		}
		st[pre+"pause"] = strconv.FormatBool(recv && send)
	}
	return st, nil
}

// txQueue reads one tx-queue of a profile into its tc/N attributes
// (sched, bandwidth, ecn/*); a queue that is not configured is EOS's
// default, strict priority.
func txQueue(prof *profile, tc int) map[string]string {
	out := map[string]string{"sched": "strict"}
	if prof == nil || prof.txq[tc] == nil {
		return out
	}
	rr, bw := false, ""
	for _, c := range prof.txq[tc].Children {
		f := strings.Fields(c.Line)
		switch {
		case c.Line == "no priority":
			rr = true
		case len(f) == 3 && f[0] == "bandwidth" && f[1] == "percent":
			bw = f[2]
		case len(f) >= 8 && f[0] == "random-detect" && f[1] == "ecn" && f[2] == "minimum-threshold" && f[5] == "maximum-threshold":
			out["ecn/min"] = threshold(f[3], f[4])
			out["ecn/max"] = threshold(f[6], f[7])
			for i := 8; i+1 < len(f); i += 2 {
				if f[i] == "max-mark-probability" {
					out["ecn/probability"] = f[i+1]
				}
			}
		}
	}
	if rr {
		out["sched"] = "ets"
		if bw != "" {
			out["bandwidth"] = bw
		}
	}
	return out
}

func stateTrust(t string) string {
	if t == "cos" {
		return spec.TrustPCP
	}
	return t
}

// threshold converts an EOS threshold to bytes; units fabctl does not
// render (segments, milliseconds) stay as written, so they show as drift.
func threshold(n, unit string) string {
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return n + " " + unit
	}
	switch unit {
	case "bytes":
		return strconv.FormatInt(v, 10)
	case "kbytes":
		return strconv.FormatInt(v*KByte, 10)
	case "mbytes":
		return strconv.FormatInt(v*KByte*KByte, 10)
	}
	return n + " " + unit
}

// ms converts EOS seconds ("0.2") to fabctl's "200ms".
func ms(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e6 {
		return s
	}
	return strconv.FormatInt(int64(math.Round(f*1000)), 10) + "ms"
}
