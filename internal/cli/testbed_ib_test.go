package cli

import (
	"encoding/json"
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

	expect := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", what, w, out)
			}
		}
	}
	// agree checks that validate, plan and drift see the same fault:
	// exit codes and the port named the spec's way in each.
	agree := func(validateCode, planCode ExitCode, want ...string) {
		t.Helper()
		expect("validate", validateUntil(validateCode, dir), want...)
		expect("plan", must(planCode, "plan", "--detailed-exitcode", dir), want...)
		expect("drift", must(planCode, "drift", dir), want...)
	}
	fault := func(args ...string) string {
		t.Helper()
		return must(ExitOK, append([]string{"testbed", "fault", dir}, args...)...)
	}
	clean := func() {
		t.Helper()
		validateUntil(ExitOK, dir)
		must(ExitOK, "plan", "--detailed-exitcode", dir)
		must(ExitOK, "drift", dir)
	}
	repair := func() {
		t.Helper()
		t0 := time.Now()
		must(ExitOK, "apply", "-auto-approve", dir)
		t.Logf("apply repaired the fabric in %s", time.Since(t0).Round(time.Millisecond))
		// apply verified the ports by read-back: clean at once.
		must(ExitOK, "validate", "--skip-traffic", dir)
		must(ExitOK, "plan", "--detailed-exitcode", dir)
	}

	// Cabling faults: findings no change fixes. validate, plan and drift
	// name the port and exit 6; the summary never says the fabric
	// matches; JSON has the port's GUID and LID.
	fault("link-down", "leaf1:2")
	agree(ExitMismatch, ExitMismatch, "leaf1 port 2: no link to cn01:ib0", "[link-down]")
	out = must(ExitMismatch, "plan", dir)
	expect("plan", out, "Mismatch:", "No changes, but the fabric does not match the spec")
	if strings.Contains(out, "matches the spec on all") {
		t.Errorf("a cable down reads as a matching fabric:\n%s", out)
	}
	js := must(ExitMismatch, "plan", "--json", dir)
	var doc struct {
		Mismatch bool `json:"mismatch"`
		Devices  []struct {
			Findings []struct {
				Severity, Kind, Message string
				IDs                     map[string]string `json:"ids"`
			} `json:"findings"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range doc.Devices {
		for _, f := range d.Findings {
			if f.Kind == "link-down" && f.Severity == "error" && f.IDs["lid"] != "" && f.IDs["node_guid"] != "" && f.IDs["port"] == "2" {
				found = true
			}
		}
	}
	if !doc.Mismatch || !found {
		t.Errorf("plan --json: mismatch %v, link-down finding with GUID and LID %v:\n%s", doc.Mismatch, found, js)
	}
	expect("plan --format markdown", must(ExitMismatch, "plan", "--format", "markdown", dir), "the fabric does not match the spec", "leaf1 port 2: no link to cn01:ib0")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	must(ExitMismatch, "validate", "--skip-traffic", "--junit", junit, dir)
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `name="leaf1 port 2"`) || !strings.Contains(string(b), `type="link-down"`) {
		t.Errorf("JUnit lacks the InfiniBand case (%v):\n%s", err, b)
	}
	fault("link-up", "cn01:ib0") // the same cable, named at its other end
	clean()

	fault("width", "leaf2:1", "1x")
	agree(ExitMismatch, ExitMismatch, "leaf2 port 1: link to cn03:ib0 trained at 1x, lower than the spec's 4x", "[width]")
	fault("width", "leaf2:1", "4x")
	clean()

	// Two cables swapped: cn01 on leaf2 port 1, cn03 on leaf1 port 2.
	fault("miswire", "cn01:ib0", "cn03:ib0")
	agree(ExitMismatch, ExitMismatch, "leaf1 port 2: cabled to cn03:ib0; the spec cables it to cn01:ib0", "leaf2 port 1: cabled to cn01:ib0", "[miswired]")
	fault("miswire", "cn01:ib0", "cn03:ib0") // back
	clean()

	// One port that does not answer: a finding on that port, the rest of
	// the fabric is read and judged (a port-table fault elsewhere is still
	// a change).
	fault("unreadable", "cn02:ib0")
	fault("pkey-remove", "leaf2:2", "storage")
	expect("validate", validateUntil(ExitError, dir), "cn02:ib0: could not be read", "[unreadable]", "leaf2 port 2: lacks P_Key 0x0002 of partition storage", "[switch-pkey]")
	expect("plan", must(ExitMismatch, "plan", "--detailed-exitcode", dir), "cn02:ib0: could not be read", "ib/leaf2/2/pkey/storage")
	fault("readable", "cn02:ib0")
	repair()

	// Port tables changed behind opensm's back (SMP Sets): validate
	// names the port, plan and drift show the restore (never "a port
	// leaving a partition"), apply restores it and verifies by read-back.
	for _, c := range []struct {
		fault []string
		want  []string
	}{
		{[]string{"pkey-remove", "leaf2:2", "storage"}, []string{"leaf2 port 2: lacks P_Key 0x0002 of partition storage", "[switch-pkey]"}},
		{[]string{"pkey-remove", "cn03:ib0", "compute"}, []string{"cn03:ib0: lacks P_Key 0x0001 of partition compute", "[pkey-missing]"}},
		{[]string{"pkey-limited", "cn03:ib0", "storage"}, []string{"cn03:ib0: partition storage (0x0002): the port is a limited member, the spec says full", "[pkey-membership]"}},
		{[]string{"pkey-add", "sm01:ib0", "storage"}, []string{"sm01:ib0: holds P_Key 0x0002 (full member) of partition storage", "[pkey-extra]"}},
		{[]string{"sl2vl-zero", "leaf1:7"}, []string{"leaf1 port 7: SL-to-VL table is", "[sl2vl]"}},
		{[]string{"sl2vl-zero", "cn02:ib0"}, []string{"cn02:ib0: SL-to-VL table is 0,0,0", "[sl2vl]"}},
		{[]string{"vlarb-weight", "cn04:ib0", "low", "1", "7"}, []string{"cn04:ib0: low-priority VL arbitration is 0:32,1:7,2:64", "[vlarb]"}},
	} {
		fault(c.fault...)
		expect("validate", validateUntil(ExitError, dir), c.want...)
		plan := must(ExitChanges, "plan", "--detailed-exitcode", "--show-payload", dir)
		expect("plan", plan, "restore ")
		if strings.Contains(plan, "leaving a partition") {
			t.Errorf("%v: a restore reads as a port leaving a partition:\n%s", c.fault, plan)
		}
		must(ExitChanges, "drift", dir)
		repair()
	}

	// A host dropped from a partition in opensm's file: validate names
	// the port, plan shows the file's drift and the ports, apply puts it
	// back.
	fault("partition-drop", "storage", "cn04:ib0")
	expect("validate", must(ExitError, "validate", "--skip-traffic", dir), "cn04:ib0: lacks P_Key 0x0002 of partition storage", "[pkey-missing]")
	expect("plan", must(ExitChanges, "plan", "--detailed-exitcode", dir), "partitions/storage/member/0x0c42a10300000e01", "ib/cn04/ib0/pkey/storage")
	repair()

	// A host missing from a partition: opensm runs an older spec without
	// cn04 in storage. validate names cn04's port, plan shows the drift.
	old := filepath.Join(t.TempDir(), "ib.fab.hcl")
	writeFile(t, old, strings.Replace(string(src), `members         = ["cn03:ib0", "cn04:ib0"]`, `members         = ["cn03:ib0"]`, 1))
	if err := os.Symlink(filepath.Join(dir, ".fabctl"), filepath.Join(filepath.Dir(old), ".fabctl")); err != nil {
		t.Fatal(err)
	}
	must(ExitOK, "apply", "-auto-approve", old)
	expect("validate", validateUntil(ExitError, dir), "cn04:ib0: lacks P_Key 0x0002 of partition storage", "[pkey-missing]")
	expect("plan", must(ExitChanges, "plan", "--detailed-exitcode", dir), "partitions/storage/member/0x0c42a10300000e01")
	repair()

	// The files say what the spec says but opensm never applied them
	// (written without SIGHUP): plan reads the ports, shows cn04's
	// missing P_Key as a change; apply finds opensm's own record lacks
	// it too, signals opensm although no file changes, and waits for the
	// sweep.
	partsFile := filepath.Join(local.IBSimDir(tbDir), "opensm", "partitions.conf")
	good, err := os.ReadFile(partsFile)
	if err != nil {
		t.Fatal(err)
	}
	must(ExitOK, "apply", "-auto-approve", old)
	must(ExitError, "validate", "--skip-traffic", dir)
	writeFile(t, partsFile, string(good))
	out = must(ExitChanges, "plan", "--detailed-exitcode", dir)
	expect("plan", out, "ib/cn04/ib0/pkey/storage")
	if strings.Contains(out, "partitions/storage") {
		t.Errorf("the files are right; plan shows a file change:\n%s", out)
	}
	repair()
}

// TestTestbedFaultArgs: testbed fault refuses what it cannot do before it
// touches anything: an unknown fault, a wrong argument count (usage), a
// spec without an InfiniBand fabric, a port the fabric does not have, no
// simulated subnet running; an InfiniBand fault on an Ethernet spec and
// the reverse (usage), no local testbed up.
func TestTestbedFaultArgs(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "ib-testbed", "ib-testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ib.fab.hcl"), string(src))
	ethSrc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "testbed", "testbed.fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	ethTB := t.TempDir()
	writeFile(t, filepath.Join(ethTB, "testbed.fab.hcl"), string(ethSrc))
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
		{[]string{dir, "speed", "leaf1:2", "1G"}, ExitUsage, "fault speed is an Ethernet fault; the spec's fabric is InfiniBand"},
		// An Ethernet spec with links: the testbed's veth cabling.
		{[]string{ethTB, "width", "leaf1:Ethernet0", "2x"}, ExitUsage, "fault width is an InfiniBand fault; the spec's fabric is Ethernet"},
		{[]string{ethTB, "speed", "leaf1:Ethernet0"}, ExitUsage, "fault speed takes 2 argument(s), got 1"},
		{[]string{ethTB, "miswire", "h1:eth1", "h3:eth1"}, ExitError, "no testbed is up here"},
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
		if _, err := ibsim.FaultPort(fab, c.ep); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FaultPort(%s): %v, want %q", c.ep, err, c.want)
		}
	}
	if p, err := ibsim.FaultPort(fab, "cn03:ib0"); err != nil || p != (ibfabric.PortRef{Node: "cn03-mlx5_0", Port: 1}) {
		t.Errorf("FaultPort(cn03:ib0) = %v, %v", p, err)
	}
}

func ibspecFromFile(t *testing.T, dir string) (*ibspec.Fabric, error) {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}, Platforms: builtin.SpecPlatforms()})
	return ibspec.FromSpec(s)
}
