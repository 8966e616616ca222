package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// The plan tests run fabctl plan, show and render against recorded device
// states: a memory-driver registry with the driver registered under every
// platform name and "host", its store loaded from
// testdata/plan/<case>/state/<device>.json. A case's case.json names the
// spec and what devices without a state file hold; applied.json, when
// present, is the last-applied record (for drift).

// planTestSecret is the testbed's switch password, in the environment of
// every test run: no output may contain it.
const planTestSecret = "s3cret-Testbed-Pa55"

// planTestFields are the memory driver's tolerances and disruptive flags
// in these tests, like a real driver's.
var planTestFields = []intent.Field{
	{Pattern: "tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "tc/*/ecn/max", Tolerance: 0.05},
	{Pattern: "nic/*/tc/*/ecn/min", Tolerance: 0.05},
	{Pattern: "nic/*/tc/*/ecn/max", Tolerance: 0.05},
	// Port names may hold '/' (Ethernet1/1, ethernet-1/1/1) and '*' does
	// not match '/': a driver lists a pattern per depth.
	{Pattern: "port/*/pfc", Disruptive: "a PFC change restarts the port (link flap)"},
	{Pattern: "port/*/*/pfc", Disruptive: "a PFC change restarts the port (link flap)"},
	{Pattern: "port/*/*/*/pfc", Disruptive: "a PFC change restarts the port (link flap)"},
	{Pattern: "nic/*/pfc", Disruptive: "mlx5 resets the link on a PFC change"},
	{Pattern: "buffer/*", Disruptive: "a buffer profile edit shuts the ports on some SONiC releases"},
}

// planTestPlatforms are the driver names the test registry serves.
var planTestPlatforms = []string{"sonic", "cumulus", "eos", "nxos", "srlinux", "openconfig", "host"}

var planTestNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// planCaseFile is a case's case.json.
type planCaseFile struct {
	Comment string `json:"comment"`
	// Spec is the spec path, relative to the case directory.
	Spec string `json:"spec"`
	// Unrecorded is what a device without a state file holds: "empty"
	// (factory fresh) or "desired" (the spec's desired state).
	Unrecorded string `json:"unrecorded"`
}

// recordedDevice is one state/<device>.json: a recorded State, the
// desired state with Set and Delete applied, or a read error.
type recordedDevice struct {
	Comment     string            `json:"comment"`
	ReadError   string            `json:"read_error"`
	State       map[string]string `json:"state"`
	FromDesired bool              `json:"from_desired"`
	Set         map[string]string `json:"set"`
	Delete      []string          `json:"delete"`
}

type planFixture struct {
	name     string
	dir      string
	spec     string // spec path for the command line
	store    *memory.Store
	reg      *drivers.Registry
	stateDir string
}

func newTestRegistry(t *testing.T, store *memory.Store) *drivers.Registry {
	t.Helper()
	reg := drivers.NewRegistry()
	for _, n := range planTestPlatforms {
		if err := reg.Register(n, func() drivers.Driver { return &memory.Driver{Store: store, FieldList: planTestFields} }); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// loadPlanFixture builds the store, registry and state directory of a
// case.
func loadPlanFixture(t *testing.T, name string) *planFixture {
	t.Helper()
	dir := filepath.Join("testdata", "plan", name)
	var cf planCaseFile
	readJSONFile(t, filepath.Join(dir, "case.json"), &cf)
	fx := &planFixture{name: name, dir: dir, spec: filepath.Join(dir, cf.Spec), store: memory.NewStore(), stateDir: t.TempDir()}
	fx.reg = newTestRegistry(t, fx.store)

	s := testutil.Load(t, fx.spec, spec.LoadOptions{})
	desired := map[string]intent.State{}
	for _, u := range plan.Units(intent.Compile(s)) {
		desired[u.Device.Name] = u.State
	}
	recorded := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "state", "*.json"))
	for _, file := range files {
		dev := strings.TrimSuffix(filepath.Base(file), ".json")
		want, ok := desired[dev]
		if !ok {
			t.Fatalf("%s: no device %q in %s", file, dev, fx.spec)
		}
		var r recordedDevice
		readJSONFile(t, file, &r)
		recorded[dev] = true
		switch {
		case r.ReadError != "":
			fx.store.FailRead[dev] = errors.New(r.ReadError)
		case r.FromDesired:
			st := intent.State{}
			for k, v := range want {
				st[k] = v
			}
			for k, v := range r.Set {
				st[k] = v
			}
			for _, k := range r.Delete {
				delete(st, k)
			}
			fx.store.Set(dev, st)
		default:
			fx.store.Set(dev, r.State)
		}
	}
	for dev, st := range desired {
		if !recorded[dev] && cf.Unrecorded == "desired" {
			fx.store.Set(dev, st)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "applied.json")); err == nil {
		var a plan.Applied
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(plan.AppliedPath(fx.stateDir, a.Fabric), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// factory returns a test factory whose drivers read the fixture's store.
func (fx *planFixture) factory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	f, _, out, errOut := testFactory("FABCTL_TESTBED_PASSWORD=" + planTestSecret)
	f.Drivers = func() *drivers.Registry { return fx.reg }
	f.SkipSecretCheck = true // the memory drivers log in nowhere (ai-pod's secrets are not on this machine)
	f.Now = func() time.Time { return planTestNow }
	return f, out, errOut
}

// plan runs fabctl plan with args (the state dir and spec are added).
func (fx *planFixture) plan(t *testing.T, args ...string) (stdout, stderr string, code ExitCode) {
	t.Helper()
	f, out, errOut := fx.factory()
	argv := append([]string{"plan", "--state-dir", fx.stateDir}, args...)
	code = runCLI(f, append(argv, fx.spec)...)
	stdout, stderr = out.String(), errOut.String()
	if strings.Contains(stdout+stderr, planTestSecret) {
		t.Errorf("plan %v output contains the credentials' secret", args)
	}
	return stdout, stderr, code
}

// planViews are the golden views: the flags that select each.
var planViews = map[string][]string{
	"human":    nil,
	"verbose":  {"--verbose"},
	"payload":  {"--show-payload"},
	"json":     {"--json"},
	"markdown": {"--format", "markdown"},
}

var planGoldenCases = []struct {
	fixture string
	views   []string
	code    ExitCode
}{
	{"testbed-empty", []string{"human", "markdown"}, ExitOK},
	{"testbed-clean", []string{"human", "verbose", "json"}, ExitOK},
	{"testbed-converged", []string{"human", "verbose", "payload", "json", "markdown"}, ExitOK},
	{"testbed-drift", []string{"human", "json", "markdown"}, ExitOK},
	{"testbed-unreachable", []string{"human", "json", "markdown"}, ExitError},
	{"ai-pod-empty", []string{"human"}, ExitOK},
	{"ai-pod-converged", []string{"human", "verbose", "payload", "json", "markdown"}, ExitOK},
	{"lint-warning", []string{"human", "json", "markdown"}, ExitOK},
	{"unmanaged", []string{"human", "verbose", "json", "markdown"}, ExitOK},
}

// TestPlanGolden renders every case in its views (stdout, not a TTY) and
// compares with testdata/plan/<case>/<view>.golden; stderr, when not
// empty, with <view>.stderr.golden. Every run is done twice, with
// different parallelism: the bytes must not move.
func TestPlanGolden(t *testing.T) {
	for _, tc := range planGoldenCases {
		for _, view := range tc.views {
			t.Run(tc.fixture+"/"+view, func(t *testing.T) {
				fx := loadPlanFixture(t, tc.fixture)
				out, errOut, code := fx.plan(t, planViews[view]...)
				if code != tc.code {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
				}
				testutil.Golden(t, filepath.Join(fx.dir, view+".golden"), []byte(out))
				if errOut != "" || fileExists(filepath.Join(fx.dir, view+".stderr.golden")) {
					testutil.Golden(t, filepath.Join(fx.dir, view+".stderr.golden"), []byte(errOut))
				}
				out2, errOut2, _ := fx.plan(t, append([]string{"--parallelism", "1"}, planViews[view]...)...)
				if out2 != out || errOut2 != errOut {
					t.Errorf("output differs between two runs (parallelism 16 and 1)")
				}
				if view == "json" {
					var doc map[string]any
					if err := json.Unmarshal([]byte(out), &doc); err != nil {
						t.Fatalf("stdout is not one JSON document: %v", err)
					}
					if doc["format_version"] != plan.FormatVersion {
						t.Errorf("format_version %v", doc["format_version"])
					}
				}
			})
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestPlanExitCodes(t *testing.T) {
	tests := []struct {
		fixture string
		args    []string
		code    ExitCode
	}{
		{"testbed-clean", nil, ExitOK},
		{"testbed-clean", []string{"--detailed-exitcode"}, ExitOK},
		{"testbed-converged", nil, ExitOK},
		{"testbed-converged", []string{"--detailed-exitcode"}, ExitChanges},
		{"testbed-converged", []string{"--detailed-exitcode", "--json"}, ExitChanges},
		// Issue 36: only unmanaged settings differ: no changes.
		{"unmanaged", []string{"--detailed-exitcode"}, ExitOK},
		{"testbed-unreachable", nil, ExitError},
		{"testbed-unreachable", []string{"--detailed-exitcode"}, ExitError},
		// Excluding the unreachable switch plans the others.
		{"testbed-unreachable", []string{"--detailed-exitcode", "--exclude", "spine1"}, ExitChanges},
		{"testbed-converged", []string{"--target", "nothing*"}, ExitUsage},
		{"testbed-converged", []string{"--parallelism", "0"}, ExitUsage},
		{"testbed-converged", []string{"--format", "yaml"}, ExitUsage},
		{"testbed-converged", []string{"--json", "--format", "markdown"}, ExitUsage},
		{"testbed-converged", []string{"--target", "[leaf"}, ExitUsage},
		{"testbed-converged", []string{"--var", "novalue"}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.fixture+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			fx := loadPlanFixture(t, tt.fixture)
			_, errOut, code := fx.plan(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errOut)
			}
		})
	}
}

func TestPlanUnreachableNamesDeviceAndCause(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-unreachable")
	out, errOut, code := fx.plan(t)
	if code != ExitError {
		t.Fatalf("exit %d", code)
	}
	// The plan's "Not planned" block names the device and the cause; the
	// final error points at it (TestPlanDeviceErrorsOnce).
	for _, want := range []string{"✘ switch.spine1", "connection refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not name %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, `1 device could not be planned (listed above under "Not planned")`) {
		t.Errorf("stderr:\n%s", errOut)
	}
	// The others are still planned.
	if !strings.Contains(out, "host.h4 (linux)") || !strings.Contains(out, "~ irqbalance: stop → keep") {
		t.Errorf("the reachable devices' changes are missing:\n%s", out)
	}
	// And a plan with an unreachable device is not saved.
	file := filepath.Join(t.TempDir(), "plan.fab")
	_, errOut, _ = fx.plan(t, "-out", file)
	if fileExists(file) || !strings.Contains(errOut, "not saved") {
		t.Errorf("plan with an unreachable device saved (or not said): %s", errOut)
	}
}

func TestPlanTargeting(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-converged")
	out, _, code := fx.plan(t, "--target", "switch.leaf*", "--target", "role:test", "--exclude", "h1", "--exclude", "h3")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	testutil.Golden(t, filepath.Join(fx.dir, "targeted.golden"), []byte(out))
	for _, want := range []string{"Warning: targeting is in effect", "This plan covers 8 of the fabric's 11 devices", "Targeted: this plan covers 8 of 11 devices."} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	js, _, _ := fx.plan(t, "--json", "--target", "role:spine")
	var doc view.PlanJSONDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Targeted || len(doc.Devices) != 1 || doc.Devices[0].Address != "switch.spine1" || doc.FabricDevices != 11 {
		t.Errorf("targeted JSON: targeted=%v devices=%d fabric_devices=%d", doc.Targeted, len(doc.Devices), doc.FabricDevices)
	}
}

// TestPlanDisruptiveAlwaysListed: the compact view hides settings beyond
// a few lines per device, never a disruptive change, and the footer lists
// every one.
func TestPlanDisruptiveAlwaysListed(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-empty")
	// Make every PFC path disruptive on empty devices: many adds per device.
	out, _, _ := fx.plan(t)
	var doc view.PlanJSONDoc
	js, _, _ := fx.plan(t, "--json")
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.DisruptiveChanges) == 0 {
		t.Fatal("fixture has no disruptive change")
	}
	// The footer names every disruptive change: under its device and
	// reason, each path once.
	footer := out[strings.Index(out, "\nPlan: "):]
	blocks := strings.Split(footer, "\n  ! ")[1:]
	for _, d := range doc.DisruptiveChanges {
		found := false
		for _, b := range blocks {
			head, _, _ := strings.Cut(b, "\n")
			if strings.HasPrefix(head, d.Address+" "+d.Path+": "+d.Reason) ||
				(strings.HasPrefix(head, d.Address+", ") && strings.HasSuffix(head, ": "+d.Reason) &&
					strings.Contains(" "+strings.ReplaceAll(b, "\n", " ")+",", " "+d.Path+",")) {
				found = true
			}
		}
		if !found {
			t.Errorf("footer does not list %s %s (%s)", d.Address, d.Path, d.Reason)
		}
	}
}

func TestPlanSavedRoundTrip(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-converged")
	file := filepath.Join(t.TempDir(), "plan.fab")
	human, _, code := fx.plan(t, "-out", file)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(human, "Saved the plan to "+file) {
		t.Errorf("no saved note:\n%s", human)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("plan file mode %v, want 0600", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(file)
	if bytes.Contains(raw, []byte(planTestSecret)) {
		t.Error("the saved plan contains the credentials' secret")
	}
	sp, err := plan.Read(file, plan.Keys{})
	if err != nil {
		t.Fatal(err)
	}
	// The plan records its spec path and state directory absolute (issue
	// 21: apply finds the fabric's lock wherever it runs from).
	absSpec, _ := filepath.Abs(fx.spec)
	absState, _ := filepath.Abs(fx.stateDir)
	if len(sp.Sources) != 1 || sp.SpecPath != absSpec || sp.StateDir != absState || sp.Plan.Device("switch.leaf1").Fingerprint == "" {
		t.Errorf("saved plan: %d sources, spec path %q", len(sp.Sources), sp.SpecPath)
	}
	if len(sp.Env) != 0 {
		t.Errorf("saved plan records non-FAB_VAR environment: %v", sp.Env)
	}

	// show renders the same plan, under a header.
	f, out, errOut := fx.factory()
	if code := runCLI(f, "show", file); code != ExitOK {
		t.Fatalf("show exit %d: %s", code, errOut)
	}
	shown := out.String()
	planPart := strings.TrimSuffix(human, "\nSaved the plan to "+file+". To apply exactly this plan: fabctl apply "+file+"\n")
	if !strings.HasSuffix(shown, planPart) {
		t.Errorf("show does not end with the plan's output:\n%s\n--- plan ---\n%s", shown, planPart)
	}
	if strings.Contains(shown, "stale") {
		t.Errorf("fresh plan shown as stale:\n%s", shown)
	}
	testutil.Golden(t, filepath.Join(fx.dir, "show.golden"), []byte(strings.NewReplacer(file, "PLANFILE", absState, "STATEDIR", absSpec, fx.spec).Replace(shown)))

	// show --json is plan --json plus the saved_plan object.
	planJSON, _, _ := fx.plan(t, "--json")
	f, out, _ = fx.factory()
	if code := runCLI(f, "show", "--json", file); code != ExitOK {
		t.Fatalf("show --json exit %d", code)
	}
	var a, b map[string]any
	if err := json.Unmarshal([]byte(planJSON), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	info, _ := b["saved_plan"].(map[string]any)
	if info == nil || info["stale"] != false || info["path"] != file {
		t.Errorf("saved_plan: %v", info)
	}
	delete(b, "saved_plan")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("show --json differs from plan --json")
	}
}

func TestShowTamperedPlan(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-converged")
	file := filepath.Join(t.TempDir(), "plan.fab")
	if _, _, code := fx.plan(t, "-out", file); code != ExitOK {
		t.Fatal("plan failed")
	}
	raw, _ := os.ReadFile(file)
	// Turn the MTU the plan sets into another value.
	edited := bytes.Replace(raw, []byte(`"after": "9000"`), []byte(`"after": "1500"`), 1)
	if bytes.Equal(edited, raw) {
		t.Fatal("nothing to tamper with")
	}
	if err := os.WriteFile(file, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	f, out, errOut := fx.factory()
	if code := runCLI(f, "show", file); code != ExitError {
		t.Errorf("show of a tampered plan: exit %d", code)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "was modified after fabctl wrote it") {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	// Not a plan at all.
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, errOut = fx.factory()
	if code := runCLI(f, "show", file); code != ExitError || !strings.Contains(errOut.String(), "is not a fabctl plan file") {
		t.Errorf("show of a non-plan: exit %d, %s", code, errOut)
	}
}

func TestShowStalePlanWarnsAndRenders(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.ReadFile("../../examples/testbed/testbed.fab.hcl")
	specFile := filepath.Join(dir, "testbed.fab.hcl")
	writeFile(t, specFile, string(src))
	varFile := filepath.Join(dir, "lab.fabvars")
	writeFile(t, varFile, "# no variables\n")
	store := memory.NewStore()
	fx := &planFixture{dir: dir, spec: dir, store: store, reg: newTestRegistry(t, store), stateDir: t.TempDir()}
	file := filepath.Join(dir, "plan.fab")
	if _, errOut, code := fx.plan(t, "-out", file, "--var-file", varFile); code != ExitOK {
		t.Fatalf("plan: %d %s", code, errOut)
	}
	// Edit the spec and the var file after planning.
	writeFile(t, specFile, string(src)+"\n# edited after the plan\n")
	writeFile(t, varFile, "# changed\n")
	f, out, errOut := fx.factory()
	if code := runCLI(f, "show", file); code != ExitOK {
		t.Fatalf("show of a stale plan: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Warning: this saved plan is stale", specFile + " edited", "var file " + varFile + " changed", "Plan: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
	f, out, errOut = fx.factory()
	if code := runCLI(f, "show", "--json", file); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var doc view.PlanJSONDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SavedPlan == nil || !doc.SavedPlan.Stale || len(doc.SavedPlan.Warnings) != 2 {
		t.Errorf("saved_plan %+v", doc.SavedPlan)
	}
	if !strings.Contains(errOut.String(), "is stale") {
		t.Errorf("no stale warning on stderr with --json: %q", errOut)
	}
	// A removed spec: cannot compare, still shown.
	if err := os.Remove(specFile); err != nil {
		t.Fatal(err)
	}
	f, out, _ = fx.factory()
	if code := runCLI(f, "show", file); code != ExitOK || !strings.Contains(out.String(), "cannot be read") {
		t.Errorf("show with the spec gone: exit %d\n%s", code, out)
	}
}

func TestPlanSpecErrorsStopThePlan(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.fab.hcl"), `fabric "bad" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 3000
}
`)
	store := memory.NewStore()
	fx := &planFixture{dir: dir, spec: dir, store: store, reg: newTestRegistry(t, store), stateDir: t.TempDir()}
	out, errOut, code := fx.plan(t)
	if code != ExitError || out != "" || !strings.Contains(errOut, "Error: MTU-2") {
		t.Errorf("exit %d stdout %q stderr:\n%s", code, out, errOut)
	}
	js, _, code := fx.plan(t, "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != ExitError || doc["spec_valid"] != false {
		t.Errorf("json: exit %d, %v, %s", code, err, js)
	}
}

func TestPlanProgressOnlyOnTTY(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-converged")
	f, out, errOut := fx.factory()
	f.IOStreams.SetStderrTTY(true)
	if code := runCLI(f, "plan", "--state-dir", fx.stateDir, fx.spec); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errOut.String(), "Read 11 devices in ") {
		t.Errorf("no progress summary on a TTY stderr: %q", errOut)
	}
	if strings.Contains(out.String(), "Read 11 devices") {
		t.Error("progress on stdout")
	}
	_, errText, _ := fx.plan(t)
	if errText != "" {
		t.Errorf("stderr not empty without a TTY: %q", errText)
	}
}

func TestPlanColorOnlyOnTTY(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-converged")
	f, out, _ := fx.factory()
	f.IOStreams.SetStdoutTTY(true)
	runCLI(f, "plan", "--state-dir", fx.stateDir, fx.spec)
	if !strings.Contains(out.String(), "\x1b[") {
		t.Error("no ANSI styling on a color terminal")
	}
	f, out, _ = fx.factory()
	f.IOStreams.SetStdoutTTY(true)
	runCLI(f, "plan", "--no-color", "--state-dir", fx.stateDir, fx.spec)
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("ANSI styling with --no-color")
	}
	plain, _, _ := fx.plan(t)
	if plain != out.String() {
		t.Error("--no-color on a TTY differs from non-TTY output")
	}
}

func TestPlanInsecureReachesDrivers(t *testing.T) {
	fx := loadPlanFixture(t, "testbed-clean")
	var got []bool
	rec := &targetRecorder{Driver: &memory.Driver{Store: fx.store}, seen: &got}
	reg := drivers.NewRegistry()
	for _, n := range planTestPlatforms {
		_ = reg.Register(n, func() drivers.Driver { return rec })
	}
	fx.reg = reg
	_, errOut, _ := fx.plan(t, "--insecure", "--target", "leaf1")
	if len(got) != 1 || !got[0] {
		t.Errorf("insecure seen by the driver: %v", got)
	}
	if !strings.Contains(errOut, "--insecure") {
		t.Errorf("no --insecure warning: %q", errOut)
	}
}

// targetRecorder records the Insecure flag and the credentials of the
// targets it reads.
type targetRecorder struct {
	*memory.Driver
	seen *[]bool
}

func (r *targetRecorder) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	*r.seen = append(*r.seen, t.Insecure)
	if t.Credentials == nil || t.Credentials.Password == nil || t.Credentials.Password.Kind != "env" {
		return nil, errors.New("credentials reference not passed to the driver")
	}
	return r.Driver.Read(ctx, t)
}

// TestEngineFlagErrors: an unknown engine, and kubeconfig flags without
// the kubernetes engine, are usage errors.
func TestEngineFlagErrors(t *testing.T) {
	for _, args := range [][]string{{"--engine", "ansible"}, {"--kubeconfig", "k"}, {"--context", "c"}} {
		f, _, _, _ := testFactory()
		cmd := NewCmdPlan(f, func(o *PlanOptions) error { return nil })
		if code := execCmd(f, cmd, append([]string{"plan"}, args...)...); code != ExitUsage {
			t.Errorf("plan %v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestPlanFlags(t *testing.T) {
	ssh := EngineOptions{Engine: engineSSH}
	tests := []struct {
		args []string
		want PlanOptions
	}{
		{nil, PlanOptions{Path: ".", Parallelism: 16, LinkSettle: DefaultLinkSettle, Format: "human", EngineOptions: ssh}},
		{[]string{"-out", "p.fab", "--verbose", "--show-payload", "--detailed-exitcode", "--parallelism", "4", "dir"},
			PlanOptions{Path: "dir", Parallelism: 4, LinkSettle: DefaultLinkSettle, Format: "human", Out: "p.fab", Verbose: true, ShowPayload: true, DetailedExitcode: true, EngineOptions: ssh}},
		{[]string{"--json"}, PlanOptions{Path: ".", Parallelism: 16, LinkSettle: DefaultLinkSettle, Format: "json", EngineOptions: ssh}},
		{[]string{"--format", "markdown", "--target", "a", "--exclude", "role:b", "--insecure", "--state-dir", "s"},
			PlanOptions{Path: ".", Parallelism: 16, LinkSettle: DefaultLinkSettle, Format: "markdown", Targets: []string{"a"}, Excludes: []string{"role:b"}, Insecure: true, StateDir: "s", EngineOptions: ssh}},
		{[]string{"--engine", "kubernetes", "--kubeconfig", "k", "--context", "c"},
			PlanOptions{Path: ".", Parallelism: 16, LinkSettle: DefaultLinkSettle, Format: "human", EngineOptions: EngineOptions{Engine: engineKubernetes, Kubeconfig: "k", Context: "c"}}},
		{[]string{"--insecure-skip-host-key"}, PlanOptions{Path: ".", Parallelism: 16, LinkSettle: DefaultLinkSettle, Format: "human", Insecure: true, EngineOptions: ssh}},
	}
	for _, tt := range tests {
		f, _, _, errOut := testFactory()
		var got *PlanOptions
		cmd := NewCmdPlan(f, func(o *PlanOptions) error { got = o; return nil })
		if code := execCmd(f, cmd, append([]string{"plan"}, tt.args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d %s", tt.args, code, errOut)
		}
		g := *got
		g.IO, g.Factory = nil, nil
		if !reflect.DeepEqual(g, tt.want) {
			t.Errorf("%v:\n got  %+v\n want %+v", tt.args, g, tt.want)
		}
	}
}

func TestStateDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.fab.hcl")
	writeFile(t, file, "")
	for _, tt := range []struct{ spec, flag, want string }{
		{dir, "", filepath.Join(dir, ".fabctl")},
		{file, "", filepath.Join(dir, ".fabctl")},
		{file, "/x/state", "/x/state"},
	} {
		if got := stateDir(tt.spec, tt.flag); got != tt.want {
			t.Errorf("stateDir(%q, %q) = %q, want %q", tt.spec, tt.flag, got, tt.want)
		}
	}
}

// TestPlanDeviceErrorsOnce: a device that could not be read is named
// with its error once: the human plan lists it under "Not planned" and
// the final Error counts it without repeating the error; when no device
// could be read the Error says nothing was planned, not that the plan
// covers the others. JSON keeps each device's error on stderr too (its
// reader may not see the document). Drift shares the path.
func TestPlanDeviceErrorsOnce(t *testing.T) {
	const cause = "dial tcp 127.0.0.21:2222: connect: connection refused"
	fx := loadPlanFixture(t, "testbed-unreachable")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Error: 1 device could not be planned (listed above under \"Not planned\"); the plan covers the other devices only\n"},
		{[]string{"--target", "spine1"}, "Error: 1 device could not be planned (listed above under \"Not planned\"); nothing was planned\n"},
	} {
		for _, cmd := range []string{"plan", "drift"} {
			f, out, errOut := fx.factory()
			argv := append(append([]string{cmd, "--state-dir", fx.stateDir}, c.args...), fx.spec)
			if code := runCLI(f, argv...); code != ExitError {
				t.Fatalf("%v: exit %d\n%s%s", argv, code, out, errOut)
			}
			if n := strings.Count(out.String()+errOut.String(), cause); n != 1 {
				t.Errorf("%v: the error appears %d times, want once:\n%s%s", argv, n, out, errOut)
			}
			if errOut.String() != c.want {
				t.Errorf("%v: stderr %q, want %q", argv, errOut, c.want)
			}
		}
	}
	_, errOut, _ := fx.plan(t, "--json", "--target", "spine1")
	if !strings.Contains(errOut, "1 device could not be planned; nothing was planned:\n  switch.spine1: read switch.spine1: "+cause) {
		t.Errorf("--json stderr:\n%s", errOut)
	}
}
