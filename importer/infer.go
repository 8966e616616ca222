package importer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// fabricChoice is what import writes at fabric level.
type fabricChoice struct {
	choices  []Choice
	trust    string // "": keep the inventory's
	mtu      int    // 0: keep
	rdmaTos  int    // -1: keep
	watchdog *watchdog
	classes  []class // nil: keep the inventory's classes
}

type watchdog struct {
	enabled                       bool
	detect, restore, poll, action string // "": not written (the spec's default)
}

type class struct {
	name, role       string
	prio             int
	dscp             []int
	def              bool
	lossless, strict bool
	bandwidth        int
	ecn              *ecn
}

type ecn struct{ min, max, prob string }

// unit is one place a QoS table lives: a switch (prefix "") or a host
// NIC (prefix "nic/<name>/").
type unit struct {
	who    string // switch.leaf1, host.h1 nic eth1
	prefix string
	st     intent.State
	sw     bool
}

func qosUnits(devs []*device) []unit {
	var out []unit
	for _, d := range devs {
		if d.live == nil {
			continue
		}
		if d.kind == intent.KindSwitch {
			out = append(out, unit{who: d.addr, st: d.live, sw: true})
			continue
		}
		for _, n := range nicNames(d.live) {
			out = append(out, unit{who: d.addr + " nic " + n, prefix: "nic/" + n + "/", st: d.live})
		}
	}
	return out
}

// nicNames lists the NICs a host state has settings of.
func nicNames(st intent.State) []string {
	seen := map[string]bool{}
	for k := range st {
		if rest, ok := strings.CutPrefix(k, "nic/"); ok {
			if i := strings.IndexByte(rest, '/'); i > 0 {
				seen[rest[:i]] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// vote counts the value each unit has for one setting.
type vote struct {
	by    map[string][]string // value -> who
	total int
}

func newVote() *vote { return &vote{by: map[string][]string{}} }

func (v *vote) add(val, who string) {
	v.by[val] = append(v.by[val], who)
	v.total++
}

// winner is the value most units have; on a tie prefer, when it is among
// the tied, else the smallest value (so the result does not depend on
// read order).
func (v *vote) winner(prefer string) (string, bool) {
	best, n := "", -1
	vals := make([]string, 0, len(v.by))
	for val := range v.by {
		vals = append(vals, val)
	}
	sort.Strings(vals)
	for _, val := range vals {
		c := len(v.by[val])
		if c > n || (c == n && val == prefer) {
			best, n = val, c
		}
	}
	return best, n > 0
}

func (v *vote) choice(setting, val, why string) Choice {
	return v.choiceShown(setting, val, val, why)
}

// choiceShown is choice with the value shown as shown.
func (v *vote) choiceShown(setting, val, shown, why string) Choice {
	c := Choice{Setting: setting, Value: shown, Agree: len(v.by[val]), Of: v.total, Why: why}
	for other, who := range v.by {
		if other != val {
			c.Dissent = append(c.Dissent, who...)
		}
	}
	sort.Strings(c.Dissent)
	return c
}

// infer picks the fabric-level settings most devices have.
func infer(s *spec.Spec, devs []*device) *fabricChoice {
	fc := &fabricChoice{rdmaTos: -1}
	units := qosUnits(devs)
	note := func(c Choice) { fc.choices = append(fc.choices, c) }

	// Trust: every switch and NIC.
	tv := newVote()
	for _, u := range units {
		if t := u.st[u.prefix+"trust"]; t == spec.TrustDSCP || t == spec.TrustPCP {
			tv.add(t, u.who)
		}
	}
	if w, ok := tv.winner(s.Fabric.Trust); ok {
		fc.trust = w
		note(tv.choice("fabric trust", w, ""))
	}

	// Host MTU and rdma_cm ToS: the NICs.
	mv, tosv := newVote(), newVote()
	for _, u := range units {
		if u.sw {
			continue
		}
		m := u.st[u.prefix+"vlan/mtu"]
		if m == "" {
			m = u.st[u.prefix+"mtu"]
		}
		if n, ok := atoi(m); ok && n >= 576 && n <= 65520 {
			mv.add(m, u.who)
		}
		if n, ok := atoi(u.st[u.prefix+"tos"]); ok && n >= 0 && n <= 255 {
			tosv.add(u.st[u.prefix+"tos"], u.who)
		}
	}
	if w, ok := mv.winner(strconv.Itoa(s.Fabric.MTU)); ok {
		fc.mtu, _ = atoi(w)
		note(mv.choice("fabric mtu", w, "the hosts' NIC MTU (switch ports want at least it)"))
	}
	if w, ok := tosv.winner(""); ok {
		fc.rdmaTos, _ = atoi(w)
		note(tosv.choice("fabric rdma_tos", w, ""))
	}

	// PFC watchdog: the switches.
	ev := newVote()
	fields := map[string]*vote{"detect": newVote(), "restore": newVote(), "poll": newVote(), "action": newVote()}
	for _, u := range units {
		if !u.sw {
			continue
		}
		on := false
		for f, v := range fields {
			if val, ok := u.st["pfcwd/"+f]; ok && val != intent.NotSet {
				// A poll interval alone is a global default (SONiC's
				// PFC_WD|GLOBAL POLL_INTERVAL), not a watchdog that runs.
				on = on || f != "poll"
				if f == "action" || validDuration(val) {
					v.add(val, u.who)
				}
			}
		}
		ev.add(strconv.FormatBool(on), u.who)
	}
	if w, ok := ev.winner(strconv.FormatBool(s.Fabric.PFCWatchdog.Enabled)); ok {
		fc.watchdog = &watchdog{enabled: w == "true"}
		note(ev.choice("fabric pfc_watchdog enabled", w, ""))
		if fc.watchdog.enabled {
			for _, f := range []string{"detect", "restore", "poll", "action"} {
				if val, ok := fields[f].winner(""); ok {
					if f == "action" && val != "drop" && val != "forward" && val != "alert" {
						continue
					}
					switch f {
					case "detect":
						fc.watchdog.detect = val
					case "restore":
						fc.watchdog.restore = val
					case "poll":
						fc.watchdog.poll = val
					case "action":
						fc.watchdog.action = val
					}
					note(fields[f].choice("fabric pfc_watchdog "+f, val, ""))
				}
			}
		}
	}

	fc.classes = inferClasses(s, units, tosv, devs, note)
	return fc
}

func validDuration(s string) bool {
	_, err := spec.ParseDuration(s)
	return err == nil
}

// inferClasses makes one class per traffic class most QoS units have.
func inferClasses(s *spec.Spec, units []unit, tosv *vote, devs []*device, note func(Choice)) []class {
	withTC := 0
	present := map[int][]string{}
	for _, u := range units {
		any := false
		for tc := 0; tc < 8; tc++ {
			if _, ok := u.st[u.prefix+"tc/"+strconv.Itoa(tc)+"/sched"]; ok {
				present[tc] = append(present[tc], u.who)
				any = true
			}
		}
		if any {
			withTC++
		}
	}
	if withTC == 0 {
		return nil // nothing read of the traffic classes: keep the inventory's
	}
	// The DSCP table most units have, code point by code point.
	var table [64]int
	dscpUnits := 0
	var cpVotes [64]*vote
	for i := range cpVotes {
		cpVotes[i] = newVote()
	}
	for _, u := range units {
		t, ok := liveTable(u.st, u.prefix)
		if !ok {
			continue
		}
		dscpUnits++
		for cp, tc := range t {
			if tc >= 0 {
				cpVotes[cp].add(strconv.Itoa(tc), u.who)
			}
		}
	}
	for cp := range table {
		w, _ := cpVotes[cp].winner("0")
		table[cp], _ = atoi(w)
	}
	def := intent.DSCPDefault(&table)

	var out []class
	for tc := 0; tc < 8; tc++ {
		if len(present[tc])*2 < withTC {
			continue
		}
		p := "tc/" + strconv.Itoa(tc) + "/"
		c := class{prio: tc}
		setting := fmt.Sprintf("class on priority %d", tc)
		lv, sv, bv, ev := newVote(), newVote(), newVote(), newVote()
		for _, u := range units {
			if _, ok := u.st[u.prefix+p+"sched"]; !ok {
				continue
			}
			if v := u.st[u.prefix+p+"lossless"]; v == "true" || v == "false" {
				lv.add(v, u.who)
			}
			sched := u.st[u.prefix+p+"sched"]
			if sched == "strict" || sched == "ets" {
				sv.add(sched, u.who)
			}
			if n, ok := atoi(u.st[u.prefix+p+"bandwidth"]); ok && sched == "ets" && n >= 0 && n <= 100 {
				bv.add(u.st[u.prefix+p+"bandwidth"], u.who)
			}
			if u.sw {
				min, max, prob := u.st[p+"ecn/min"], u.st[p+"ecn/max"], u.st[p+"ecn/probability"]
				if validBytes(min) && validBytes(max) && validProb(prob) {
					ev.add(min+","+max+","+prob, u.who)
				} else if min == "" && max == "" {
					ev.add("none", u.who)
				}
			}
		}
		if w, ok := lv.winner(""); ok {
			c.lossless = w == "true"
			note(lv.choice(setting+" lossless", w, ""))
		}
		w, ok := sv.winner("")
		if !ok {
			// No device reports a scheduling the spec can say (a queue
			// of a qos profile fabctl does not own reads "strict (qos
			// profile P: ets)"): writing the class would invent one;
			// its settings are listed as left out.
			continue
		}
		c.strict = w == "strict"
		note(sv.choice(setting+" scheduling", w, ""))
		if w, ok := bv.winner(""); ok && !c.strict {
			c.bandwidth, _ = atoi(w)
			note(bv.choiceShown(setting+" bandwidth", w, w+"%", "ETS share"))
		}
		if w, ok := ev.winner("none"); ok {
			if w != "none" {
				f := strings.Split(w, ",")
				c.ecn = &ecn{min: f[0], max: f[1], prob: f[2]}
				note(ev.choiceShown(setting+" ecn", w, fmt.Sprintf("min %s max %s probability %s%%", f[0], f[1], f[2]), "the switches' marking thresholds (bytes)"))
			} else {
				note(ev.choice(setting+" ecn", "none", "the switches' marking thresholds"))
			}
		}
		out = append(out, c)
	}
	byPrio := map[int]*class{}
	for i := range out {
		byPrio[out[i].prio] = &out[i]
	}
	// DSCP sets: each code point to the class of its majority traffic
	// class; the default class takes the rest. Code points whose traffic
	// class has no class here stay device overrides (dscp_map).
	if dscpUnits > 0 {
		if c := byPrio[def]; c != nil {
			c.def = true
		}
		for cp, tc := range table {
			if tc == def && byPrio[def] != nil {
				continue
			}
			if tc == 0 && byPrio[def] == nil {
				continue // the spec's unclaimed code points map to 0
			}
			if c := byPrio[tc]; c != nil {
				c.dscp = append(c.dscp, cp)
			}
		}
		for _, c := range out {
			if len(c.dscp) > 0 || c.def {
				v := newVote()
				for cp := range table {
					if table[cp] == c.prio {
						for val, who := range cpVotes[cp].by {
							for _, w := range who {
								v.add(val, w)
							}
						}
					}
				}
				note(Choice{Setting: fmt.Sprintf("class on priority %d dscp", c.prio), Value: intsHCL(c.dscp) + defaultNote(c.def),
					Agree: dscpUnits - dissenters(cpVotes, table, c.prio), Of: dscpUnits, Dissent: dissentList(cpVotes, table, c.prio)})
			}
		}
	}
	nameClasses(s, out, units, tosv, &table)
	return out
}

func defaultNote(def bool) string {
	if def {
		return " (default: every code point no class claims)"
	}
	return ""
}

// dissentList is the units that map some code point of class prio's
// majority elsewhere, or another code point to prio.
func dissentList(cp [64]*vote, table [64]int, prio int) []string {
	seen := map[string]bool{}
	for i := range cp {
		want := strconv.Itoa(table[i])
		for val, who := range cp[i].by {
			if val == want || (table[i] != prio && val != strconv.Itoa(prio)) {
				continue
			}
			for _, w := range who {
				seen[w] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

func dissenters(cp [64]*vote, table [64]int, prio int) int { return len(dissentList(cp, table, prio)) }

// liveTable expands a State's DSCP normal form (PutDSCP) into a table;
// -1 for a code point the device does not set.
func liveTable(st intent.State, prefix string) (t [64]int, ok bool) {
	d, ok := atoi(st[prefix+"dscp/default"])
	if !ok || d < 0 || d > 7 {
		return t, false
	}
	for cp := range t {
		t[cp] = d
		if v, has := st[prefix+"dscp/"+strconv.Itoa(cp)]; has {
			if v == intent.NotSet {
				t[cp] = -1
			} else if n, ok := atoi(v); ok && n >= 0 && n <= 7 {
				t[cp] = n
			} else {
				t[cp] = -1
			}
		}
	}
	return t, true
}

// nameClasses gives each class a name and role: the inventory's class on
// that priority when it has one, else inferred (the hosts' CNP priority,
// the class the hosts' ToS marks RDMA with, lossless classes).
func nameClasses(s *spec.Spec, out []class, units []unit, tosv *vote, table *[64]int) {
	inv := map[int]*spec.Class{}
	for _, c := range s.Classes {
		if inv[c.Priority] == nil {
			inv[c.Priority] = c
		}
	}
	cnp := -1
	cv := newVote()
	for _, u := range units {
		if n, ok := atoi(u.st[u.prefix+"cnp_prio"]); ok && !u.sw {
			cv.add(strconv.Itoa(n), u.who)
		}
	}
	if w, ok := cv.winner(""); ok {
		cnp, _ = atoi(w)
	}
	rdma := -1
	if w, ok := tosv.winner(""); ok {
		if tos, _ := atoi(w); tos>>2 < 64 {
			rdma = table[tos>>2]
		}
	}
	used := map[string]bool{}
	for i := range out {
		c := &out[i]
		if ic := inv[c.prio]; ic != nil && !used[ic.Name] {
			c.name, c.role = ic.Name, ic.Role
			used[c.name] = true
			continue
		}
		switch {
		case c.prio == cnp:
			c.role = spec.RoleCNP
		case c.prio == rdma:
			c.role = spec.RoleRDMA
		case rdma < 0 && cnp < 0 && c.lossless:
			c.role = spec.RoleRDMA
		case rdma < 0 && cnp < 0 && c.strict && slicesContains(c.dscp, 48):
			c.role = spec.RoleCNP // DSCP 48: the CNP marking of NVIDIA's and Broadcom's RoCE defaults
		default:
			c.role = spec.RoleOther
		}
	}
	for i := range out {
		c := &out[i]
		if c.name != "" {
			continue
		}
		base := "tc" + strconv.Itoa(c.prio)
		switch c.role {
		case spec.RoleRDMA:
			base = "rdma"
			if s.Fabric.Transport.IsRoCE() {
				base = "roce"
			}
		case spec.RoleCNP:
			base = "cnp"
		}
		name := base
		for n := 2; used[name]; n++ {
			name = base + strconv.Itoa(n)
		}
		used[name] = true
		c.name = name
	}
}

func slicesContains(v []int, x int) bool {
	for _, e := range v {
		if e == x {
			return true
		}
	}
	return false
}

func validBytes(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

func validProb(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f > 0 && f <= 100
}
