package local

import (
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// Each emulator has every port the spec names on its switch, including
// names the numbered list does not produce (an EOS split lane, a SONiC
// breakout lane); a name its platform cannot have is refused.
func TestPortsNeeded(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "t" {}
switch "spine1" {
  platform = "eos"
  address  = "127.0.0.21:2222"
}
switch "leaf1" {
  platform = "sonic"
  address  = "127.0.0.11:2222"
}
switch "leaf2" {
  platform = "nxos"
  address  = "127.0.0.12:2222"
}
link {
  endpoints = ["leaf1:Ethernet5", "spine1:Ethernet1/1"]
  speed     = "400G"
}
link {
  endpoints = ["leaf2:Ethernet2/1", "spine1:Ethernet12"]
  speed     = "400G"
}
`)
	count, extra, err := portsNeeded(s)
	if err != nil {
		t.Fatal(err)
	}
	if count["spine1"] != 12 || !slices.Equal(extra["spine1"], []string{"Ethernet1/1"}) {
		t.Errorf("spine1: %d ports, extra %v", count["spine1"], extra["spine1"])
	}
	if count["leaf1"] != 32 || !slices.Equal(extra["leaf1"], []string{"Ethernet5"}) {
		t.Errorf("leaf1: %d ports, extra %v", count["leaf1"], extra["leaf1"])
	}
	if count["leaf2"] != 8 || !slices.Equal(extra["leaf2"], []string{"Ethernet2/1"}) {
		t.Errorf("leaf2: %d ports, extra %v", count["leaf2"], extra["leaf2"])
	}

	// The loader refuses a name the platform cannot have, at its file:line
	// (spec's typed identifiers); testbed up refuses it again for a spec
	// that reached it another way, e.g. changed after the load.
	badSrc := `
fabric "t" {}
switch "spine1" {
  platform = "eos"
  address  = "127.0.0.21:2222"
}
switch "leaf1" {
  platform = "cumulus"
  address  = "127.0.0.11:2222"
}
link {
  endpoints = ["leaf1:swp1", "spine1:SPINEPORT"]
  speed     = "400G"
}
`
	if _, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(strings.Replace(badSrc, "SPINEPORT", "swp1", 1))}}, spec.LoadOptions{Platforms: testutil.Platforms()}); !diags.HasErrors() || !strings.Contains(diags.Error(), `port "swp1" is not a port name of this platform`) {
		t.Fatalf("the loader took spine1:swp1: %v", diags)
	}
	bad := testutil.LoadSrc(t, strings.Replace(badSrc, "SPINEPORT", "Ethernet1", 1))
	for _, sw := range bad.Switches {
		for _, p := range sw.Ports {
			if sw.Name == "spine1" && p.Name == "Ethernet1" {
				p.Name = "swp1"
			}
		}
	}
	if _, _, err := portsNeeded(bad); err == nil || !strings.Contains(err.Error(), "spine1:swp1 (eos names its ports like Ethernet1, Ethernet2)") {
		t.Fatalf("want a refusal naming spine1:swp1, got %v", err)
	}
}

// The record names the fabric and the plan address of every device the
// testbed makes (testbed down drops them from the applied record).
func TestRecordDevices(t *testing.T) {
	s := testutil.LoadSrc(t, `
fabric "pod" {}
credentials "c" {
  username = "admin"
  password = env("PW")
}
switch "leaf1" {
  platform    = "sonic"
  address     = "127.0.0.11:2222"
  credentials = "c"
}
host "h1" {
  connect = "netns:fab-h1"
  nic "eth1" {}
}
host "h2" {
  connect = "local"
  nic "eth1" {}
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}
`)
	r, err := planRecord(s, "fab-fabric")
	if err != nil {
		t.Fatal(err)
	}
	if r.Fabric != "pod" || !slices.Equal(r.Devices, []string{"switch.leaf1", "host.h1"}) {
		t.Errorf("fabric %q devices %v", r.Fabric, r.Devices)
	}
}
