package spec

import (
	"strings"
	"testing"
)

func TestOverrideFiles(t *testing.T) {
	lab := `credentials "lab" {
  username = "admin"
  password = env("LAB_PW")
}
`
	over := `switch "leaf1" {
  address     = "172.100.100.11"
  credentials = "lab"
}
host "h1" {
  connect = "ssh"
  address = "172.100.100.31"
  sudo    = true
}
`
	s, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "lab.fab.hcl", Data: []byte(lab)},
		{Name: "clab_override.fab.hcl", Data: []byte(over)}}, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if sw := s.Switch("leaf1"); sw.Address != "172.100.100.11" || sw.Credentials != "lab" {
		t.Fatalf("switch: %+v", sw)
	}
	if h := s.Host("h1"); h.Address != "172.100.100.31" || h.Connect.Kind != "ssh" || !h.Sudo {
		t.Fatalf("host: %+v", h)
	}

	for _, tt := range []struct{ over, want string }{
		{`switch "leaf2" { address = "x" }`, `there is no switch "leaf2". Did you mean "leaf1"?`},
		{`switch "leaf1" { credentials = "lap" }`, `no credentials block "lap". Did you mean "lab"?`},
		{`switch "leaf1" { role = "spine" }`, `Unsupported argument`},
		{`host "h1" { connect = "telnet" }`, `connect = "telnet"`},
		{`host "h1" { address = upper("x") }`, `must be a quoted string`},
		{`switch "leaf1" { address = "a" }` + "\n" + `switch "leaf1" { address = "b" }`, `overridden twice`},
		{`fabric "x" {}`, `Unsupported block type`},
		{`switch "leaf1" { driver = "gnmi" }`, `driver is not an attribute: the platform picks the driver`},
		{`host "h1" { accept_not_in_effect = "all" }`, `must be a map of quoted strings`},
		{`host "h1" { accept_not_in_effect = { "pfc" = "" } }`, `is empty: say why`},
		{`host "h1" { accept_not_in_effect = { "pfc" = upper("x") } }`, `must be a map of quoted strings`},
		{`host "h1" { accept_not_in_effect = { "" = "x" } }`, `accept_not_in_effect key ""`},
		{`host "h1" { sudo = "yes" }`, `sudo must be true or false`},
		{`host "h1" { sudo = !false }`, `sudo must be true or false`},
		{`switch "leaf1" { sudo = true }`, `Unsupported argument`},
	} {
		_, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "lab.fab.hcl", Data: []byte(lab)},
			{Name: "x_override.fab.hcl", Data: []byte(tt.over)}}, LoadOptions{Platforms: testPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%s: want error with %q, got %v", tt.over, tt.want, diags)
		}
	}
}

// Issue 40 (first run, defect 21): an override may accept what the
// device reached that way cannot express (a testbed's veth hosts), added
// to the block's own acceptances.
func TestOverrideAcceptNotInEffect(t *testing.T) {
	over := `host "h1" {
  connect = "netns:fab-h1"
  accept_not_in_effect = {
    "*" = "testbed host: a veth"
  }
}
switch "leaf1" {
  accept_not_in_effect = { "port/*/pfc" = "lab switch" }
}
`
	s, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "x_override.fab.hcl", Data: []byte(over)}}, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if why, ok := s.Host("h1").Accept.Match("nic/eth1/pfc"); !ok || why != "testbed host: a veth" {
		t.Errorf("host: %q %v (%v)", why, ok, s.Host("h1").Accept)
	}
	if why, ok := s.Switch("leaf1").Accept.Match("port/Ethernet0/pfc"); !ok || why != "lab switch" {
		t.Errorf("switch: %q %v", why, ok)
	}
}

// FuzzOverride: an override file of any content gives diagnostics, never
// a panic (accept_not_in_effect is the one attribute that is not a
// string).
func FuzzOverride(f *testing.F) {
	for _, seed := range []string{
		`host "h1" { accept_not_in_effect = { "*" = "veth" } }`,
		`switch "leaf1" { accept_not_in_effect = { "port/*/pfc" = "lab" } }`,
		`host "h1" { accept_not_in_effect = { "a" = { "b" = "c" } } }`,
		`host "h1" { accept_not_in_effect = ["x"] }`,
		`switch "leaf1" { address = "127.0.0.1:2222" }`,
		`switch "leaf1" { unmanaged = { "port/*/trust" = "site QoS" } }`,
		`host "h1" { unmanaged = { "nic/eth1/tos" = "launcher" } }`,
		"host \"h1\" {\n  unmanaged = { \"irqbalance\" = \"x\" }\n  accept_not_in_effect = { \"irqbalance\" = \"y\" }\n}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, over []byte) {
		s, d := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(base)}, {Name: "x_override.fab.hcl", Data: over}}, LoadOptions{Platforms: testPlatforms})
		if s == nil {
			t.Fatal("nil spec")
		}
		_ = ToJSON(d, s.Files)
	})
}
