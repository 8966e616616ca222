package cli

import (
	"os"
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
	"github.com/fabctl/fabctl/testbed/local"
)

// TestTestbedIBEndToEnd runs the InfiniBand job against a simulated
// subnet: testbed up on examples/ib-testbed, plan (changes), apply,
// validate clean (the fabric read back over MADs), re-plan clean, then
// each fault caught and named by port: a cable down, a link trained at a
// lower width, a host missing from a partition (opensm programmed an
// older spec: validate and plan both see it); testbed down.
func TestTestbedIBEndToEnd(t *testing.T) {
	testutil.RequireRoot(t, "ibsim, opensm and the diagnostics run as root, as on an SM host")
	if err := ibsim.Available(); err != nil {
		testutil.SkipOrFail(t, "ibsim testbed unavailable: "+err.Error())
	}
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed", "ib-testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "ib.fab.hcl")
	writeFile(t, specPath, string(src))
	tbDir := local.DefaultDir(dir)

	cli := func(args ...string) (ExitCode, string) {
		f, _, out, errOut := testFactory()
		code := runCLI(f, args...)
		return code, out.String() + errOut.String()
	}
	must := func(want ExitCode, args ...string) string {
		t.Helper()
		code, out := cli(args...)
		if code != want {
			t.Fatalf("fabctl %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	// validateUntil runs validate until its exit status is want (opensm
	// applies a change at its next heavy sweep, a second or so later).
	validateUntil := func(want ExitCode, spec string) string {
		t.Helper()
		var out string
		var code ExitCode
		for i := 0; i < 20; i++ {
			code, out = cli("validate", "--skip-traffic", spec)
			if code == want {
				return out
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatalf("validate: exit %d, want %d\n%s", code, want, out)
		return ""
	}

	start := time.Now()
	must(ExitOK, "testbed", "up", dir)
	t.Cleanup(func() {
		if code, out := cli("testbed", "down", dir); code != ExitOK {
			t.Errorf("testbed down: exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(local.IBSimDir(tbDir), ibsim.StateFile)); err == nil {
			t.Errorf("testbed down left the simulated subnet running")
		}
	})
	t.Logf("testbed up in %s", time.Since(start).Round(time.Millisecond))
	must(ExitChanges, "plan", "--detailed-exitcode", dir)
	t0 := time.Now()
	must(ExitOK, "apply", "-auto-approve", dir)
	t.Logf("apply (files, SIGHUP, the sweep read back) in %s", time.Since(t0).Round(time.Millisecond))
	// apply returned after opensm's sweep programmed the fabric: validate
	// is clean at once, without waiting.
	t0 = time.Now()
	out := must(ExitOK, "validate", "--skip-traffic", dir)
	t.Logf("validate clean in %s:\n%s", time.Since(t0).Round(time.Millisecond), out)
	must(ExitOK, "plan", "--detailed-exitcode", dir)

	expect := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("validate output lacks %q:\n%s", w, out)
			}
		}
	}

	// A cable down: named at the switch port.
	must(ExitOK, "testbed", "fault", dir, "link-down", "leaf1:2")
	expect(validateUntil(ExitError, dir), "leaf1 port 2: no link to cn01-mlx5_0 port 1", "[link-down]")
	// plan reads the fabric back too: the cable is a finding of the
	// subnet manager (no file changes it).
	expectPlan := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("plan output lacks %q:\n%s", w, out)
			}
		}
	}
	expectPlan(must(ExitOK, "plan", "--detailed-exitcode", dir), "leaf1 port 2: no link to cn01-mlx5_0 port 1", "[link-down]")
	must(ExitOK, "testbed", "fault", dir, "link-up", "cn01:ib0") // the same cable, named at its other end
	validateUntil(ExitOK, dir)

	// A link trained at 1x instead of 4x.
	must(ExitOK, "testbed", "fault", dir, "width", "leaf2:1", "1x")
	expect(validateUntil(ExitError, dir), "leaf2 port 1: link to cn03", "trained at 1x, lower than the spec's 4x", "[width]")
	must(ExitOK, "testbed", "fault", dir, "width", "leaf2:1", "4x")
	validateUntil(ExitOK, dir)

	// Two cables swapped: cn01 on leaf2 port 1, cn03 on leaf1 port 2.
	must(ExitOK, "testbed", "fault", dir, "miswire", "cn01:ib0", "cn03:ib0")
	expect(validateUntil(ExitError, dir), "leaf1 port 2: cabled to cn03-mlx5_0 port 1; the spec cables it to cn01-mlx5_0 port 1", "leaf2 port 1: cabled to cn01-mlx5_0 port 1", "[miswired]")
	expectPlan(must(ExitOK, "plan", "--detailed-exitcode", dir), "leaf1 port 2: cabled to cn03-mlx5_0 port 1", "[miswired]")
	must(ExitOK, "testbed", "fault", dir, "miswire", "cn01:ib0", "cn03:ib0") // back
	validateUntil(ExitOK, dir)

	// A host dropped from a partition in opensm's file: validate names
	// the port, plan shows the file's drift, apply puts it back.
	must(ExitOK, "testbed", "fault", dir, "partition-drop", "storage", "cn04:ib0")
	expect(must(ExitError, "validate", "--skip-traffic", dir), "cn04:ib0 (cn04-mlx5_0 port 1): P_Key 0x0002 of partition storage is not in the port's P_Key table", "[pkey-missing]")
	expectPlan(must(ExitChanges, "plan", "--detailed-exitcode", dir), "partitions/storage/member/0x0c42a10300000e01")
	must(ExitOK, "apply", "-auto-approve", dir)
	must(ExitOK, "validate", "--skip-traffic", dir)

	// A host missing from a partition: opensm runs an older spec without
	// cn04 in storage. validate names cn04's port, plan shows the drift.
	old := filepath.Join(t.TempDir(), "ib.fab.hcl")
	writeFile(t, old, strings.Replace(string(src), `members         = ["cn03:ib0", "cn04:ib0"]`, `members         = ["cn03:ib0"]`, 1))
	if err := os.Symlink(filepath.Join(dir, ".fabctl"), filepath.Join(filepath.Dir(old), ".fabctl")); err != nil {
		t.Fatal(err)
	}
	must(ExitOK, "apply", "-auto-approve", old)
	expect(validateUntil(ExitError, dir), "cn04:ib0 (cn04-mlx5_0 port 1): P_Key 0x0002 of partition storage is not in the port's P_Key table", "[pkey-missing]")
	expect(must(ExitChanges, "plan", "--detailed-exitcode", dir), "partitions/storage/member/0x0c42a10300000e01")
	must(ExitOK, "apply", "-auto-approve", dir)
	must(ExitOK, "validate", "--skip-traffic", dir)

	// The files say what the spec says but opensm never applied them
	// (written without SIGHUP): plan reads the fabric back, shows cn04's
	// missing P_Key as a change, and apply signals opensm although no
	// file changes, then waits for the sweep.
	partsFile := filepath.Join(local.IBSimDir(tbDir), "opensm", "partitions.conf")
	good, err := os.ReadFile(partsFile)
	if err != nil {
		t.Fatal(err)
	}
	must(ExitOK, "apply", "-auto-approve", old)
	must(ExitError, "validate", "--skip-traffic", dir)
	writeFile(t, partsFile, string(good))
	out = must(ExitChanges, "plan", "--detailed-exitcode", dir)
	expectPlan(out, "partitions/storage/member/0x0c42a10300000e01", "not programmed: the P_Key is missing on cn04:ib0 (cn04-mlx5_0 port 1)")
	must(ExitOK, "apply", "-auto-approve", dir)
	must(ExitOK, "validate", "--skip-traffic", dir)
	must(ExitOK, "plan", "--detailed-exitcode", dir)
}

// TestTestbedFaultArgs: testbed fault refuses what it cannot do before it
// touches anything: an unknown fault, a wrong argument count (usage), a
// spec without an InfiniBand fabric, a port the fabric does not have, no
// simulated subnet running.
func TestTestbedFaultArgs(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed", "ib-testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ib.fab.hcl"), string(src))
	eth := t.TempDir()
	writeFile(t, filepath.Join(eth, "e.fab.hcl"), "fabric \"e\" {\n  transport = \"rocev2\"\n}\n")
	for _, c := range []struct {
		args []string
		code ExitCode
		want string
	}{
		{[]string{dir, "unplug", "leaf1:2"}, ExitUsage, `unknown fault "unplug"`},
		{[]string{dir, "width", "leaf1:2"}, ExitUsage, "fault width takes 2 argument(s), got 1"},
		{[]string{eth, "link-down", "leaf1:2"}, ExitError, "no InfiniBand switches and cabling"},
		{[]string{dir, "link-down", "leaf1:2"}, ExitError, "no simulated InfiniBand subnet"},
	} {
		f, _, out, errOut := testFactory()
		code := runCLI(f, append([]string{"testbed", "fault"}, c.args...)...)
		all := out.String() + errOut.String()
		if code != c.code || !strings.Contains(all, c.want) {
			t.Errorf("testbed fault %s: exit %d, want %d with %q:\n%s", strings.Join(c.args[1:], " "), code, c.code, c.want, all)
		}
	}
	fab, err := ibspecFromFile(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ep, want string }{
		{"leaf1:9", "switch leaf1 has ports 1..8"},
		{"cn01:ib9", "not a port of the InfiniBand fabric"},
		{"nosuch:1", "not a port of the InfiniBand fabric"},
	} {
		if _, err := faultPort(fab, c.ep); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("faultPort(%s): %v, want %q", c.ep, err, c.want)
		}
	}
	if p, err := faultPort(fab, "cn03:ib0"); err != nil || p != (ibfabric.PortRef{Node: "cn03-mlx5_0", Port: 1}) {
		t.Errorf("faultPort(cn03:ib0) = %v, %v", p, err)
	}
}

func ibspecFromFile(t *testing.T, dir string) (*ibspec.Fabric, error) {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}, Platforms: builtin.SpecPlatforms()})
	return ibspec.FromSpec(s)
}
