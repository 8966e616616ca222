package host

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/vishvananda/netlink"
)

// The comparison, for what is measurable without a DCB device:
// MTU + one address on 8 veths, fabctl's netlink path against the `ip`
// command sequence a script runs. Each iteration flips MTU and address so
// every operation really changes the kernel state.
const benchNS = "fabctl-host-bench"

func benchSetup(b *testing.B) *session {
	testutil.RequireRoot(b, rootWhy)
	newNS(b, benchNS, 8)
	s, err := open(&intent.Host{Connect: spec.Connect{Kind: "netns", Netns: benchNS}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	return s
}

func BenchmarkMTUAddr8Veth(b *testing.B) {
	b.Run("netlink", func(b *testing.B) {
		s := benchSetup(b)
		links := make([]netlink.Link, 8)
		for i := range links {
			l, err := s.nl.LinkByName(fmt.Sprintf("v%da", i))
			if err != nil {
				b.Fatal(err)
			}
			links[i] = l
		}
		b.ResetTimer()
		for it := 0; it < b.N; it++ {
			mtu := 1500 + 7500*(it%2)
			for i, l := range links {
				want := []string{fmt.Sprintf("198.18.%d.%d/31", i, 2*(it%2))}
				if err := s.nl.LinkSetMTU(l, mtu); err != nil {
					b.Fatal(err)
				}
				if err := setAddrs(s, l, want); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("ip-commands", func(b *testing.B) {
		benchSetup(b)
		b.ResetTimer()
		for it := 0; it < b.N; it++ {
			mtu := 1500 + 7500*(it%2)
			for i := 0; i < 8; i++ {
				dev := fmt.Sprintf("v%da", i)
				cmds := [][]string{{"ip", "-n", benchNS, "link", "set", "dev", dev, "mtu", fmt.Sprint(mtu)},
					{"ip", "-n", benchNS, "addr", "flush", "dev", dev, "scope", "global"},
					{"ip", "-n", benchNS, "addr", "add", fmt.Sprintf("198.18.%d.%d/31", i, 2*(it%2)), "dev", dev}}
				for _, c := range cmds {
					if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
						b.Fatalf("%v: %v %s", c, err, out)
					}
				}
			}
		}
	})
}
