package eosemu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Config is the emulator's parsed running configuration: the parts of
// EOS configuration it implements. Defaults are not stored (and not
// shown), as on EOS: an interface without `mtu` has the default L3 MTU
// 1500, a tx-queue without `no priority` is strict priority, a DSCP
// without a `qos map dscp` entry maps to traffic class DSCP/8.
type Config struct {
	Hostname string
	// DSCP holds the non-default `qos map dscp D to traffic-class T`.
	DSCP     map[int]int
	Profiles map[string]*Profile
	// Watchdog is the global `priority-flow-control pause watchdog
	// default timeout T recovery-time R polling-interval P` ("" unset).
	WDTimeout, WDRecovery, WDPolling string
	// WDOverrideDrop is `priority-flow-control pause watchdog override action drop`.
	WDOverrideDrop bool
	Interfaces     map[string]*Interface
}

// Profile is one `qos profile NAME`.
type Profile struct {
	Trust    string // "", "dscp", "cos"
	TxQueues map[int]*TxQueue
	PFCOn    bool
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
	FlowSend       bool
	FlowReceive    bool
	Description    string
}

// NewConfig is a factory-default configuration with ports Ethernet1..n.
func NewConfig(hostname string, ports int) *Config {
	c := &Config{Hostname: hostname, DSCP: map[int]int{}, Profiles: map[string]*Profile{}, Interfaces: map[string]*Interface{}}
	for i := 1; i <= ports; i++ {
		c.Interfaces["Ethernet"+strconv.Itoa(i)] = &Interface{}
	}
	return c
}

// Clone deep-copies the configuration (a session's working copy).
func (c *Config) Clone() *Config {
	n := *c
	n.DSCP = map[int]int{}
	for k, v := range c.DSCP {
		n.DSCP[k] = v
	}
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
// top-level sections separated by "!", three-space indentation per
// level, a "!" closing nested sections, and "end".
func (c *Config) Render() string {
	var b strings.Builder
	b.WriteString("! Command: show running-config\n! device: " + c.Hostname + " (cEOS-lab, EOS-4.32.2F)\n!\n")
	b.WriteString("! boot system flash:/cEOS-lab.swi\n!\nno aaa root\n!\n")
	b.WriteString("transceiver qsfp default-mode 4x10G\n!\n")
	b.WriteString("hostname " + c.Hostname + "\n!\n")
	b.WriteString("spanning-tree mode mstp\n!\n")
	if len(c.DSCP) > 0 {
		byTC := map[int][]int{}
		for d, tc := range c.DSCP {
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
			b.WriteString("qos map dscp " + joinInts(ds) + " to traffic-class " + strconv.Itoa(tc) + "\n")
		}
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
		if p.Trust != "" {
			b.WriteString("   qos trust " + p.Trust + "\n")
		}
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
			b.WriteString("   !\n   tx-queue " + strconv.Itoa(q) + "\n")
			if t.Bandwidth > 0 {
				b.WriteString("      bandwidth percent " + strconv.Itoa(t.Bandwidth) + "\n")
			}
			if t.RoundRobin {
				b.WriteString("      no priority\n")
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
			if p.NoDrop[q] {
				b.WriteString("   priority-flow-control priority " + strconv.Itoa(q) + " no-drop\n")
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
		if i.MTU != 0 {
			b.WriteString("   mtu " + strconv.Itoa(i.MTU) + "\n")
		}
		if i.FlowReceive {
			b.WriteString("   flowcontrol receive on\n")
		}
		if i.FlowSend {
			b.WriteString("   flowcontrol send on\n")
		}
		if i.ServiceProfile != "" {
			b.WriteString("   service-profile " + i.ServiceProfile + "\n")
		}
		b.WriteString("!\n")
	}
	b.WriteString("interface Management0\n   ip address 172.20.20.2/24\n!\n")
	if c.WDTimeout != "" {
		b.WriteString(fmt.Sprintf("priority-flow-control pause watchdog default timeout %s recovery-time %s polling-interval %s\n", c.WDTimeout, c.WDRecovery, c.WDPolling))
	}
	if c.WDOverrideDrop {
		b.WriteString("priority-flow-control pause watchdog override action drop\n")
	}
	if c.WDTimeout != "" || c.WDOverrideDrop {
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
