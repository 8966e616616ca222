package nxosemu

import (
	"sort"
	"strconv"
	"strings"
)

// Config is the emulator's parsed running configuration: the parts of
// NX-OS configuration it implements. Defaults are not stored and not
// shown, as on NX-OS: an interface without `mtu` has MTU 1500, without
// `priority-flow-control mode` it is in mode auto (cisco-pfc-guide.txt:13).
type Config struct {
	Hostname string
	// ClassMaps are `class-map type qos match-any NAME` (qos type only).
	ClassMaps map[string]*ClassMap
	// Policies are keyed by type ("qos", "queuing", "network-qos") and name.
	Policies map[string]map[string]*Policy
	// System qos service policies ("" unset).
	SysQueuingOut, SysNetworkQoS, SysQoSInput string
	// WDInterval is `priority-flow-control watch-dog-interval on` ("" unset).
	WDInterval string
	// DefaultSwitchport is `system default switchport`: interfaces
	// without their own `switchport`/`no switchport` are layer 2
	// (cisco.nxos @154aa540 plugins/module_utils/network/nxos/nxos.py
	// l.995-998; config/interfaces/interfaces.py l.205-211). Set only
	// by Options.DefaultSwitchport (no configuration command modelled).
	DefaultSwitchport bool
	Interfaces        map[string]*Interface
}

// ClassMap is a qos class-map: the DSCP values its `match dscp`
// statements name (NX-OS shows them merged in one statement).
type ClassMap struct {
	MatchAll bool // match-all (default: match-any)
	DSCP     [64]bool
	COS      [8]bool
}

func (c *ClassMap) empty() bool { return dscpList(c.DSCP[:]) == "" && dscpList(c.COS[:]) == "" }

// Policy is one policy-map with its classes in configuration order.
type Policy struct {
	Classes []*Class
}

func (p *Policy) class(name string) *Class {
	for _, c := range p.Classes {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Class is a class inside a policy-map.
type Class struct {
	Name      string
	QosGroup  int // set qos-group N (-1 unset)
	Bandwidth int // bandwidth remaining percent N (-1 unset)
	// BandwidthPct is bandwidth percent N (0 unset; microsoft-azure-local-n9k.cfg:44).
	BandwidthPct int
	Priority     int    // priority level N (0 unset)
	WRED         string // random-detect arguments, normalised ("" unset)
	MTU          int    // network-qos mtu (0 unset)
	PauseCOS     [8]bool
}

func newClass(name string) *Class { return &Class{Name: name, QosGroup: -1, Bandwidth: -1} }

// Interface is an `interface EthernetX/Y` section.
type Interface struct {
	// Mode is the interface's own `switchport` (layer 2) or `no
	// switchport` (layer 3, routed) line, "" when it has none and the
	// system default applies (cisco.nxos rm_templates/interfaces.py
	// l.154-157; Cisco TechNote 118994 "Configure MTU on a Layer 3 Port":
	// `no switchport`, `mtu 9216`).
	Mode        string
	MTU         int    // 0: default 1500
	PFCMode     string // "" (auto), "on", "off"
	WD          string // watch-dog-interval "" (follows global), "on", "off"
	QoSInput    string // service-policy type qos input NAME
	FlowReceive bool
	FlowSend    bool
	Description string
	Shutdown    bool
}

// NewConfig is a factory-default configuration with ports Ethernet1/1..n.
func NewConfig(hostname string, ports int) *Config {
	c := &Config{Hostname: hostname, ClassMaps: map[string]*ClassMap{},
		Policies:   map[string]map[string]*Policy{"qos": {}, "queuing": {}, "network-qos": {}},
		Interfaces: map[string]*Interface{}}
	for i := 1; i <= ports; i++ {
		c.Interfaces["Ethernet1/"+strconv.Itoa(i)] = &Interface{}
	}
	return c
}

// Clone deep-copies the configuration (a checkpoint).
// L2 reports whether an interface is a layer-2 (switched) port.
func (c *Config) L2(i *Interface) bool {
	return i.Mode == "switchport" || i.Mode == "" && c.DefaultSwitchport
}

func (c *Config) Clone() *Config {
	n := *c
	n.ClassMaps = map[string]*ClassMap{}
	for k, v := range c.ClassMaps {
		x := *v
		n.ClassMaps[k] = &x
	}
	n.Policies = map[string]map[string]*Policy{}
	for t, m := range c.Policies {
		n.Policies[t] = map[string]*Policy{}
		for k, p := range m {
			np := &Policy{}
			for _, cl := range p.Classes {
				x := *cl
				np.Classes = append(np.Classes, &x)
			}
			n.Policies[t][k] = np
		}
	}
	n.Interfaces = map[string]*Interface{}
	for k, i := range c.Interfaces {
		x := *i
		n.Interfaces[k] = &x
	}
	return &n
}

// dscpList renders a value set as NX-OS lists it: "24-31,48".
func dscpList(set []bool) string {
	var parts []string
	for i := 0; i < len(set); i++ {
		if !set[i] {
			continue
		}
		j := i
		for j+1 < len(set) && set[j+1] {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(i)+"-"+strconv.Itoa(j))
		} else {
			parts = append(parts, strconv.Itoa(i))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// parseList parses "24-31,48" (values 0..max) into the values.
func parseList(s string, max int) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(p, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > max {
			return nil, false
		}
		b := a
		if rng {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > max {
				return nil, false
			}
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out, len(out) > 0
}

// interfaceLess orders Ethernet1/2 before Ethernet1/10.
func interfaceLess(a, b string) bool {
	na, nb := nums(a), nums(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

func nums(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Render writes the configuration the way `show running-config` does
// (without the "!Command"/"!Running configuration last done at" header
// lines, which the shell adds): two-space indentation per level, class
// maps, policy maps by type, system qos, global PFC lines, interfaces,
// a blank line before each interface.
func (c *Config) Render() string {
	var b strings.Builder
	b.WriteString("version 10.4(3) Bios:version  \n")
	b.WriteString("hostname " + c.Hostname + "\n")
	if c.DefaultSwitchport {
		// A global line near the top, as in a real 9.4(2a) running-config
		// (`system default switchport trunk mode off` after `power
		// redundancy-mode`).
		b.WriteString("system default switchport\n")
	}
	b.WriteString("feature lldp\n\n")
	b.WriteString("username admin password 5 $5$FABCTLEMU$redacted  role network-admin\n")
	b.WriteString("ip domain-lookup\n")
	for _, n := range sortedKeys(c.ClassMaps) {
		cm := c.ClassMaps[n]
		kind := "match-any"
		if cm.MatchAll {
			kind = "match-all"
		}
		b.WriteString("class-map type qos " + kind + " " + n + "\n")
		if l := dscpList(cm.DSCP[:]); l != "" {
			b.WriteString("  match dscp " + l + "\n")
		}
		if l := dscpList(cm.COS[:]); l != "" {
			b.WriteString("  match cos " + l + "\n")
		}
	}
	for _, n := range sortedKeys(c.Policies["qos"]) {
		b.WriteString("policy-map type qos " + n + "\n")
		for _, cl := range c.Policies["qos"][n].Classes {
			b.WriteString("  class " + cl.Name + "\n")
			if cl.QosGroup >= 0 {
				b.WriteString("    set qos-group " + strconv.Itoa(cl.QosGroup) + "\n")
			}
		}
	}
	for _, n := range sortedKeys(c.Policies["queuing"]) {
		b.WriteString("policy-map type queuing " + n + "\n")
		for _, cl := range c.Policies["queuing"][n].Classes {
			b.WriteString("  class type queuing " + cl.Name + "\n")
			if cl.Priority > 0 {
				b.WriteString("    priority level " + strconv.Itoa(cl.Priority) + "\n")
			}
			if cl.Bandwidth >= 0 {
				b.WriteString("    bandwidth remaining percent " + strconv.Itoa(cl.Bandwidth) + "\n")
			}
			if cl.BandwidthPct > 0 {
				b.WriteString("    bandwidth percent " + strconv.Itoa(cl.BandwidthPct) + "\n")
			}
			if cl.WRED != "" {
				b.WriteString("    random-detect " + cl.WRED + "\n")
			}
		}
	}
	for _, n := range sortedKeys(c.Policies["network-qos"]) {
		b.WriteString("policy-map type network-qos " + n + "\n")
		for _, cl := range c.Policies["network-qos"][n].Classes {
			b.WriteString("  class type network-qos " + cl.Name + "\n")
			if l := dscpList(cl.PauseCOS[:]); l != "" {
				b.WriteString("    pause pfc-cos " + l + "\n")
			}
			if cl.MTU > 0 {
				b.WriteString("    mtu " + strconv.Itoa(cl.MTU) + "\n")
			}
		}
	}
	if c.SysQueuingOut != "" || c.SysNetworkQoS != "" || c.SysQoSInput != "" {
		b.WriteString("system qos\n")
		if c.SysQoSInput != "" {
			b.WriteString("  service-policy type qos input " + c.SysQoSInput + "\n")
		}
		if c.SysQueuingOut != "" {
			b.WriteString("  service-policy type queuing output " + c.SysQueuingOut + "\n")
		}
		if c.SysNetworkQoS != "" {
			b.WriteString("  service-policy type network-qos " + c.SysNetworkQoS + "\n")
		}
	}
	if c.WDInterval != "" {
		b.WriteString("priority-flow-control watch-dog-interval " + c.WDInterval + "\n")
	}
	b.WriteString("vrf context management\n  ip route 0.0.0.0/0 172.20.20.1\n")
	names := sortedKeys(c.Interfaces)
	sort.Slice(names, func(i, j int) bool { return interfaceLess(names[i], names[j]) })
	for _, n := range names {
		i := c.Interfaces[n]
		b.WriteString("\ninterface " + n + "\n")
		if i.Description != "" {
			b.WriteString("  description " + i.Description + "\n")
		}
		if i.Mode != "" {
			b.WriteString("  " + i.Mode + "\n")
		}
		if i.PFCMode != "" {
			b.WriteString("  priority-flow-control mode " + i.PFCMode + "\n")
		}
		if i.WD != "" {
			b.WriteString("  priority-flow-control watch-dog-interval " + i.WD + "\n")
		}
		if i.MTU != 0 {
			b.WriteString("  mtu " + strconv.Itoa(i.MTU) + "\n")
		}
		if i.FlowReceive {
			b.WriteString("  flowcontrol receive on\n")
		}
		if i.FlowSend {
			b.WriteString("  flowcontrol send on\n")
		}
		if i.QoSInput != "" {
			b.WriteString("  service-policy type qos input " + i.QoSInput + "\n")
		}
		if !i.Shutdown {
			b.WriteString("  no shutdown\n")
		}
	}
	b.WriteString("\ninterface mgmt0\n  vrf member management\n  ip address 172.20.20.14/24\n")
	b.WriteString("line console\nline vty\n")
	return b.String()
}
