package spec

import "testing"

const effectiveSrc = `
fabric "t" {
  transport = "rocev2"
  mtu       = 9100
}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  mtu      = 9000
  pfc      = [3, 4]
  port "Ethernet0" {
    mtu          = 4200
    trust        = "pcp"
    pfc          = []
    pfc_watchdog = false
  }
  port "Ethernet4" {}
}
host "h1" {
  address  = "192.0.2.10"
  rdma_tos = 104
  nic "eth1" {
    device = "mlx5_0"
    pfc    = [3]
    trust  = "dscp"
  }
  nic "eth2" { device = "mlx5_1" }
}
host "h2" {
  address = "192.0.2.11"
  nic "eth1" { device = "mlx5_0" }
}
`

// Each effective value's Origin names the level that set it and the line
// of the attribute (or the block that defaults it).
func TestEffectiveOrigins(t *testing.T) {
	s, diags := load(t, effectiveSrc, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sw := s.Switch("leaf1")
	p0, p4 := sw.Port("Ethernet0"), sw.Port("Ethernet4")
	h1, h2 := s.Host("h1"), s.Host("h2")
	n1, n2 := h1.NIC("eth1"), h1.NIC("eth2")
	for _, tc := range []struct {
		name  string
		got   any
		want  any
		o     Origin
		level Level
		line  int
	}{
		{"port mtu", s.PortMTU(sw, p0), 4200, s.PortMTUOrigin(sw, p0), FromObject, 12},
		{"switch mtu", s.PortMTU(sw, p4), 9000, s.PortMTUOrigin(sw, p4), FromSwitch, 9},
		{"nic mtu", s.NICMTU(n1), 9100, s.NICMTUOrigin(n1), FromFabric, 4},
		{"port pfc", len(s.PortPFC(sw, p0)), 0, s.PortPFCOrigin(sw, p0), FromObject, 14},
		{"switch pfc", len(s.PortPFC(sw, p4)), 2, s.PortPFCOrigin(sw, p4), FromSwitch, 10},
		{"nic pfc", len(s.NICPFC(n1)), 1, s.NICPFCOrigin(n1), FromObject, 24},
		{"classes pfc", len(s.NICPFC(n2)), 1, s.NICPFCOrigin(n2), FromClasses, 2},
		{"port trust", s.PortTrust(sw, p0), TrustPCP, s.PortTrustOrigin(sw, p0), FromObject, 13},
		{"default trust", s.PortTrust(sw, p4), TrustDSCP, s.PortTrustOrigin(sw, p4), FromFabric, 2},
		{"nic trust", s.NICTrust(n1), TrustDSCP, s.NICTrustOrigin(n1), FromObject, 25},
		{"port watchdog", s.PortWatchdog(p0), false, s.PortWatchdogOrigin(p0), FromObject, 15},
		{"fabric watchdog", s.PortWatchdog(p4), true, s.PortWatchdogOrigin(p4), FromFabric, 2},
		{"host tos", first(s.HostTos(h1)), 104, s.HostTosOrigin(h1), FromObject, 21},
		{"derived tos", first(s.HostTos(h2)), 26<<2 | 0b10, s.HostTosOrigin(h2), FromClasses, 2},
	} {
		if tc.got != tc.want || tc.o.Level != tc.level || tc.o.Range().Start.Line != tc.line {
			t.Errorf("%s: %v from level %d line %d, want %v from level %d line %d",
				tc.name, tc.got, tc.o.Level, tc.o.Range().Start.Line, tc.want, tc.level, tc.line)
		}
	}
	if _, explicit := s.HostTos(h2); explicit {
		t.Error("a ToS derived from the classes is explicit")
	}
	// A nil port or NIC inherits.
	if s.PortMTU(sw, nil) != 9000 || len(s.NICPFC(nil)) != 1 || s.NICTrust(nil) != TrustDSCP {
		t.Error("nil port or NIC does not inherit")
	}
}

func first(v int, _ bool) int { return v }
