package lint

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

func TestHeadroomTerms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		speed spec.BitRate
		cable spec.Length
		mtu   int
		tags  int
		want  HeadroomBreakdown
	}{
		{
			// The 802.1Qbb figures at 100G: 122,880 BT = 15,360 B and
			// 201,728 BT = 25,216 B; 3 m of cable is 2 x 15 ns = 375 B.
			name: "100G 3m jumbo", speed: 100e9, cable: 3, mtu: 9000,
			want: HeadroomBreakdown{MaxFrameRx: 9018, PauseFrame: 84, InterfaceDelay: 15360, CableDelay: 375, PeerResponse: 25216, MaxFrameTx: 9018, Total: 59071},
		},
		{
			// Times scale with speed: 1228.8 ns and 2017.28 ns at 400G; 100 m
			// is 1 us round trip = 50,000 B; one VLAN tag adds 4 B per frame.
			name: "400G 100m one tag", speed: 400e9, cable: 100, mtu: 9000, tags: 1,
			want: HeadroomBreakdown{MaxFrameRx: 9022, PauseFrame: 84, InterfaceDelay: 61440, CableDelay: 50000, PeerResponse: 100864, MaxFrameTx: 9022, Total: 230432},
		},
		{
			// 25G, 5 m: the cable term is 156.25 B and rounds up.
			name: "25G 5m 1500", speed: 25e9, cable: 5, mtu: 1500,
			want: HeadroomBreakdown{MaxFrameRx: 1518, PauseFrame: 84, InterfaceDelay: 3840, CableDelay: 157, PeerResponse: 6304, MaxFrameTx: 1518, Total: 13421},
		},
		{
			// 10G, 1.5 m: 15 ns x 10G = 18.75 B -> 19; 1228.8 ns -> 1536 B.
			name: "10G 1.5m", speed: 10e9, cable: 1.5, mtu: 9000, tags: 2,
			want: HeadroomBreakdown{MaxFrameRx: 9026, PauseFrame: 84, InterfaceDelay: 1536, CableDelay: 19, PeerResponse: 2522, MaxFrameTx: 9026, Total: 22213},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Headroom(tc.speed, tc.cable, tc.mtu, tc.tags)
			want := tc.want
			want.Speed, want.Cable, want.MTU, want.VLANTags = tc.speed, tc.cable, tc.mtu, tc.tags
			if got != want {
				t.Errorf("Headroom(%s, %s, %d, %d)\n got  %+v\n want %+v", tc.speed, tc.cable, tc.mtu, tc.tags, got, want)
			}
			sum := got.MaxFrameRx + got.PauseFrame + got.InterfaceDelay + got.CableDelay + got.PeerResponse + got.MaxFrameTx
			if sum != got.Total {
				t.Errorf("terms sum to %d, Total is %d", sum, got.Total)
			}
		})
	}
}

func TestHeadroomMonotonic(t *testing.T) {
	prev := Headroom(100e9, 0, 9000, 0).Total
	for _, m := range []spec.Length{1, 5, 40, 100, 300, 1000} {
		h := Headroom(100e9, m, 9000, 0).Total
		if h <= prev {
			t.Errorf("headroom does not grow with cable length: %s -> %d (was %d)", m, h, prev)
		}
		prev = h
	}
	prev = 0
	for _, r := range []spec.BitRate{10e9, 25e9, 100e9, 200e9, 400e9, 800e9} {
		h := Headroom(r, 5, 9000, 0).Total
		if h <= prev {
			t.Errorf("headroom does not grow with speed: %s -> %d (was %d)", r, h, prev)
		}
		prev = h
	}
	if a, b := Headroom(100e9, 5, 1500, 0).Total, Headroom(100e9, 5, 9000, 0).Total; b-a != 2*7500 {
		t.Errorf("MTU 1500 -> 9000 should add two frames (15000 B), added %d", b-a)
	}
}

func TestHeadroomExtremes(t *testing.T) {
	// The largest values the loader accepts must not overflow.
	h := Headroom(1e15, 1e6, 65520, 2)
	if h.Total <= 0 || h.CableDelay != 1_250_000_000_000 {
		t.Errorf("1 Pbit/s over 1000 km: cable %d B, total %d B", h.CableDelay, h.Total)
	}
	if z := Headroom(0, 0, 9000, 0); z.InterfaceDelay != 0 || z.CableDelay != 0 || z.Total != 2*9018+84 {
		t.Errorf("unknown speed: %+v", z)
	}
	if got := bytesInFlight(1, 8); got != 1 {
		t.Errorf("a partial byte rounds up: got %d", got)
	}
}

func TestHeadroomTermsText(t *testing.T) {
	s := Headroom(100e9, 3, 9000, 1).Terms()
	for _, want := range []string{"max frame rx 9022 B (IP MTU 9000 + 18 L2 + 1 x 4 VLAN)", "PFC frame 84 B", "interface delay 15360 B (1228.8 ns at 100G)",
		"cable 375 B (2 x 3m x 5 ns/m)", "peer response 25216 B", "= 59079 B"} {
		if !strings.Contains(s, want) {
			t.Errorf("Terms() = %q lacks %q", s, want)
		}
	}
}

// bufSpec is leaf1 with 50KB of headroom and two lossless host ports:
// Ethernet0 at 100G/3m (needs 59,071 B) and Ethernet4 at 400G/100m with one
// VLAN tag (needs 230,432 B). portExtra goes into Ethernet4's port block.
func bufSpec(t *testing.T, portExtra string) *spec.Spec {
	return testutil.LoadSrc(t, `fabric "t" { transport = "rocev2" }
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  buffer {
    total    = "64MB"
    headroom = "50KB"
  }
  port "Ethernet0" {}
  port "Ethernet4" {
`+portExtra+`
  }
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" { device = "mlx5_0" }
  nic "eth2" { device = "mlx5_1" }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet4", "h1:eth2"]
  speed        = "400G"
  cable_length = "100m"
  vlan_tags    = 1
}
`)
}

func runRule(s *spec.Spec, id string) Result {
	for _, r := range Rules() {
		if r.ID == id {
			return RunRules(s, []Rule{r})
		}
	}
	panic("no rule " + id)
}

func TestBUF1Finding(t *testing.T) {
	res := runRule(bufSpec(t, ""), "BUF-1")
	if len(res.Diagnostics) != 1 {
		t.Fatalf("want one aggregated BUF-1 error, got %v", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	for _, want := range []string{
		"buffer.headroom = 50KB", "2 of its 2 lossless ports",
		"Worst: port Ethernet4 (to h1:eth2, 400G, 100m cable, IP MTU 9000, 1 VLAN tag(s), priority 3) needs 230.432KB",
		"cable 50000 B (2 x 100m x 5 ns/m)", "Also short: Ethernet0 (100G, 3m: 59.071KB)", "at least 230.432KB",
	} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, d.Detail)
		}
	}
	if info := spec.Info(d); info.Address != "switch.leaf1" || d.Severity != Error {
		t.Errorf("address %s severity %v", info.Address, d.Severity)
	}

	// A port's lint_ignore drops that port from the aggregate only.
	res = runRule(bufSpec(t, `    lint_ignore = { "BUF-1" = "headroom profile set by hand" }`), "BUF-1")
	if len(res.Diagnostics) != 1 || res.Suppressed != 1 {
		t.Fatalf("port ignore: %d findings, %d suppressed", len(res.Diagnostics), res.Suppressed)
	}
	d = res.Diagnostics[0]
	if !strings.Contains(d.Detail, "1 of its 2 lossless ports") || !strings.Contains(d.Detail, "Worst: port Ethernet0") {
		t.Errorf("with Ethernet4 ignored, Ethernet0 should be the only short port:\n%s", d.Detail)
	}
	if info := spec.Info(d); info.Address != "switch.leaf1.port.Ethernet0" {
		t.Errorf("a single short port is addressed directly, got %s", info.Address)
	}

	// PFC off on the port: it needs no headroom.
	res = runRule(bufSpec(t, `    pfc = []`), "BUF-1")
	if len(res.Diagnostics) != 1 || strings.Contains(res.Diagnostics[0].Detail, "Ethernet4") {
		t.Errorf("a port without PFC must not count: %v", res.Diagnostics)
	}
}

func TestBUF2Sum(t *testing.T) {
	// 2 ports x 1 PG x max(50KB, requirement) = 59,071 + 230,432 = 289,503 B.
	s := bufSpec(t, "")
	s.Switches[0].Buffer.Total = 289_503
	if res := runRule(s, "BUF-2"); len(res.Diagnostics) != 0 {
		t.Fatalf("exactly fitting headroom: %v", res.Diagnostics)
	}
	s.Switches[0].Buffer.Total = 289_502
	res := runRule(s, "BUF-2")
	if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Detail, "2 priority groups x 59.071KB to 230.432KB each") ||
		!strings.Contains(res.Diagnostics[0].Detail, "= 289.503KB") {
		t.Fatalf("one byte short: %v", res.Diagnostics)
	}
}
