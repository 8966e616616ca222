package spec

import (
	"fmt"
	"strings"
	"testing"
)

// unmanagedSpec is base with an unmanaged attribute (line 3 of its
// block) on the switch, host or nic.
func unmanagedSpec(where, attr string) string {
	sw, h, n := "", "", ""
	switch where {
	case "switch":
		sw = "  " + attr + "\n"
	case "host":
		h = "  " + attr + "\n"
	case "nic":
		n = "    " + attr + "\n"
	}
	return fmt.Sprintf(`fabric "t" {
  transport = "rocev2"
}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
%s}
host "h1" {
  address = "192.0.2.10"
%s  nic "eth1" {
    device = "mlx5_0"
%s  }
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}
`, sw, h, n)
}

// The line each block's attribute is on in unmanagedSpec.
var unmanagedLine = map[string]int{"switch": 7, "host": 10, "nic": 12}

func TestUnmanagedLoad(t *testing.T) {
	good := []struct{ where, key string }{
		{"switch", "trust"}, {"switch", "dscp"}, {"switch", "dscp/26"}, {"switch", "dscp/default"},
		{"switch", "tc/3"}, {"switch", "tc/3/ecn"}, {"switch", "tc/3/ecn/min"}, {"switch", "tc/*/sched"},
		{"switch", "pfcwd/action"}, {"switch", "buffer/headroom"}, {"switch", "port/Ethernet0/pfc"},
		{"switch", "port/Ethernet0"}, {"switch", "port/*/trust"}, {"switch", "*"},
		{"host", "irqbalance"}, {"host", "nccl/NCCL_IB_TC"}, {"host", "nic/eth1/pfc"}, {"host", "nic/*/tos"},
		{"host", "nic/eth1"}, {"host", "nic/eth1/tc/3/max_rate"},
		{"nic", "pfc"}, {"nic", "trust"}, {"nic", "dscp/46"}, {"nic", "tc/3/bandwidth"}, {"nic", "ecn"},
		{"nic", "vlan/mtu"}, {"nic", "buffer/prio"}, {"nic", "buffer/1/size"}, {"nic", "*"},
	}
	for _, g := range good {
		s, diags := load(t, unmanagedSpec(g.where, fmt.Sprintf(`unmanaged = { %q = "left to the site's QoS" }`, g.key)), LoadOptions{Platforms: testPlatforms})
		if diags.HasErrors() {
			t.Errorf("%s %q: %v", g.where, g.key, diags)
			continue
		}
		var got Acceptances
		switch g.where {
		case "switch":
			got = s.Switch("leaf1").Unmanaged
		case "host":
			got = s.Host("h1").Unmanaged
		case "nic":
			got = s.Host("h1").NIC("eth1").Unmanaged
		}
		if got[g.key] != "left to the site's QoS" {
			t.Errorf("%s %q: unmanaged %v", g.where, g.key, got)
		}
	}
	bad := []struct{ where, attr, want string }{
		{"switch", `unmanaged = { "pfcc" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "tc/9" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "tc/3/shed" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "tc/3/max_rate" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "dscp/64" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "pfcwd/timer" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "irqbalance" = "x" }`, `is not a setting a switch has`},
		{"switch", `unmanaged = { "port/Ethernet9/pfc" = "x" }`, `names port "Ethernet9"`},
		{"switch", `unmanaged = { "port/Ethernet0/pcf" = "x" }`, `names port "Ethernet0/pcf"`},
		{"switch", `unmanaged = { "trust" = " " }`, `Unmanaged setting needs a reason`},
		{"switch", `unmanaged = { "/trust" = "x" }`, `is not a setting path`},
		{"host", `unmanaged = { "pfc" = "x" }`, `is not a setting a host has`},
		{"host", `unmanaged = { "nic/eth2/pfc" = "x" }`, `nic "eth2"`},
		{"host", `unmanaged = { "nic/eth1/pfcx" = "x" }`, `is not a setting a host has`},
		{"nic", `unmanaged = { "port/Ethernet0/pfc" = "x" }`, `is not a setting a nic has`},
		{"nic", `unmanaged = { "tc/3/ecn/min" = "x" }`, `is not a setting a nic has`},
		{"nic", `unmanaged = ["pfc"]`, `unmanaged`},
		{"switch", `unmanaged = { "trust" = "x" }` + "\n  " + `accept_not_in_effect = { "trust" = "y" }`, `both unmanaged and in accept_not_in_effect`},
		{"nic", `unmanaged = { "pfc" = "x" }` + "\n    " + `accept_not_in_effect = { "pfc" = "y" }`, `both unmanaged and in accept_not_in_effect`},
	}
	for _, b := range bad {
		_, diags := load(t, unmanagedSpec(b.where, b.attr), LoadOptions{Platforms: testPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), b.want) {
			t.Errorf("%s %s: %v, want %q", b.where, b.attr, diags, b.want)
			continue
		}
		for _, d := range diags.Errs() {
			if !strings.Contains(d.Error(), b.want) {
				continue
			}
			if want := fmt.Sprintf("t.fab.hcl:%d,", unmanagedLine[b.where]); !strings.HasPrefix(d.Error(), want) {
				t.Errorf("%s %s: error at %q, want %s", b.where, b.attr, d.Error(), want)
			}
		}
	}
}

func TestUnmanagedOverride(t *testing.T) {
	over := `switch "leaf1" {
  unmanaged = { "port/*/trust" = "the site's port trust" }
}
host "h1" {
  unmanaged = { "nic/eth1/tos" = "set by the job launcher" }
}
`
	s, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "x_override.fab.hcl", Data: []byte(over)}}, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if why, ok := s.Switch("leaf1").Unmanaged.Match("port/Ethernet0/trust"); !ok || why != "the site's port trust" {
		t.Errorf("switch: %q %v", why, ok)
	}
	if why, ok := s.Host("h1").Unmanaged.Match("nic/eth1/tos"); !ok || why != "set by the job launcher" {
		t.Errorf("host: %q %v", why, ok)
	}
	for _, tt := range []struct{ over, want string }{
		{`switch "leaf1" { unmanaged = { "pfcc" = "x" } }`, `is not a setting a switch has`},
		{`switch "leaf1" { unmanaged = { "trust" = "" } }`, `is empty: say why fabctl leaves`},
		{`switch "leaf1" { unmanaged = { "port/Ethernet7/pfc" = "x" } }`, `names port "Ethernet7"`},
		{`host "h1" { unmanaged = { "nic/eth9/pfc" = "x" } }`, `names nic "eth9"`},
		{`host "h1" { unmanaged = "all" }`, `must be a map of quoted strings`},
		{"host \"h1\" {\n  unmanaged = { \"irqbalance\" = \"x\" }\n  accept_not_in_effect = { \"irqbalance\" = \"y\" }\n}", `both unmanaged and in accept_not_in_effect`},
	} {
		_, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "x_override.fab.hcl", Data: []byte(tt.over)}}, LoadOptions{Platforms: testPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.want) || !strings.Contains(diags.Error(), "x_override.fab.hcl:") {
			t.Errorf("%s: want error with %q at x_override.fab.hcl, got %v", tt.over, tt.want, diags)
		}
	}
}

// ibUnmanagedSpec is an InfiniBand fabric whose infiniband block has
// attr on line 12.
func ibUnmanagedSpec(attr string) string {
	return `fabric "t" {
  transport = "infiniband"
}
host "sm01" {
  address = "192.0.2.10"
  nic "ib0" {
    device = "mlx5_0"
  }
}
infiniband {
  subnet_manager = "sm01"
  ` + attr + `
  partition "Storage" {
    pkey    = "0x8001"
    members = ["sm01"]
  }
}
`
}

// TestUnmanagedInfiniBand: the infiniband block's unmanaged keys are the
// subnet manager's state paths (partitions, the QoS policy, opensm.conf
// options, the fabric ports' tables), checked as the other blocks' are,
// with the block's line.
func TestUnmanagedInfiniBand(t *testing.T) {
	for _, key := range []string{
		"partitions/Site", "partitions/Default/mgid/ff12:401b::16", "partitions/*/member/ALL_CAS", "partitions/Storage/sl",
		"partitions/Default/flag/scope", "partitions/unparsed/2", "partitions/Storage/member/0x0002c90300000001",
		"qos-policy", "qos-policy/section/port-groups", "qos-policy/level/WholeSet", "qos-policy/level/WholeSet/sl",
		"qos-policy/match/2", "qos-policy/unparsed/1", "opensm/qos_ca_sl2vl", "opensm", "ib/leaf1/3/vlarb_low",
		"ib/cn01/ib0/pkey/Storage", "ib/*/sl2vl", "*",
	} {
		s, diags := load(t, ibUnmanagedSpec(fmt.Sprintf(`unmanaged = { %q = "the site's own" }`, key)), LoadOptions{Platforms: testPlatforms})
		if diags.HasErrors() {
			t.Errorf("%q: %v", key, diags)
			continue
		}
		if got := s.InfiniBand.Unmanaged; got[key] != "the site's own" {
			t.Errorf("%q: unmanaged %v", key, got)
		}
	}
	for _, b := range []struct{ attr, want string }{
		{`unmanaged = { "pfc" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "partitions/Storage/pkeys" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "partitions/Storage/sl/1" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "partitions/unparsed/x" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "qos-policy/levels" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "qos-policy/match/first" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "opensm/QoS" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "opensm/qos/x" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "ib/leaf1/3/mtu" = "x" }`, `is not a setting the subnet manager has`},
		{`unmanaged = { "partitions/Site" = "" }`, `Unmanaged setting needs a reason`},
		{`unmanaged = { "partitions//Site" = "x" }`, `is not a setting path`},
		{`unmanaged = ["partitions/Site"]`, `unmanaged`},
	} {
		_, diags := load(t, ibUnmanagedSpec(b.attr), LoadOptions{Platforms: testPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.attr, diags, b.want)
			continue
		}
		for _, d := range diags.Errs() {
			if strings.Contains(d.Error(), b.want) && !strings.HasPrefix(d.Error(), "t.fab.hcl:12,") {
				t.Errorf("%s: error at %q, want t.fab.hcl:12", b.attr, d.Error())
			}
		}
	}
}
