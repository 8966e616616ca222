package ibreadback

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/ibsim"
)

func loadTestbed(t *testing.T) *spec.Spec {
	t.Helper()
	return testutil.Load(t, filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed"), spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{}})
}

// TestFromSpec checks the mapping of examples/ib-testbed: switches,
// adapters named host-device with the spec's GUIDs, links at 4x HDR.
func TestFromSpec(t *testing.T) {
	s := loadTestbed(t)
	f, err := ibspec.FromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	topo := f.Topology
	if len(topo.Switches) != 4 || len(topo.HCAs) != 5 || len(topo.Links) != 9 {
		t.Fatalf("topology: %d switches, %d adapters, %d links", len(topo.Switches), len(topo.HCAs), len(topo.Links))
	}
	if f.SMNode != "sm01-mlx5_0" {
		t.Errorf("SM node %q", f.SMNode)
	}
	ref := f.Ports["cn01:ib0"]
	for _, h := range topo.HCAs {
		if h.Name == ref.Node && ibfabric.GUID(h.PortGUID(ref.Port)) != "0x0c42a10300000b01" {
			t.Errorf("cn01:ib0 port GUID %s", ibfabric.GUID(h.PortGUID(ref.Port)))
		}
	}
	for _, l := range topo.Links {
		if l.Width != 4 || l.Speed != ibfabric.HDR {
			t.Errorf("link %s - %s: %s %s", l.A, l.B, l.Width, l.Speed)
		}
	}
	in := f.Intent(s, nil)
	if in.MTU != 2048 || !in.Enforce {
		t.Errorf("intent MTU %d enforce %v", in.MTU, in.Enforce)
	}
}

// TestMiswiredAndUncabled runs simulated fabrics whose cabling differs
// from the spec (two cables crossed at leaf1, a cable missing) and checks
// the stage names each port.
func TestMiswiredAndUncabled(t *testing.T) {
	testutil.RequireRoot(t, "ibsim, opensm and the diagnostics run as root, as on an SM host")
	if err := ibsim.Available(); err != nil {
		testutil.SkipOrFail(t, "ibsim testbed unavailable: "+err.Error())
	}
	s := loadTestbed(t)
	f, err := ibspec.FromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	mis, err := ibsim.Miswire(f.Topology, ibfabric.PortRef{Node: "leaf1", Port: 2}, ibfabric.PortRef{Node: "leaf1", Port: 3})
	if err != nil {
		t.Fatal(err)
	}
	unc, err := ibsim.Uncable(f.Topology, ibfabric.PortRef{Node: "leaf2", Port: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		topo *ibfabric.Topology
		want []string
	}{
		{"miswired", mis, []string{"leaf1 port 2: cabled to cn02-mlx5_0 port 1; the spec cables it to cn01-mlx5_0 port 1 [miswired]", "leaf1 port 3: cabled to cn01-mlx5_0 port 1; the spec cables it to cn02-mlx5_0 port 1 [miswired]",
			// and at the adapters' ends, in the spec's words
			"cn01:ib0 (cn01-mlx5_0 port 1): cabled to leaf1 port 3; the spec cables it to leaf1 port 2 [miswired]",
			"cn02:ib0 (cn02-mlx5_0 port 1): cabled to leaf1 port 2; the spec cables it to leaf1 port 3 [miswired]"}},
		{"uncabled", unc, []string{"leaf2 port 8: no link to spine2 port 2 (link down, or no cable) [link-down]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sim, err := ibsim.Start(ctx, ibsim.Config{Topology: c.topo, SMNode: f.SMNode})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Stop()
			res := Run(ctx, s, sim.Runner())
			if res.Error != "" {
				t.Fatal(res.Error)
			}
			var got []string
			for _, x := range res.Findings {
				if x.Kind == "miswired" || x.Kind == "link-down" {
					got = append(got, x.Where+": "+x.Message+" ["+x.Kind+"]")
				}
			}
			all := strings.Join(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("missing finding %q; got:\n%s", w, all)
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("%d cabling findings, want %d:\n%s", len(got), len(c.want), all)
			}
		})
	}
}

// TestFromSpecInfiniBandExample: examples/infiniband's cabling maps to a
// valid topology (25 adapter ports on 4 Quantum-2 switches, 57 cables).
func TestFromSpecInfiniBandExample(t *testing.T) {
	s := testutil.Load(t, filepath.Join(testutil.RepoRoot(t), "examples", "infiniband"), spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{}})
	f, err := ibspec.FromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Topology.Switches) != 4 || len(f.Topology.HCAs) != 25 || len(f.Topology.Links) != 57 || f.SMNode != "sm01-mlx5_0" {
		t.Errorf("topology: %d switches, %d adapters, %d links, SM %q", len(f.Topology.Switches), len(f.Topology.HCAs), len(f.Topology.Links), f.SMNode)
	}
	in := f.Intent(s, nil)
	if in.MTU != 4096 {
		t.Errorf("MTU %d", in.MTU)
	}
}
