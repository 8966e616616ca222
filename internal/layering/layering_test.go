package layering

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fabctl/fabctl"

// pkg is the part of `go list -json` this test reads.
type pkg struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs the real `go list` over the module, so the test sees
// exactly what the build sees (build tags included: verbs is listed too).
func listPackages(t *testing.T, tags string) []pkg {
	t.Helper()
	args := []string{"list", "-json=ImportPath,Imports,Deps,TestImports,XTestImports"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, module+"/...")
	cmd := exec.Command("go", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		p.ImportPath = rel(p.ImportPath)
		p.Imports = own(p.Imports)
		p.Deps = own(p.Deps)
		p.TestImports = own(p.TestImports)
		p.XTestImports = own(p.XTestImports)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages: is the test running inside the module?", len(pkgs))
	}
	return pkgs
}

func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

// own keeps the module's own packages, relative to the module root.
func own(paths []string) []string {
	var r []string
	for _, p := range paths {
		if p == module || strings.HasPrefix(p, module+"/") {
			r = append(r, rel(p))
		}
	}
	return r
}

// under reports whether p is the package prefix or inside it.
func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

func anyUnder(p string, prefixes []string) bool {
	for _, q := range prefixes {
		if under(p, q) {
			return true
		}
	}
	return false
}

// testRigs are the packages that exist for tests, by declaration (not
// by a name: a package named contest or latest is held to its rules):
// they may reach further than their neighbours, and only test files (or
// other rigs) import them. TestTestRigsDeclared keeps the list true.
var testRigs = []string{
	"internal/testutil",   // one -update flag, RequireRoot, ../shared lookups
	"internal/switchtest", // the switch drivers' rig and conformance suites
	"internal/sshdtest",   // a real OpenSSH server
	"internal/difftest",   // the differential property test of the PR gate (tests only)
}

func isTestRig(p string) bool {
	for _, r := range testRigs {
		if p == r {
			return true
		}
	}
	return false
}

// Every package of the module matches the rule with the longest prefix;
// it may import (outside its tests) only the module packages that rule
// allows. "x" allows x and everything under it, "=x" only x itself, and
// "internal" the shared internal packages (internal/cli and test rigs
// excluded: they have rules of their own below). A package no rule covers
// fails the test, so a new top-level folder must say where it stands.
var rules = []struct {
	pkg string
	may []string
}{
	{"cmd/fabctl", []string{"internal/cli"}},
	{"internal/cli", []string{"*"}}, // the CLI wires everything
	// Its views render the engine's results (plan's and apply's types)
	// and never run it.
	{"internal/cli/view", []string{"plan", "=apply", "=drivers", "importer", "intent", "spec", "internal"}},
	// The shared flag checks are pure: flags in, usage errors out.
	{"internal/cli/arguments", nil},
	{"spec", []string{"spec", "internal"}},
	{"intent", []string{"spec", "internal"}},
	{"yangval", []string{"internal"}},
	// libyang validation reuses yangval's gNMI path parser.
	{"yangval/libyang", []string{"=yangval", "internal"}},
	// Offline validation of rendered payloads: goyang and libyang together.
	{"yangval/check", []string{"=yangval", "yangval/libyang", "internal"}},
	// Drivers: the contract, other drivers' shared cores, transports, the
	// intent model and YANG checks; never the engine (plan, apply,
	// validate, agent) and never a testbed.
	{"drivers", []string{"drivers", "intent", "spec", "yangval", "internal"}},
	// A platform imports the contract, the shared cores and transports:
	// never another platform or the host driver (what platforms share
	// goes into a core).
	{"drivers/switch", []string{"=drivers", "drivers/switch/clicore", "drivers/switch/gnmicore", "drivers/transport", "intent", "spec", "yangval", "internal"}},
	{"drivers/host", []string{"=drivers", "drivers/host", "drivers/transport", "intent", "spec", "yangval", "internal"}},
	{"drivers/sm", []string{"=drivers", "drivers/sm/ibfabric", "drivers/transport", "intent", "spec", "internal"}},
	{"drivers/memory", []string{"=drivers", "intent", "=internal/linktruth"}},
	{"drivers/transport", []string{"drivers/transport", "=drivers", "spec", "yangval", "internal"}},
	{"plan", []string{"=drivers", "intent", "spec", "internal"}},
	{"apply", []string{"plan", "=drivers", "intent", "spec", "internal"}},
	{"validate/lint", []string{"intent", "spec", "internal"}},
	{"validate/verbs", []string{"spec", "internal"}},
	{"validate/readback", []string{"plan", "=drivers", "intent", "spec", "internal"}},
	{"validate/traffic", []string{"validate/verbs", "plan", "=drivers", "intent", "spec", "internal"}},
	// The InfiniBand read-back: the fabric model and its spec mapping.
	{"validate/ibreadback", []string{"drivers/sm/ibfabric", "intent", "spec", "internal"}},
	// The agent is the engine on a host: it plans and applies through the
	// host driver it serves and runs traffic steps.
	{"agent", []string{"apply", "plan", "validate/traffic", "telemetry", "=drivers", "drivers/host", "kube", "intent", "spec", "internal"}},
	// Delivery through Kubernetes: the FabricHostConfig API, manifests,
	// client, the hosts' driver of --engine kubernetes (a driver: never
	// the engine, not even transitively) and the Lease object; the agent
	// serves its node side.
	{"kube", []string{"=drivers", "intent", "spec", "internal"}},
	// The fabric lock as a Lease: an apply.Locker backend on kube's Lease.
	{"kube/kubelock", []string{"apply", "=kube", "internal"}},
	// Telemetry reads NIC counters with validate's reader and switches
	// through the gNMI transport; the agent serves its host collector.
	{"telemetry", []string{"validate/traffic", "drivers/transport", "=drivers", "intent", "spec", "internal"}},
	// Import is pure logic: observed states and a spec loader in, HCL
	// and a report out; the CLI reads the devices (plan.Observe).
	{"importer", []string{"intent", "spec", "internal"}},
	// Scheduler topology is a function of the spec alone.
	{"topology", []string{"spec", "internal"}},
	{"testbed", []string{"testbed", "drivers", "intent", "spec", "yangval", "internal"}},
	// The Kubernetes harness installs the engine's shipped manifests.
	{"testbed/kubetb", []string{"kube", "internal"}},
	{"internal", []string{"internal", "spec", "intent"}},
	{"internal/fabgen/cmd/podbench", []string{"internal/fabgen", "drivers/builtin", "spec", "validate/lint"}},
	{"examples", nil}, // tests only
}

func ruleFor(p string) (may []string, ok bool) {
	best := -1
	for i, r := range rules {
		if under(p, r.pkg) && (best < 0 || len(r.pkg) > len(rules[best].pkg)) {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	return rules[best].may, true
}

// allowed reports whether a package under a rule may import imp.
func allowed(may []string, imp string) bool {
	if isTestRig(imp) {
		return false // only tests import a test rig
	}
	for _, m := range may {
		switch {
		case m == "*":
			return true
		case strings.HasPrefix(m, "="):
			if imp == m[1:] {
				return true
			}
		case m == "internal":
			if under(imp, "internal") && !under(imp, "internal/cli") && !isTestRig(imp) {
				return true
			}
		case under(imp, m):
			return true
		}
	}
	return false
}

func TestLayering(t *testing.T) {
	for _, tags := range []string{"", "verbs"} {
		pkgs := listPackages(t, tags)
		for _, p := range pkgs {
			may, ok := ruleFor(p.ImportPath)
			if !ok {
				t.Errorf("%s: no layering rule covers this package; add it to rules in internal/layering and to docs/architecture.md", p.ImportPath)
				continue
			}
			if isTestRig(p.ImportPath) {
				continue // test rigs may reach further; only tests import them (below)
			}
			for _, imp := range p.Imports {
				if !allowed(may, imp) {
					t.Errorf("%s imports %s, against the layering (tags %q): see docs/architecture.md", p.ImportPath, imp, tags)
				}
			}
		}
	}
}

// Only cmd/fabctl imports the CLI, and only tests (or other test rigs)
// import a test rig: from tests too, nothing else may reach internal/cli.
func TestNothingImportsTheCLI(t *testing.T) {
	for _, p := range listPackages(t, "verbs") {
		all := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
		for _, imp := range all {
			if under(imp, "internal/cli") && p.ImportPath != "cmd/fabctl" && !under(p.ImportPath, "internal/cli") {
				t.Errorf("%s imports %s: only cmd/fabctl may", p.ImportPath, imp)
			}
		}
		if isTestRig(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if isTestRig(imp) {
				t.Errorf("%s imports the test rig %s outside its tests", p.ImportPath, imp)
			}
		}
	}
}

// Drivers never reach the engine, not even transitively: the drivers'
// folder, and kube, whose host driver delivers through the cluster.
// The engine is every package that plans, applies, validates or serves:
// plan, apply, validate, the agent, kube's lock and telemetry, the
// testbeds and the CLI.
func TestDriversDoNotReachTheEngine(t *testing.T) {
	engine := []string{"plan", "apply", "validate", "agent", "kube", "telemetry", "testbed", "internal/cli"}
	for _, p := range listPackages(t, "verbs") {
		driver := under(p.ImportPath, "drivers") || p.ImportPath == "kube"
		if !driver || isTestRig(p.ImportPath) {
			continue
		}
		var bad []string
		for _, d := range p.Deps {
			if anyUnder(d, engine) {
				bad = append(bad, d)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s depends on the engine: %s", p.ImportPath, strings.Join(bad, ", "))
		}
	}
}

// The rule engine itself: a table of verdicts, so a mistake in allowed
// cannot make every check pass.
func TestAllowed(t *testing.T) {
	for _, p := range []string{"drivers/switch/contest", "internal/latest"} {
		if isTestRig(p) {
			t.Errorf("%s counts as a test rig by its name", p)
		}
	}
	cases := []struct {
		pkg, imp string
		want     bool
	}{
		{"drivers/switch/eos", "drivers/switch/clicore", true},
		{"drivers/switch/eos", "drivers/switch/sonic", false},
		{"drivers/switch/eos", "drivers/host", false},
		{"drivers/sm/opensm", "drivers/host", false},
		{"drivers/sm/opensm", "drivers/sm/ibfabric", true},
		{"drivers/builtin", "drivers/switch/eos", true},
		{"drivers/switch/eos", "plan", false},
		{"drivers/switch/eos", "internal/cli", false},
		{"drivers/switch/eos", "internal/switchtest", false},
		{"drivers/switch/eos", "internal/jsontree", true},
		{"drivers/transport/ssh", "drivers/host", false},
		{"plan", "drivers", true},
		{"plan", "drivers/host", false},
		{"apply", "validate/lint", false},
		{"spec", "drivers", false},
		{"agent", "drivers/host", true},
		{"agent", "drivers/switch/eos", false},
		{"internal/cli", "testbed/local", true},
		{"cmd/fabctl", "plan", false},
		{"internal/cli/view", "plan", true},
		{"internal/cli/view", "internal/cli", false},
		{"internal/cli/view", "apply", true},
		{"internal/cli/view", "kube", false},
		{"internal/cli/view", "validate/readback", false},
		{"internal/cli/arguments", "plan", false},
		{"kube", "apply", false},
		{"kube", "plan", false},
		{"kube", "drivers", true},
		{"kube/kubelock", "apply", true},
		{"drivers/host", "kube", false},
		{"drivers/switch/sonic", "telemetry", false},
		// A package is a test rig by declaration, not by its name.
		{"drivers/switch/contest", "plan", false},
		{"internal/latest", "internal/cli", false},
		{"drivers/switch/eos", "internal/switchtest", false},
	}
	for _, c := range cases {
		may, ok := ruleFor(c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		if got := allowed(may, c.imp); got != c.want {
			t.Errorf("%s may import %s: got %v, want %v", c.pkg, c.imp, got, c.want)
		}
	}
}

// fabctl ships itself to every host as the agent: the binary built
// without extra tags (and the traffic-test build, -tags verbs) must not
// link libyang, which RDMA hosts do not carry; only -tags libyang does.
func TestDefaultBinaryNeedsNoLibyang(t *testing.T) {
	for _, tags := range []string{"", "verbs", "libyang"} {
		args := []string{"list", "-deps", "-f", "{{.ImportPath}} {{join .CgoPkgConfig \" \"}}"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		out, err := exec.Command("go", append(args, module+"/cmd/fabctl")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		links := strings.Contains(string(out), " libyang")
		if want := tags == "libyang"; links != want {
			t.Errorf("tags %q: fabctl links libyang = %v, want %v", tags, links, want)
		}
	}
}

// TestTestRigsDeclared: every declared test rig exists, and every
// package that looks like one by its name is declared (or renamed).
func TestTestRigsDeclared(t *testing.T) {
	have := map[string]bool{}
	for _, p := range listPackages(t, "verbs") {
		have[p.ImportPath] = true
		b := path.Base(p.ImportPath)
		if (strings.HasSuffix(b, "test") || b == "testutil") && !isTestRig(p.ImportPath) {
			t.Errorf("%s is named like a test rig but is not one: add it to testRigs if only tests import it", p.ImportPath)
		}
	}
	for _, r := range testRigs {
		if !have[r] {
			t.Errorf("test rig %s is declared but does not exist: drop it from testRigs", r)
		}
	}
}
