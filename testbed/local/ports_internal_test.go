package local

import (
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
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

	bad := testutil.LoadSrc(t, `
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
  endpoints = ["leaf1:swp1", "spine1:swp1"]
  speed     = "400G"
}
`)
	if _, _, err := portsNeeded(bad); err == nil || !strings.Contains(err.Error(), "spine1:swp1 (eos names its ports like Ethernet1, Ethernet2)") {
		t.Fatalf("want a refusal naming spine1:swp1, got %v", err)
	}
}
