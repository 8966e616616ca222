package spec

import (
	"strings"
	"testing"
)

func TestAcceptancesMatch(t *testing.T) {
	a := Acceptances{"*": "all", "pfc": "no pfc", "port/*/pfc": "ports", "dscp": "dscp table", "tc/3": "tc 3"}
	for path, want := range map[string]string{
		"pfc":                  "no pfc",
		"port/Ethernet1/1/pfc": "ports", // '*' crosses the '/' in a port name
		"dscp/26":              "dscp table",
		"dscp/default":         "dscp table",
		"tc/3/ecn/min":         "tc 3",
		"tc/4/lossless":        "all",
		"cnp_dscp":             "all",
		"port/Ethernet0/cable": "all",
		"pfcx":                 "all", // "pfc" is a whole segment, not a prefix
	} {
		if got, ok := a.Match(path); !ok || got != want {
			t.Errorf("%s: got %q, %v; want %q", path, got, ok, want)
		}
	}
	b := Acceptances{"tc/*/lossless": "x", "ecn": "y"}
	for _, path := range []string{"tc/3/sched", "ecnx", "pfc", "ecn2/x"} {
		if got, ok := b.Match(path); ok {
			t.Errorf("%s accepted by %q", path, got)
		}
	}
	if _, ok := Acceptances(nil).Match("pfc"); ok {
		t.Error("nil acceptances accept")
	}
	// A pathological pattern stays linear.
	long := strings.Repeat("a", 4000)
	if _, ok := (Acceptances{strings.Repeat("*a", 200) + "b": "x"}).Match(long); ok {
		t.Error("matched")
	}
}

func TestAcceptancesLoad(t *testing.T) {
	src := `
fabric "t" {}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  accept_not_in_effect = { "port/*/cable" = "headroom left to buffermgrd" }
}
host "h1" {
  address = "192.0.2.10"
  accept_not_in_effect = { "nic/*/ecn" = "upstream mlx5" }
  nic "eth1" {
    device = "rxe0"
    accept_not_in_effect = { "*" = "veth: no DCB" }
  }
}
`
	s, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s.Switch("leaf1").Accept["port/*/cable"] == "" || s.Host("h1").Accept["nic/*/ecn"] == "" || s.Host("h1").NIC("eth1").Accept["*"] != "veth: no DCB" {
		t.Errorf("acceptances: %v %v %v", s.Switch("leaf1").Accept, s.Host("h1").Accept, s.Host("h1").NIC("eth1").Accept)
	}
	for bad, want := range map[string]string{
		`{ "pfc" = " " }`:   "Acceptance needs a reason",
		`{ "" = "x" }`:      "Invalid setting in accept_not_in_effect",
		`{ "/pfc" = "x" }`:  "is not a setting path",
		`{ "a b" = "x" }`:   "printable ASCII",
		`{ "tc//3" = "x" }`: "is not a setting path",
		`["pfc"]`:           "accept_not_in_effect",
	} {
		_, diags := load(t, "fabric \"t\" {}\nhost \"h1\" {\n  accept_not_in_effect = "+bad+"\n}\n", LoadOptions{Platforms: testPlatforms})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, diags, want)
		}
	}
}
