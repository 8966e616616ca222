package portlink

import (
	"context"
	"testing"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
)

const fabric = `
fabric "f" {
  transport = "rocev2"
}
switch "leaf1" {
  platform  = "sonic"
  address   = "192.0.2.1"
  lldp_name = "leaf1.example.net"
}
switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
}
host "h1" {
  address = "192.0.2.11"
  nic "eth1" {
    device = "mlx5_0"
  }
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}
link {
  endpoints = ["leaf1:Ethernet4", "spine1:Ethernet0"]
  speed     = "400G"
}
`

// TestFromSpec: each end on the switch is up at the link's speed and
// hears the far end as it advertises itself (a host's netdev in the Port
// Description, a switch's port as its Port ID, lldp_name when set).
func TestFromSpec(t *testing.T) {
	s := loadSpec(t)
	got := FromSpec(s, "leaf1")
	if len(got) != 2 {
		t.Fatalf("ports: %v", got)
	}
	h := got["Ethernet0"]
	if h.Oper != linktruth.Up || h.SpeedMbps != 100_000 || len(h.Neighbors) != 1 ||
		h.Neighbors[0].SystemName != "h1" || h.Neighbors[0].PortDesc != "eth1" {
		t.Errorf("host end: %+v", h)
	}
	sp := FromSpec(s, "spine1")["Ethernet0"]
	if sp.SpeedMbps != 400_000 || sp.Neighbors[0].SystemName != "leaf1.example.net" || sp.Neighbors[0].PortID != "Ethernet4" {
		t.Errorf("spine end: %+v", sp)
	}
	// Compare accepts what FromSpec reports on both switches.
	reads := map[string]linktruth.Read{
		"switch.leaf1":  {Links: &linktruth.DeviceLinks{Ports: ptrs(got), LLDP: true}},
		"switch.spine1": {Links: &linktruth.DeviceLinks{Ports: ptrs(FromSpec(s, "spine1")), LLDP: true}},
	}
	r := linktruth.Compare(s, reads)
	for _, f := range r.Findings {
		if f.Device != "host.h1" {
			t.Errorf("finding on a switch cabled as the spec says: %+v", f)
		}
	}
}

// TestStaticCopies: Ports and With never let a caller change the source.
func TestStaticCopies(t *testing.T) {
	s := Static{"Ethernet0": {Port: "Ethernet0", Oper: linktruth.Up, Counters: &linktruth.Counters{}, Neighbors: []linktruth.Neighbor{{SystemName: "a"}}}}
	p, _ := s.Ports(context.Background())
	o := p["Ethernet0"]
	o.Counters.InErrors = 9
	o.Neighbors[0].SystemName = "b"
	if s["Ethernet0"].Counters.InErrors != 0 || s["Ethernet0"].Neighbors[0].SystemName != "a" {
		t.Fatal("Ports returned shared state")
	}
	d := s.With("Ethernet0", linktruth.Observation{Oper: linktruth.Down})
	if s["Ethernet0"].Oper != linktruth.Up || d["Ethernet0"].Oper != linktruth.Down || d["Ethernet0"].Port != "Ethernet0" {
		t.Fatal("With changed the original or lost the port name")
	}
}

func ptrs(s Static) map[string]*linktruth.Observation {
	out := map[string]*linktruth.Observation{}
	for k, v := range s {
		out[k] = &v
	}
	return out
}

func loadSpec(t *testing.T) *spec.Spec {
	t.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "f.fab.hcl", Data: []byte(fabric)}},
		spec.LoadOptions{Platforms: []spec.PlatformInfo{{Name: "sonic", Transport: "ssh"}}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return s
}
