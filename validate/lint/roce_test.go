package lint

import (
	"net/netip"
	"testing"

	"github.com/fabctl/fabctl/spec"
)

func TestRoCEWireOverhead(t *testing.T) {
	for _, tc := range []struct {
		tr   spec.Transport
		ipv6 bool
		want int
	}{
		{spec.RoCEv2, false, 20 + 8 + 12 + 16 + 4}, // 60
		{spec.RoCEv2, true, 40 + 8 + 12 + 16 + 4},  // 80
		{spec.RoCEv1, false, 40 + 12 + 16 + 4},     // 72: GRH instead of IP+UDP
		{spec.RoCEv1, true, 72},                    // no IP header: family does not matter
	} {
		if got := roceWireOverhead(tc.tr, tc.ipv6); got != tc.want {
			t.Errorf("roceWireOverhead(%s, ipv6=%v) = %d, want %d", tc.tr, tc.ipv6, got, tc.want)
		}
	}
}

// The active MTU the kernel picks, as in the reference's table
// (host-and-verbs.md: 4200 -> 4096, 2200 -> 2048, 1500 -> 1024) and at the
// exact boundaries.
func TestActiveRoCEMTU(t *testing.T) {
	for _, tc := range []struct {
		model string
		mtu   int
		want  int
	}{
		{"connectx-7", 9000, 4096},
		{"connectx-7", 4200, 4096},
		{"connectx-7", 4192, 4096}, // 4096 + 96
		{"connectx-7", 4191, 2048},
		{"connectx-7", 4150, 2048},
		{"connectx-7", 2200, 2048},
		{"connectx-7", 2144, 2048},
		{"connectx-7", 2143, 1024},
		{"connectx-7", 1500, 1024},
		{"connectx-7", 351, 0}, // 351 - 96 < 256: no IB MTU fits
		{"", 4192, 4096},       // unknown model: the kernel's 96
		{"rxe", 4176, 4096},    // 4096 + RXE_MAX_HDR_LENGTH 80
		{"rxe", 4175, 2048},
		{"rxe", 1500, 1024},
	} {
		reserve, _ := roceReserve(tc.model)
		if got := activeRoCEMTU(tc.mtu, reserve); got != tc.want {
			t.Errorf("active MTU of %q at netdev MTU %d = %d, want %d", tc.model, tc.mtu, got, tc.want)
		}
	}
}

func TestIBMTU(t *testing.T) {
	for _, m := range []int{256, 512, 1024, 2048, 4096} {
		if !ibMTUValid(m) {
			t.Errorf("%d should be a valid IB MTU", m)
		}
	}
	for _, m := range []int{0, 255, 1000, 1500, 3000, 9000} {
		if ibMTUValid(m) {
			t.Errorf("%d should not be a valid IB MTU", m)
		}
	}
	for _, tc := range []struct{ in, want int }{{3000, 2048}, {2000, 1024}, {4096, 4096}, {100, 256}} {
		if got := floorIBMTU(tc.in); got != tc.want {
			t.Errorf("floorIBMTU(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestNICIPv6(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	for _, tc := range []struct {
		addrs []netip.Prefix
		want  bool
	}{
		{nil, false},
		{pfx("10.0.0.1/31"), false},
		{pfx("2001:db8::1/127"), true},
		{pfx("2001:db8::1/127", "10.0.0.1/31"), false}, // dual stack: IPv4 GIDs are used
		{pfx("::ffff:10.0.0.1/128"), false},
	} {
		if got := nicIPv6(&spec.NIC{Addresses: tc.addrs}); got != tc.want {
			t.Errorf("nicIPv6(%v) = %v, want %v", tc.addrs, got, tc.want)
		}
	}
}
