package ibreadback

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
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
		{"miswired", mis, []string{"leaf1 port 2: cabled to cn02:ib0; the spec cables it to cn01:ib0 [miswired]", "leaf1 port 3: cabled to cn01:ib0; the spec cables it to cn02:ib0 [miswired]",
			// and at the adapters' ends, in the spec's words
			"cn01:ib0: cabled to leaf1 port 3; the spec cables it to leaf1 port 2 [miswired]",
			"cn02:ib0: cabled to leaf1 port 2; the spec cables it to leaf1 port 3 [miswired]"}},
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
			planAgrees(t, sim, res)
			var got []string
			for _, x := range res.Findings {
				if x.Kind == "miswired" || x.Kind == "link-down" {
					got = append(got, x.Where+": "+x.Message+" ["+x.Kind+"]")
					if x.Verdict != VerdictMismatch || x.NodeGUID == "" || x.LID == 0 {
						t.Errorf("%s: verdict %q, node %q, LID %d: want a mismatch with the fabric's GUID and LID", x.Where, x.Verdict, x.NodeGUID, x.LID)
					}
				}
			}
			if res.Via != "fabctl ibmad" {
				t.Errorf("read via %q (%s)", res.Via, res.Note)
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

// planAgrees plans the subnet manager of examples/ib-testbed pointed at
// the running simulated subnet (its opensm files, the diag wrappers) and
// wants the plan's findings no change fixes to name the same ports and
// kinds as validate's stage: a fault made outside the testbed (here, a
// net file cabled unlike the spec) reads the same in both.
func planAgrees(t *testing.T, sim *ibsim.Sim, res *Result) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed", "ib-testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := sim.WriteDiagWrappers()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "opensm.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sim.OpenSMPID)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, r := range [][2]string{
		{`".fabctl/testbed/ibsim/opensm/opensm.conf"`, strconv.Quote(filepath.Join(sim.Dir, ibsim.OpenSMDir, "opensm.conf"))},
		{`".fabctl/testbed/ibsim/opensm.pid"`, strconv.Quote(pidFile)},
		{`".fabctl/testbed/ibsim/bin"`, strconv.Quote(bin)},
	} {
		text = strings.Replace(text, r[0], r[1], 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "ib.fab.hcl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testutil.Load(t, dir, spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{}})
	fab := intent.Compile(s)
	p := plan.Make(context.Background(), s, fab, builtin.Registry(), plan.Options{Targets: []string{"sm.*"}})
	if len(p.Devices) != 1 || p.Devices[0].Error != "" {
		t.Fatalf("plan: %+v", p.Devices)
	}
	var fromPlan, fromValidate []string
	for _, f := range p.Devices[0].Findings {
		if f.Severity == drivers.SeverityError {
			where, _, _ := strings.Cut(f.Message, ": ")
			fromPlan = append(fromPlan, where+" ["+f.Kind+"]")
		}
	}
	for _, f := range res.Findings {
		if f.Verdict == VerdictMismatch {
			fromValidate = append(fromValidate, f.Where+" ["+f.Kind+"]")
		}
	}
	sort.Strings(fromPlan)
	sort.Strings(fromValidate)
	if strings.Join(fromPlan, "\n") != strings.Join(fromValidate, "\n") || len(fromPlan) == 0 {
		t.Errorf("plan and validate disagree:\nplan:\n  %s\nvalidate:\n  %s", strings.Join(fromPlan, "\n  "), strings.Join(fromValidate, "\n  "))
	}
	if !p.Mismatched() {
		t.Errorf("the plan of a miscabled fabric is not a mismatch")
	}
}
