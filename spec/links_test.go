package spec

import (
	"strings"
	"testing"
)

// TestEndLinks: the loader records on each port and NIC the link on it
// (Port.Link, NIC.Link), finds a second cable on one through it, and a
// link it drops is recorded on no end.
func TestEndLinks(t *testing.T) {
	const head = `fabric "f" {
  transport = "rocev2"
}
switch "leaf1" {
  platform = "sonic"
  address  = "10.0.0.1"
  port "Ethernet0" {
  }
}
switch "leaf2" {
  platform = "sonic"
  address  = "10.0.0.2"
}
host "h1" {
  address = "10.1.0.1"
  nic "ens1" {
    device = "mlx5_0"
  }
  nic "ens2" {
    device = "mlx5_1"
  }
}
`
	s, diags := load(t, head+`link {
  endpoints = ["leaf1:Ethernet0", "h1:ens1"]
  speed     = "400G"
}
link {
  endpoints = ["leaf2:Ethernet1", "h1:ens2"]
  speed     = "400G"
}
`, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sw, h := s.Switch("leaf1"), s.Host("h1")
	for _, c := range []struct {
		what string
		got  *Link
		want *Link
	}{
		{"declared port", sw.Port("Ethernet0").Link(), s.Links[0]},
		{"implied port", s.Switch("leaf2").Port("Ethernet1").Link(), s.Links[1]},
		{"nic ens1", h.NIC("ens1").Link(), s.Links[0]},
		{"nic ens2", h.NIC("ens2").Link(), s.Links[1]},
	} {
		if c.got != c.want || c.got == nil {
			t.Errorf("%s: link %p, want %p", c.what, c.got, c.want)
		}
	}

	// A NIC with two cables: the second is an error naming the first,
	// and the dropped link is nobody's.
	s, diags = load(t, head+`link {
  endpoints = ["leaf1:Ethernet0", "h1:ens1"]
  speed     = "400G"
}
link {
  endpoints = ["leaf2:Ethernet1", "h1:ens1"]
  speed     = "400G"
}
`, LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "h1:ens1 is already an endpoint of link.leaf1:Ethernet0--h1:ens1") {
		t.Fatalf("want the second cable on h1:ens1 reported, got %v", diags)
	}
	if len(s.Links) != 1 {
		t.Fatalf("%d links kept, want 1", len(s.Links))
	}
	if l := s.Switch("leaf2").Port("Ethernet1").Link(); l != nil {
		t.Errorf("the dropped link is on leaf2:Ethernet1: %s", l.Address())
	}
}

// lldp_name and link_errors_max are read, and an lldp_name that is not
// a host name (the LLDP System Name is one) is refused at its line.
func TestLLDPNameAndErrorsMax(t *testing.T) {
	const src = `fabric "f" {
  transport       = "rocev2"
  link_errors_max = 25
}
switch "leaf1" {
  platform  = "sonic"
  address   = "10.0.0.1"
  lldp_name = "leaf1.pod1.example.net"
}
host "h1" {
  address   = "10.1.0.1"
  lldp_name = "NAME"
  nic "ens1" {
    device = "mlx5_0"
  }
}
`
	s, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s.Switch("leaf1").LLDPName != "leaf1.pod1.example.net" || s.Host("h1").LLDPName != "NAME" || s.Fabric.LinkErrorsMax != 25 {
		t.Fatalf("lldp_name %q %q, link_errors_max %d", s.Switch("leaf1").LLDPName, s.Host("h1").LLDPName, s.Fabric.LinkErrorsMax)
	}
	_, diags = load(t, strings.Replace(src, `"NAME"`, `"gpu 01;reboot"`, 1), LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "lldp_name") || diags[0].Subject.Start.Line != 12 {
		t.Fatalf("a bad lldp_name: %v", diags)
	}
}
