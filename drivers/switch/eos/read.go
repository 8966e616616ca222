package eos

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
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
		case c.Line == "no qos trust":
			p.trust = trustDisabled
		case len(f) == 2 && (f[0] == QueueSand || f[0] == QueueStrata):
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

// Interfaces are the interfaces a running-config has a section for: every
// interface of the switch, configured or not (pyeapi's Interfaces.getall
// (arista-eosplus/pyeapi pyeapi/api/interfaces.py) lists a switch's
// interfaces from these sections, and a physical Ethernet interface cannot
// be created (EthernetInterface.create)). They are the port inventory
// (drivers.FactPorts).
func Interfaces(text string) []string {
	r := parseRunning(ParseConfig(text))
	out := make([]string, 0, len(r.interfaces))
	for name := range r.interfaces {
		out = append(out, name)
	}
	return out
}

// ReadRunningConfig normalises `show running-config` into fabctl's
// state paths for the settings the switch intent manages.
func ReadRunningConfig(text string, sw *intent.Switch) (intent.State, error) {
	return ReadConfig(text, "", sw)
}

// ReadConfig is ReadRunningConfig with the DSCP map taken from `show
// running-config all` (all; "" when not read): EOS does not print a
// setting that equals its default in `show running-config`, so a code
// point the intent maps to the built-in class reads there as if it were
// not set; `show running-config all` prints the whole map the switch
// runs, defaults included (pyeapi-running-config-all.txt:48-49, a real
// vEOS capture; pyeapi itself reads `show running-config all`,
// pyeapi-commands.txt:14, 26).
func ReadConfig(text, all string, sw *intent.Switch) (intent.State, error) {
	if sw == nil {
		return nil, errors.New("no switch intent")
	}
	r := parseRunning(ParseConfig(text))
	if all != "" {
		a := parseRunning(ParseConfig(all))
		r.table, r.cos, r.cosRead = a.table, a.cos, true
	}
	st := intent.State{}
	prof := r.profiles[ProfileName]
	if prof != nil && prof.trust != "" {
		st["trust"] = r.trustOf(prof.trust)
	}
	if sw.Trust == spec.TrustDSCP && sw.Transport != "infiniband" {
		// The map is global: read it whatever the profile says. A code
		// point the configuration does not list (no value printed, not
		// even by `all`) is "not set".
		intent.PutDSCP(st, "", &r.table)
		for k, v := range st {
			if strings.HasPrefix(k, "dscp/") && v == "-1" {
				st[k] = notSet
			}
		}
	}
	readTCs(st, r, sw, prof)
	readWatchdog(st, r)
	readPorts(st, r, sw)
	return st, nil
}

// runningConfig is the top level of a running-config, by section.
type runningConfig struct {
	profiles   map[string]*profile
	interfaces map[string]*Node
	table      [64]int // the global DSCP -> traffic class map (-1: not listed)
	cos        [8]int  // the global CoS -> traffic class map (-1: not listed)
	// The PFC watchdog's `default timeout|recovery-time|polling-interval`
	// values (avd-qos-profile.cfg:56-58), "" when not configured.
	wdTimeout, wdRecovery, wdPolling string
	wdAction                         string // `action drop|no-drop` (avd-qos-profile.cfg:59)
	wdDrop                           bool   // `override action drop` (avd-pfc-schema.txt:14)
	cosRead                          bool   // cos holds the map `show running-config all` printed
}

const notSet = intent.NotSet

func parseRunning(nodes []*Node) *runningConfig {
	r := &runningConfig{profiles: map[string]*profile{}, interfaces: map[string]*Node{}}
	for d := range r.table {
		r.table[d] = -1
	}
	for c := range r.cos {
		r.cos[c] = -1
	}
	for _, n := range nodes {
		f := strings.Fields(n.Line)
		switch {
		case len(f) == 3 && f[0] == "qos" && f[1] == "profile":
			r.profiles[f[2]] = parseProfile(n)
		case len(f) == 2 && f[0] == "interface":
			r.interfaces[f[1]] = n
		case len(f) >= 6 && f[0] == "qos" && f[1] == "map" && f[2] == "dscp" && f[len(f)-2] == "traffic-class" && f[len(f)-3] == "to":
			r.parseDSCPMap(f)
		case len(f) >= 6 && f[0] == "qos" && f[1] == "map" && f[2] == "cos" && f[len(f)-2] == "traffic-class" && f[len(f)-3] == "to":
			// qos map cos <ints> to traffic-class N: avd-qos-profile.cfg:49;
			// pyeapi-running-config-all.txt:49 (vEOS's whole map in all)
			if tc, err := strconv.Atoi(f[len(f)-1]); err == nil {
				for _, v := range f[3 : len(f)-3] {
					if c, err := strconv.Atoi(v); err == nil && c >= 0 && c < 8 {
						r.cos[c] = tc
					}
				}
			}
		case len(f) == 6 && strings.HasPrefix(n.Line, "priority-flow-control pause watchdog default "):
			switch f[4] {
			case "timeout":
				r.wdTimeout = f[5]
			case "recovery-time":
				r.wdRecovery = f[5]
			case "polling-interval":
				r.wdPolling = f[5]
			}
		case len(f) == 5 && strings.HasPrefix(n.Line, "priority-flow-control pause watchdog action "):
			r.wdAction = f[4]
		case n.Line == "priority-flow-control pause watchdog override action drop":
			r.wdDrop = true
		}
	}
	return r
}

// parseDSCPMap reads a `qos map dscp ... to traffic-class N` line (f).
func (r *runningConfig) parseDSCPMap(f []string) {
	tc, err := strconv.Atoi(f[len(f)-1])
	if err != nil || tc < 0 || tc > 7 {
		return
	}
	for _, s := range f[3 : len(f)-3] {
		if d, err := strconv.Atoi(s); err == nil && d >= 0 && d < 64 {
			r.table[d] = tc
		}
	}
}

// readTCs reads the traffic classes: the intent's and any tx-queue
// configured in the profile or in another profile a managed port uses
// (a switch configured by hand or by another generator, whose queues
// then read as differing from FABCTL's: they are not fabctl's profile).
func readTCs(st intent.State, r *runningConfig, sw *intent.Switch, prof *profile) {
	tcs := map[int]bool{}
	for _, tc := range sw.TCs {
		tcs[tc.TC] = true
	}
	others := r.otherProfiles(sw)
	for _, p := range append([]*profile{prof}, profilesOf(r, others)...) {
		if p != nil {
			for q := range p.txq {
				tcs[q] = true
			}
		}
	}
	for tc := range tcs {
		readTC(st, r, prof, others, tc)
	}
}

// otherProfiles are the other profiles the managed ports use, sorted:
// they must have the same tx-queues.
func (r *runningConfig) otherProfiles(sw *intent.Switch) []string {
	var others []string
	seen := map[string]bool{ProfileName: true}
	for _, port := range sw.Ports {
		if n := r.interfaces[port.Name]; n != nil {
			for _, c := range n.Children {
				if f := strings.Fields(c.Line); len(f) == 2 && f[0] == "service-profile" && !seen[f[1]] && r.profiles[f[1]] != nil {
					seen[f[1]] = true
					others = append(others, f[1])
				}
			}
		}
	}
	sort.Strings(others)
	return others
}

func profilesOf(r *runningConfig, names []string) []*profile {
	out := make([]*profile, len(names))
	for i, n := range names {
		out[i] = r.profiles[n]
	}
	return out
}

// readTC reads one traffic class from the profile; a difference in the
// other profiles shows on the tc/N path it concerns.
func readTC(st intent.State, r *runningConfig, prof *profile, others []string, tc int) {
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
		got := txQueue(r.profiles[name], tc)
		for _, k := range []string{"sched", "bandwidth", "ecn/min", "ecn/max", "ecn/probability"} {
			if got[k] != want[k] {
				v := got[k]
				if v == "" {
					v = notSet
				}
				cur, ok := st[pre+k]
				if !ok {
					cur = notSet
				}
				st[pre+k] = cur + " (qos profile " + name + ": " + v + ")"
			}
		}
	}
}

// readWatchdog reads the PFC watchdog (global).
func readWatchdog(st intent.State, r *runningConfig) {
	set := false
	for _, v := range []struct{ path, val string }{{"pfcwd/detect", r.wdTimeout}, {"pfcwd/restore", r.wdRecovery}, {"pfcwd/poll", r.wdPolling}} {
		if v.val != "" {
			st[v.path] = ms(v.val)
			set = true
		}
	}
	switch {
	case r.wdDrop:
		st["pfcwd/action"] = "drop"
	case r.wdAction != "":
		st["pfcwd/action"] = r.wdAction
	case set:
		// Without an action the port is errdisabled: AVD's schema says the
		// timeout is when the "port should be errdisabled or should start
		// dropping" (avd-pfc-schema.txt:17).
		st["pfcwd/action"] = "errdisable"
	}
}

// readPorts reads the intent's ports: MTU, PFC and watchdog (from the
// service profile), trust, pause.
func readPorts(st intent.State, r *runningConfig, sw *intent.Switch) {
	var ifTrust []string
	for _, port := range sw.Ports {
		n, ok := r.interfaces[port.Name]
		if !ok {
			continue // not on this switch: the plan creates it and the apply fails naming it
		}
		if readPort(st, r, "port/"+port.Name+"/", n) {
			ifTrust = append(ifTrust, port.Name)
		}
	}
	if len(ifTrust) > 0 {
		sort.Strings(ifTrust)
		st[FactInterfaceTrust] = strings.Join(ifTrust, ",")
	}
}

// readPort reads one interface; it reports whether the interface has a
// trust line of its own.
//
// The port's trust is its interface's `qos trust` (or `no qos trust`:
// untrusted) or the qos profile's it uses (AVD writes both places:
// avd-qos-trust.txt (1), (2)). When both say it and differ, no Arista text
// reached says which one EOS applies: the value names both, which no
// spec value equals, so the plan writes the interface's line to the
// port's trust (InterfaceLines). A port default CoS or DSCP (`qos cos N`,
// `qos dscp N`) is not read: AVD's schema calls them a "COS value" and a
// "DSCP value" and nothing reached says which packets take them, so
// fabctl neither reads nor writes them (docs/import.md lists them).
func readPort(st intent.State, r *runningConfig, pre string, n *Node) bool {
	st[pre+"mtu"] = strconv.Itoa(DefaultMTU)
	var sp *profile
	spName, ifTrust := "", ""
	recv, send := false, false
	for _, c := range n.Children {
		f := strings.Fields(c.Line)
		switch {
		case len(f) == 2 && f[0] == "mtu":
			st[pre+"mtu"] = f[1]
		case len(f) == 2 && f[0] == "service-profile":
			sp, spName = r.profiles[f[1]], f[1]
		case c.Line == "flowcontrol receive on":
			recv = true
		case c.Line == "flowcontrol send on":
			send = true
		case len(f) == 3 && f[0] == "qos" && f[1] == "trust":
			ifTrust = f[2]
		case c.Line == "no qos trust":
			ifTrust = trustDisabled
		}
	}
	st[pre+"pfc"] = ""
	st[pre+"pfcwd"] = "false"
	profTrust := ""
	if sp != nil {
		if sp.pfcOn {
			st[pre+"pfc"] = ints(sp.noDrop)
			st[pre+"pfcwd"] = strconv.FormatBool(sp.watchdog)
		}
		profTrust = sp.trust
	}
	pt := "none"
	switch {
	case ifTrust != "" && profTrust != "" && ifTrust != profTrust:
		pt = r.trustOf(ifTrust) + " (interface qos trust; qos profile " + spName + ": " + r.trustOf(profTrust) + "; which one EOS applies is not in the sources)"
	case ifTrust != "":
		pt = r.trustOf(ifTrust)
	case profTrust != "":
		pt = r.trustOf(profTrust)
	}
	if pt != st["trust"] {
		st[pre+"trust"] = pt
	}
	st[pre+"pause"] = strconv.FormatBool(recv && send)
	return ifTrust != ""
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

// trustOf is a profile's `qos trust` as state. PCP trust classifies by
// the global CoS map: a CoS that does not reach the traffic class of its
// own number (fabctl's meaning of a class priority, CoSLines) is named
// in the value, so the plan writes the map. Only a map read from `show
// running-config all` is judged (EOS prints a CoS entry equal to the
// platform's default only there).
func (r *runningConfig) trustOf(t string) string {
	st := stateTrust(t)
	if st != spec.TrustPCP || !r.cosRead {
		return st
	}
	var off []string
	for c, tc := range r.cos {
		if tc != c {
			v := "not listed"
			if tc >= 0 {
				v = "traffic-class " + strconv.Itoa(tc)
			}
			off = append(off, "cos "+strconv.Itoa(c)+" to "+v)
		}
	}
	if len(off) == 0 {
		return st
	}
	return st + " (qos map " + strings.Join(off, ", ") + ")"
}

func stateTrust(t string) string {
	switch t {
	case "cos":
		return spec.TrustPCP
	case trustDisabled:
		return "none"
	}
	return t
}

// trustDisabled is a profile's or interface's `no qos trust`: AVD's trust
// "disabled", a configured state (avd-qos-trust.txt (1)).
const trustDisabled = "disabled"

// FactInterfaceTrust lists the managed ports whose interface has a
// `qos trust` line of its own (comma-separated, sorted): a step that
// writes such an interface writes that line too (InterfaceLines).
const FactInterfaceTrust = drivers.PathFacts + "interface-trust"

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
