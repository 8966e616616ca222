package eosemu

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is the emulator's parsed running configuration: the parts of
// EOS configuration it implements. Defaults are not stored (and not
// shown), as on EOS: an interface without `mtu` has the default L3 MTU
// 1500, a tx-queue without `no priority` is strict priority (the
// defaults `show running-config all` prints:
// testdata/vendor/eos/pyeapi-running-config-all.txt:38,47).
type Config struct {
	Hostname string
	// Model is what `show version` names; Queue the transmit-queue
	// keyword of its chip family (family.go): the only one the qos
	// profile mode accepts and the one the running-config prints.
	Model, Queue string
	// DSCP holds the configured `qos map dscp D to traffic-class T`
	// entries that differ from the platform's built-in map; DSCPDefault is
	// that map (nil: none modelled, every configured entry is kept). An
	// entry set to its default is not kept: `show running-config` does
	// not print a default, `show running-config all` prints the whole
	// map, defaults included (pyeapi-running-config-all.txt:48-49, vEOS).
	DSCP        map[int]int
	DSCPDefault map[int]int
	// CoS and CoSDefault are the same for `qos map cos C to traffic-class
	// T` (avd-qos-profile.cfg:49; vEOS's built-in map sends every CoS to
	// traffic-class 8, pyeapi-running-config-all.txt:49).
	CoS        map[int]int
	CoSDefault map[int]int
	Profiles   map[string]*Profile
	// The global watchdog timers, one line each (`priority-flow-control
	// pause watchdog default timeout|recovery-time|polling-interval V`,
	// avd-qos-profile.cfg:56-58; "" unset).
	WDTimeout, WDRecovery, WDPolling string
	// WDAction is `priority-flow-control pause watchdog action drop|no-drop` ("" unset).
	WDAction string
	// WDOverrideDrop is `priority-flow-control pause watchdog override action drop`.
	WDOverrideDrop bool
	Interfaces     map[string]*Interface
}

// PortQoS are the port classification lines an interface and a qos
// profile both take (AVD eos_cli_config_gen ethernet-interfaces.j2
// l.742-754, qos-profiles.j2 l.10-22; avd-qos-trust.txt): `qos trust
// dscp|cos`, `no qos trust` (AVD's trust "disabled": a configured state
// the running-config prints, not the line's removal), `qos cos N`, `qos
// dscp N` (AVD's schema: "COS value", "DSCP value").
type PortQoS struct {
	Trust string // "", "dscp", "cos", "disabled" (printed `no qos trust`)
	CoS   int    // qos cos N (-1 unset)
	DSCP  int    // qos dscp N (-1 unset)
}

// lines are the PortQoS lines in AVD's order, indented by ind.
func (q PortQoS) lines(ind string) string {
	var b strings.Builder
	switch q.Trust {
	case "":
	case "disabled":
		b.WriteString(ind + "no qos trust\n")
	default:
		b.WriteString(ind + "qos trust " + q.Trust + "\n")
	}
	if q.CoS >= 0 {
		b.WriteString(ind + "qos cos " + strconv.Itoa(q.CoS) + "\n")
	}
	if q.DSCP >= 0 {
		b.WriteString(ind + "qos dscp " + strconv.Itoa(q.DSCP) + "\n")
	}
	return b.String()
}

// Profile is one `qos profile NAME`.
type Profile struct {
	PortQoS
	TxQueues map[int]*TxQueue
	PFCOn    bool
	// NoDrop holds `priority-flow-control priority N no-drop` (true) and
	// `... priority N drop` (false).
	NoDrop   map[int]bool
	Watchdog bool
	// WDPortDrop is `priority-flow-control pause watchdog port action drop`.
	WDPortDrop bool
}

// TxQueue is a `tx-queue N` section of a profile.
type TxQueue struct {
	Bandwidth  int    // bandwidth percent (0: unset)
	RoundRobin bool   // `no priority` (default: strict)
	ECN        string // the random-detect ecn arguments, normalised ("" unset)
}

func (q *TxQueue) empty() bool { return q.Bandwidth == 0 && !q.RoundRobin && q.ECN == "" }

// Interface is an `interface EthernetN` section.
type Interface struct {
	MTU            int // 0: default (1500)
	ServiceProfile string
	PortQoS
	FlowSend    bool
	FlowReceive bool
	Description string
}

// NewConfig is a factory-default configuration with ports Ethernet1..n.
func NewConfig(hostname string, ports int) *Config {
	c := &Config{Hostname: hostname, Model: DefaultModel, Queue: "tx-queue", DSCP: map[int]int{}, CoS: map[int]int{}, Profiles: map[string]*Profile{}, Interfaces: map[string]*Interface{}}
	for i := 1; i <= ports; i++ {
		c.Interfaces["Ethernet"+strconv.Itoa(i)] = NewInterface()
	}
	return c
}

// NewInterface is an interface without configuration.
func NewInterface() *Interface { return &Interface{PortQoS: noPortQoS} }

// NewProfile is an empty qos profile.
func NewProfile() *Profile {
	return &Profile{PortQoS: noPortQoS, TxQueues: map[int]*TxQueue{}, NoDrop: map[int]bool{}}
}

var noPortQoS = PortQoS{CoS: -1, DSCP: -1}

// Clean is the configuration `rollback clean-config` leaves in a
// session: nothing configured (the platform, its built-in DSCP map and
// its ports stay; the hostname is EOS's default until a `hostname` line
// sets it again).
func (c *Config) Clean() *Config {
	n := &Config{Hostname: "localhost", Model: c.Model, Queue: c.Queue, DSCP: map[int]int{}, DSCPDefault: c.DSCPDefault,
		CoS: map[int]int{}, CoSDefault: c.CoSDefault,
		Profiles: map[string]*Profile{}, Interfaces: map[string]*Interface{}}
	for k := range c.Interfaces {
		n.Interfaces[k] = NewInterface()
	}
	return n
}

// Clone deep-copies the configuration (a session's working copy).
func (c *Config) Clone() *Config {
	n := *c
	n.DSCP = map[int]int{}
	for k, v := range c.DSCP {
		n.DSCP[k] = v
	}
	n.CoS = map[int]int{}
	for k, v := range c.CoS {
		n.CoS[k] = v
	}
	// DSCPDefault and CoSDefault are the platform's and never change: shared.
	n.Profiles = map[string]*Profile{}
	for k, p := range c.Profiles {
		np := *p
		np.TxQueues = map[int]*TxQueue{}
		for q, t := range p.TxQueues {
			nt := *t
			np.TxQueues[q] = &nt
		}
		np.NoDrop = map[int]bool{}
		for q, v := range p.NoDrop {
			np.NoDrop[q] = v
		}
		n.Profiles[k] = &np
	}
	n.Interfaces = map[string]*Interface{}
	for k, i := range c.Interfaces {
		ni := *i
		n.Interfaces[k] = &ni
	}
	return &n
}

// interfaceLess orders interface names the way EOS lists them:
// Ethernet2 before Ethernet10, Ethernet1/1 before Ethernet1/2.
func interfaceLess(a, b string) bool {
	na, nb := splitNum(a), splitNum(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		x, ex := strconv.Atoi(na[i])
		y, ey := strconv.Atoi(nb[i])
		if ex == nil && ey == nil {
			if x != y {
				return x < y
			}
			continue
		}
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	return len(na) < len(nb)
}

// splitNum splits "Ethernet1/12" into "Ethernet", "1", "12".
func splitNum(s string) []string {
	var out []string
	cur := ""
	digit := false
	for _, r := range s {
		isD := r >= '0' && r <= '9'
		if r == '/' || r == '.' {
			if cur != "" {
				out = append(out, cur)
			}
			cur, digit = "", false
			continue
		}
		if cur != "" && isD != digit {
			out = append(out, cur)
			cur = ""
		}
		cur += string(r)
		digit = isD
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// Render writes the configuration the way `show running-config` does:
// a "! "-comment header, top-level sections separated by "!", three-space
// indentation per level, a "!" closing nested sections, and "end"
// (napalm-show-running-config.txt).
func (c *Config) Render() string {
	return c.render("! Command: show running-config\n! device: "+c.Hostname+" ("+c.Model+", EOS-4.32.2F)\n", false)
}

// RenderAll is `show running-config all`: the same sections with the
// defaults of the settings the emulator models printed too, as EOS
// prints them (pyeapi-running-config-all.txt, a real vEOS capture): the
// whole DSCP map (configured entries over the built-in map) and an
// interface's `mtu 1500`, `no flowcontrol send|receive`.
func (c *Config) RenderAll() string {
	return c.render("! Command: show running-config all\n! device: "+c.Hostname+" ("+c.Model+", EOS-4.32.2F)\n", true)
}

// effective is the map the switch runs: the built-in map with the
// configured entries over it.
func effective(def, set map[int]int) map[int]int {
	m := map[int]int{}
	for d, tc := range def {
		m[d] = tc
	}
	for d, tc := range set {
		m[d] = tc
	}
	return m
}

// mapLines writes `qos map <kind> <ints> to traffic-class <n>` lines, one
// per traffic class in class order.
func mapLines(b *strings.Builder, kind string, m map[int]int) {
	byTC := map[int][]int{}
	for d, tc := range m {
		byTC[tc] = append(byTC[tc], d)
	}
	tcs := make([]int, 0, len(byTC))
	for tc := range byTC {
		tcs = append(tcs, tc)
	}
	sort.Ints(tcs)
	for _, tc := range tcs {
		ds := byTC[tc]
		sort.Ints(ds)
		b.WriteString("qos map " + kind + " " + joinInts(ds) + " to traffic-class " + strconv.Itoa(tc) + "\n")
	}
}

// RenderStartup is `show startup-config`: the same layout behind a header
// that also says when startup was last written
// (napalm-show-startup-config.txt:11-13).
func (c *Config) RenderStartup(saved time.Time) string {
	return c.render("! Command: show startup-config\n! Startup-config last modified at  "+saved.Format("Mon Jan 2 15:04:05 2006")+
		" by admin\n! device: "+c.Hostname+" ("+c.Model+", EOS-4.32.2F)\n", false)
}

func (c *Config) render(header string, all bool) string {
	var b strings.Builder
	b.WriteString(header + "!\n")
	b.WriteString("! boot system flash:/cEOS-lab.swi\n!\nno aaa root\n!\n")
	b.WriteString("transceiver qsfp default-mode 4x10G\n!\n")
	b.WriteString("hostname " + c.Hostname + "\n!\n")
	b.WriteString("spanning-tree mode mstp\n!\n")
	dscp, cos := c.DSCP, c.CoS
	if all {
		dscp, cos = effective(c.DSCPDefault, c.DSCP), effective(c.CoSDefault, c.CoS)
	}
	// EOS prints the CoS map before the DSCP map (AVD's order,
	// avd-qos-profile.cfg:49-51), each grouped by traffic class.
	mapLines(&b, "cos", cos)
	mapLines(&b, "dscp", dscp)
	if len(dscp) > 0 || len(cos) > 0 {
		b.WriteString("!\n")
	}
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := c.Profiles[n]
		b.WriteString("qos profile " + n + "\n")
		b.WriteString(p.PortQoS.lines("   "))
		qs := make([]int, 0, len(p.TxQueues))
		for q := range p.TxQueues {
			qs = append(qs, q)
		}
		sort.Ints(qs)
		for _, q := range qs {
			t := p.TxQueues[q]
			if t.empty() {
				continue
			}
			// EOS prints `no priority` before `bandwidth percent` (avd-qos-profile.cfg:15-22).
			b.WriteString("   !\n   " + c.Queue + " " + strconv.Itoa(q) + "\n")
			if t.RoundRobin {
				b.WriteString("      no priority\n")
			}
			if t.Bandwidth > 0 {
				b.WriteString("      bandwidth percent " + strconv.Itoa(t.Bandwidth) + "\n")
			}
			if t.ECN != "" {
				b.WriteString("      random-detect ecn " + t.ECN + "\n")
			}
		}
		if p.PFCOn || len(p.NoDrop) > 0 || p.Watchdog || p.WDPortDrop {
			b.WriteString("   !\n")
		}
		if p.PFCOn {
			b.WriteString("   priority-flow-control on\n")
		}
		for q := 0; q < 8; q++ {
			if v, ok := p.NoDrop[q]; ok {
				mode := "drop"
				if v {
					mode = "no-drop"
				}
				b.WriteString("   priority-flow-control priority " + strconv.Itoa(q) + " " + mode + "\n")
			}
		}
		if p.Watchdog {
			b.WriteString("   priority-flow-control pause watchdog\n")
		}
		if p.WDPortDrop {
			b.WriteString("   priority-flow-control pause watchdog port action drop\n")
		}
		b.WriteString("!\n")
	}
	ifs := make([]string, 0, len(c.Interfaces))
	for n := range c.Interfaces {
		ifs = append(ifs, n)
	}
	sort.Slice(ifs, func(i, j int) bool { return interfaceLess(ifs[i], ifs[j]) })
	for _, n := range ifs {
		i := c.Interfaces[n]
		b.WriteString("interface " + n + "\n")
		if i.Description != "" {
			b.WriteString("   description " + i.Description + "\n")
		}
		switch {
		case i.MTU != 0:
			b.WriteString("   mtu " + strconv.Itoa(i.MTU) + "\n")
		case all:
			b.WriteString("   mtu 1500\n") // pyeapi-running-config-all.txt:47
		}
		switch {
		case i.FlowReceive:
			b.WriteString("   flowcontrol receive on\n")
		case all:
			b.WriteString("   no flowcontrol receive\n") // pyeapi-running-config-all.txt:19
		}
		switch {
		case i.FlowSend:
			b.WriteString("   flowcontrol send on\n")
		case all:
			b.WriteString("   no flowcontrol send\n") // pyeapi-running-config-all.txt:18
		}
		if i.ServiceProfile != "" {
			b.WriteString("   service-profile " + i.ServiceProfile + "\n")
		}
		b.WriteString(i.PortQoS.lines("   "))
		b.WriteString("!\n")
	}
	b.WriteString("interface Management0\n   ip address " + mgmtAddress + "\n!\n")
	// The global watchdog lines in AVD's order (avd-pfc-schema.txt:10-14).
	wd := false
	for _, l := range [][2]string{{"default timeout ", c.WDTimeout}, {"default recovery-time ", c.WDRecovery},
		{"default polling-interval ", c.WDPolling}, {"action ", c.WDAction}} {
		if l[1] != "" {
			b.WriteString("priority-flow-control pause watchdog " + l[0] + l[1] + "\n")
			wd = true
		}
	}
	if c.WDOverrideDrop {
		b.WriteString("priority-flow-control pause watchdog override action drop\n")
		wd = true
	}
	if wd {
		b.WriteString("!\n")
	}
	b.WriteString("ip routing\n!\nend\n")
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// mgmtAddress is Management0's address in the emulator's configuration.
const mgmtAddress = "172.20.20.2/24"
