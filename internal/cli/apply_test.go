package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

const testPassword = "s3cret-Pa55word"

// applyEnv is a test fabric: the ten-device spec copied into a temporary
// directory (so .fabctl is created there), a memory store standing in for
// the devices, and a factory whose registry drives the store.
type applyEnv struct {
	t     *testing.T
	dir   string
	spec  string
	store *memory.Store
	// wrap, when set, wraps every driver the registry builds.
	wrap func(drivers.Driver) drivers.Driver
}

var testApplyFields = []intent.Field{{Pattern: "tc/*/ecn/*", Tolerance: 0.05}, {Pattern: "port/*/pfc", Disruptive: "PFC change flaps the link"}}

func newApplyEnv(t *testing.T) *applyEnv {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/apply/ten.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	e := &applyEnv{t: t, dir: dir, spec: filepath.Join(dir, "fabric"), store: memory.NewStore()}
	writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), string(src))
	return e
}

func (e *applyEnv) registry() *drivers.Registry {
	reg := drivers.NewRegistry()
	for _, n := range []string{"sonic", "eos", "host"} {
		_ = reg.Register(n, func() drivers.Driver {
			var d drivers.Driver = &memory.Driver{Store: e.store, FieldList: testApplyFields}
			if e.wrap != nil {
				d = e.wrap(d)
			}
			return d
		})
	}
	return reg
}

var testNow = time.Date(2026, 8, 5, 10, 0, 0, 0, time.UTC)

func (e *applyEnv) factory() (*Factory, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	f, in, out, errOut := testFactory("FAB_TEST_PASSWORD=" + testPassword)
	f.Drivers = e.registry
	f.Now = func() time.Time { return testNow }
	return f, in, out, errOut
}

// desired returns every device's desired state, by device name.
func (e *applyEnv) desired() map[string]intent.State {
	e.t.Helper()
	s := testutil.Load(e.t, e.spec, spec.LoadOptions{})
	out := map[string]intent.State{}
	for _, u := range plan.Units(intent.Compile(s)) {
		out[u.Device.Name] = u.State
	}
	return out
}

// converge sets every device to its desired state, then lowers the MTU
// of leaf1's ports and h1's NIC and sets leaf2 and leaf3 to trust PCP: a
// small plan of four devices.
func (e *applyEnv) converge() {
	for name, st := range e.desired() {
		st = copyState(st)
		for k := range st {
			if strings.HasSuffix(k, "/mtu") && (name == "leaf1" || name == "h1") {
				st[k] = "1500"
			}
		}
		if name == "leaf2" || name == "leaf3" {
			st["trust"] = "pcp"
		}
		e.store.Set(name, st)
	}
}

func copyState(st intent.State) intent.State {
	out := intent.State{}
	for k, v := range st {
		out[k] = v
	}
	return out
}

// atDesired lists the devices whose store state equals the desired state.
func (e *applyEnv) atDesired() []string {
	var out []string
	for name, st := range e.desired() {
		if len(intent.Diff(st, e.store.Get(name), testApplyFields)) == 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (e *applyEnv) stateDir() string { return filepath.Join(e.spec, ".fabctl") }

// normalize replaces the temporary directory and random ids in output.
func (e *applyEnv) normalize(s string) string {
	s = strings.ReplaceAll(s, e.dir, "$TMP")
	s = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{8}`).ReplaceAllString(s, "$$RUN_ID")
	s = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).ReplaceAllString(s, "$$LOCK_ID")
	return s
}

// ttyIn is a stdin that says it is a terminal.
type ttyIn struct{ *bytes.Buffer }

func (ttyIn) IsTerminal() bool { return true }

func readJournal(t *testing.T, path string) []apply.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := apply.ParseJournal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestApplyFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want ApplyOptions // compared: Path, AutoApprove, Parallelism, OnFailure, ConfirmTimeout, Targets, LockTimeout, DetailedExitcode
		code ExitCode
		err  string
	}{
		{name: "defaults", want: ApplyOptions{Path: ".", Parallelism: 16, OnFailure: "stop"}},
		{name: "terraform style", args: []string{"-auto-approve", "plan.fab"}, want: ApplyOptions{Path: "plan.fab", AutoApprove: true, Parallelism: 16, OnFailure: "stop"}},
		{name: "all", args: []string{"--auto-approve", "--parallelism", "64", "--on-failure=rollback", "--confirm-timeout", "5m",
			"--target", "role:leaf", "--lock-timeout", "30s", "--detailed-exitcode", "fabric/"},
			want: ApplyOptions{Path: "fabric/", AutoApprove: true, Parallelism: 64, OnFailure: "rollback", ConfirmTimeout: 5 * time.Minute,
				Targets: []string{"role:leaf"}, LockTimeout: 30 * time.Second, DetailedExitcode: true}},
		{name: "bad policy", args: []string{"--on-failure", "abort"}, code: ExitUsage, err: `invalid --on-failure "abort": want stop, continue or rollback`},
		{name: "zero parallelism", args: []string{"--parallelism", "0"}, code: ExitUsage, err: "invalid --parallelism 0"},
		{name: "negative timeout", args: []string{"--confirm-timeout", "-1s"}, code: ExitUsage, err: "must not be negative"},
		{name: "two paths", args: []string{"a", "b"}, code: ExitUsage, err: "accepts at most 1 arg(s)"},
		{name: "misspelled flag", args: []string{"--auto-aprove"}, code: ExitUsage, err: "Did you mean --auto-approve?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _, stderr := testFactory()
			var got *ApplyOptions
			cmd := NewCmdApply(f, func(o *ApplyOptions) error { got = o; return nil })
			code := execCmd(f, cmd, append([]string{"apply"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.err != "" {
				if !strings.Contains(stderr.String(), tt.err) {
					t.Errorf("stderr %q lacks %q", stderr, tt.err)
				}
				return
			}
			g := ApplyOptions{Path: got.Path, AutoApprove: got.AutoApprove, Parallelism: got.Parallelism, OnFailure: got.OnFailure,
				ConfirmTimeout: got.ConfirmTimeout, Targets: got.Targets, LockTimeout: got.LockTimeout, DetailedExitcode: got.DetailedExitcode}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("options\n got  %+v\n want %+v", g, tt.want)
			}
		})
	}
}

func TestApplyAutoApprove(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	journal := filepath.Join(e.dir, "run.jsonl")
	code := runCLI(f, "apply", "--auto-approve", "--parallelism", "1", "--journal", journal, e.spec)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The plan itself is fabctl plan's view (tested with plan); apply's
	// own output starts with the wave order.
	if !strings.Contains(stdout.String(), "switch.leaf1") || !strings.Contains(stdout.String(), "1500") {
		t.Errorf("the plan is not shown:\n%s", stdout)
	}
	testutil.Golden(t, "testdata/apply/auto-approve.stdout", []byte(e.normalize(afterPlan(stdout.String()))))
	testutil.Golden(t, "testdata/apply/auto-approve.stderr", []byte(e.normalize(stderr.String())))
	if got := e.atDesired(); len(got) != 10 {
		t.Errorf("devices at desired state: %v", got)
	}
	entries := readJournal(t, journal)
	want := []string{"run_start", "device_start switch.leaf1", "device_applied switch.leaf1", "device_verified switch.leaf1",
		"device_start switch.leaf2", "device_applied switch.leaf2", "device_verified switch.leaf2",
		"device_start switch.leaf3", "device_applied switch.leaf3", "device_verified switch.leaf3",
		"device_start host.h1", "device_applied host.h1", "device_verified host.h1", "run_end"}
	var got []string
	for _, en := range entries {
		s := en.Event
		if en.Device != "" {
			s += " " + en.Device
		}
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("journal\n got  %q\n want %q", got, want)
	}
	if s := entries[0]; s.Fabric != "t" || s.SpecHash == "" || s.FabctlVersion == "" || s.Order != "hosts-first" && s.Order != "switches-first" {
		t.Errorf("run_start %+v", s)
	}
	// The applied record holds every device (the 3 applied and the 7
	// that already matched), the lock is released.
	a, err := plan.LoadApplied(e.stateDir(), "t")
	if err != nil || len(a.Devices) != 10 {
		t.Errorf("applied record: %v %d devices", err, len(a.Devices))
	}
	if _, err := apply.ReadLock(e.stateDir(), "t"); !errors.Is(err, apply.ErrNoLock) {
		t.Errorf("lock left behind: %v", err)
	}

	// Idempotent: the second apply has nothing to do and writes no journal.
	applied := fmt.Sprint(e.store.Applied)
	f, _, stdout, stderr = e.factory()
	code = runCLI(f, "apply", "--auto-approve", "--detailed-exitcode", e.spec)
	if code != ExitOK {
		t.Fatalf("second apply: exit %d\n%s%s", code, stdout, stderr)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "No changes.") || !strings.HasSuffix(out, "\nApply complete: nothing to apply.\n") {
		t.Errorf("second apply stdout %q", out)
	}
	if fmt.Sprint(e.store.Applied) != applied {
		t.Errorf("second apply changed devices: %v -> %v", applied, e.store.Applied)
	}
	if j, _ := filepath.Glob(filepath.Join(e.stateDir(), "journal", "*")); len(j) != 0 {
		t.Errorf("journal written for a no-op run: %v", j)
	}
}

func TestApplyDetailedExitcode(t *testing.T) {
	e := newApplyEnv(t)
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", "--auto-approve", "--detailed-exitcode", e.spec); code != ExitChanges {
		t.Fatalf("exit %d, want 2\n%s%s", code, stdout, stderr)
	}
	// The default journal lands in the state directory.
	if j, _ := filepath.Glob(filepath.Join(e.stateDir(), "journal", "t-*.jsonl")); len(j) != 1 {
		t.Errorf("journal files %v", j)
	}
}

func TestApplyConfirmTimeoutWarning(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", "--auto-approve", "--confirm-timeout", "2m", e.spec); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// The memory driver has no commit-confirm: the user is told.
	for _, d := range []string{"eos", "host", "sonic"} {
		want := "Warning: --confirm-timeout: the " + d + " driver has no commit-confirm"
		if strings.Contains(stderr.String(), want) != (d != "eos") { // spine1 (eos) has no changes
			t.Errorf("stderr, %s:\n%s", d, stderr)
		}
	}
}

func TestApplyPrompt(t *testing.T) {
	tests := []struct {
		name    string
		tty     bool
		answer  string
		json    bool
		code    ExitCode
		applied bool
		stdout  string
		stderr  string
	}{
		{name: "yes on a terminal", tty: true, answer: "yes\n", code: ExitOK, applied: true,
			stdout: "Only 'yes' will be accepted to approve.\n\n  Enter a value: \n\nDEVICE"},
		{name: "y is not yes", tty: true, answer: "y\n", code: ExitError, stderr: "Apply cancelled: nothing was applied.\n"},
		{name: "end of input", tty: true, answer: "", code: ExitError, stderr: "Apply cancelled"},
		{name: "not a terminal", code: ExitError,
			stderr: "Error: fabctl apply asks for confirmation, but stdin is not a terminal: review the plan and pass --auto-approve, or save a plan (fabctl plan -out plan.fab) and apply it (fabctl apply plan.fab)\n"},
		{name: "json without auto-approve", tty: true, json: true, code: ExitError, stdout: `"error": "--json needs --auto-approve (or a saved plan)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newApplyEnv(t)
			e.converge()
			f, in, stdout, stderr := e.factory()
			in.WriteString(tt.answer)
			if tt.tty {
				f.IOStreams.In = ttyIn{in}
			}
			args := []string{"apply", e.spec}
			if tt.json {
				args = append(args, "--json")
			}
			code := runCLI(f, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			if got := len(e.atDesired()) == 10; got != tt.applied {
				t.Errorf("applied = %v, want %v", got, tt.applied)
			}
			if !tt.applied && len(e.store.Applied) != 0 {
				t.Errorf("devices changed: %v", e.store.Applied)
			}
		})
	}
}

// savePlan plans the spec and writes a saved plan, as fabctl plan -out.
func (e *applyEnv) savePlan(f *Factory, path string) *plan.SavedPlan {
	e.t.Helper()
	lf, err := loadFabric(f, e.spec, nil, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	popts, err := lf.planOptions(stateDir(e.spec, ""))
	if err != nil {
		e.t.Fatal(err)
	}
	p := plan.Make(context.Background(), lf.Spec, lf.Fabric, e.registry(), popts)
	if err := lf.writeSavedPlan(p, path, plan.Keys{}); err != nil {
		e.t.Fatal(err)
	}
	sp, err := plan.Read(path, plan.Keys{})
	if err != nil {
		e.t.Fatal(err)
	}
	return sp
}

func TestApplySavedPlan(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	e.savePlan(f, planFile)
	// The spec on disk changes after the plan: the saved plan's own copy
	// is applied, not the disk.
	writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), "this is not HCL {")
	// No prompt for a saved plan, even without a terminal.
	code := runCLI(f, "apply", "--parallelism", "1", planFile)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout.String(), "Enter a value") || !strings.Contains(stdout.String(), "Apply complete: 4 applied, 0 failed, 0 rolled back, 0 not attempted, 6 unchanged.") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if len(e.store.Applied) != 4 {
		t.Errorf("applied %v", e.store.Applied)
	}
	// The journal records the plan file and its hash.
	j, _ := filepath.Glob(filepath.Join(e.stateDir(), "journal", "*.jsonl"))
	if len(j) != 1 {
		t.Fatalf("journals %v", j)
	}
	if s := readJournal(t, j[0])[0]; s.PlanFile != planFile || s.PlanHash == "" {
		t.Errorf("run_start %+v", s)
	}

	// The same plan cannot be applied twice: the devices moved since.
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "apply", planFile); code != ExitStalePlan || !strings.Contains(stderr.String(), "stale plan: 4 devices changed since the plan") {
		t.Errorf("second apply of the plan: exit %d\n%s", code, stderr)
	}
	// Flags that would change the plan are usage errors.
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "apply", "--target", "leaf1", planFile); code != ExitUsage || !strings.Contains(stderr.String(), "--target cannot be used with a saved plan") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	// A tampered plan is refused.
	b, _ := os.ReadFile(planFile)
	writeFile(t, planFile, strings.Replace(string(b), `"9000"`, `"9001"`, 1))
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "apply", planFile); code != ExitError || !strings.Contains(stderr.String(), "modified after fabctl wrote it") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

func TestApplyStalePlan(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	e.savePlan(f, planFile)
	// Someone fixes leaf3 by hand between plan and apply: the plan is
	// stale all the same (its steps were computed from the old state).
	st := e.store.Get("leaf3")
	st["trust"] = "dscp"
	e.store.Set("leaf3", st)
	code := runCLI(f, "apply", planFile)
	if code != ExitStalePlan {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("stale plan applied: %v", e.store.Applied)
	}
	testutil.Golden(t, "testdata/apply/stale.stderr", []byte(e.normalize(stderr.String())))
	// JSON form.
	f, _, stdout, _ = e.factory()
	if code := runCLI(f, "apply", "--json", planFile); code != ExitStalePlan {
		t.Fatalf("exit %d", code)
	}
	var doc view.ApplyJSONDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != "stale" || len(doc.Stale) != 1 || doc.Stale[0].Address != "switch.leaf3" || doc.Counts.Applied != 0 {
		t.Errorf("%+v", doc)
	}
}

func TestApplyLocked(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	held, err := apply.Acquire(context.Background(), e.stateDir(), "t", apply.LockOptions{Operation: "apply", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr := e.factory()
	code := runCLI(f, "apply", "--auto-approve", e.spec)
	if code != ExitLocked {
		t.Fatalf("exit %d, want 4\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("applied while locked")
	}
	norm := e.normalize(stderr.String())
	norm = strings.Replace(norm, apply.Holder(), "$HOLDER", 1)
	norm = strings.Replace(norm, fmt.Sprintf("pid %d", os.Getpid()), "pid $PID", 1)
	testutil.Golden(t, "testdata/apply/locked.stderr", []byte(norm))

	// JSON: the holder is in the document.
	f, _, stdout, _ = e.factory()
	if code := runCLI(f, "apply", "--json", "--auto-approve", e.spec); code != ExitLocked {
		t.Fatalf("json: exit %d", code)
	}
	var doc view.ApplyJSONDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Status != "locked" || doc.Lock == nil || doc.Lock.ID != held.Info.ID || doc.Lock.Operation != "apply" {
		t.Errorf("%v %+v", err, doc)
	}

	// force-unlock with another ID removes nothing.
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "force-unlock", "0000", e.spec); code != ExitError || !strings.Contains(stderr.String(), `lock ID "0000" does not match the held lock (held by `) || strings.Contains(stderr.String(), held.Info.ID) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := apply.ReadLock(e.stateDir(), "t"); err != nil {
		t.Fatalf("lock removed by a wrong ID: %v", err)
	}
	// With the ID (and --force: the holder, this test, is alive) it is
	// removed, and apply goes through.
	f, _, stdout, _ = e.factory()
	if code := runCLI(f, "force-unlock", "--force", held.Info.ID, e.spec); code != ExitOK || !strings.Contains(stdout.String(), "lock "+held.Info.ID+" removed") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "apply", "--auto-approve", e.spec); code != ExitOK {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// Nothing left to unlock.
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "force-unlock", held.Info.ID, e.spec); code != ExitError || !strings.Contains(stderr.String(), "no lock is held") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

func TestApplyLockTimeout(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	held, err := apply.Acquire(context.Background(), e.stateDir(), "t", apply.LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		held.Release()
	}()
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", "--auto-approve", "--lock-timeout", "10s", e.spec); code != ExitOK {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// failing fails Apply on one device with an error that quotes the
// password, as a careless driver might.
type failing struct {
	drivers.Driver
	device string
}

func (d failing) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	if t.Device.Name == d.device {
		return drivers.Result{}, fmt.Errorf("ssh admin:%s@%s: session aborted", testPassword, t.Device.Address)
	}
	return d.Driver.Apply(ctx, t, ch, o)
}

// Device 3 of 10 fails; every device changes (the store starts empty).
func TestApplyPartialFailure(t *testing.T) {
	tests := []struct {
		policy  string
		desired []string // devices at the desired state afterwards
		counts  apply.Counts
	}{
		{"stop", []string{"leaf1", "leaf2"}, apply.Counts{Applied: 2, Failed: 1, NotAttempted: 7}},
		{"continue", []string{"h1", "leaf1", "leaf2", "leaf4", "leaf5", "leaf6", "leaf7", "leaf8", "spine1"}, apply.Counts{Applied: 9, Failed: 1}},
		{"rollback", nil, apply.Counts{Failed: 1, RolledBack: 2, NotAttempted: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			e := newApplyEnv(t)
			e.wrap = func(d drivers.Driver) drivers.Driver { return failing{Driver: d, device: "leaf3"} }
			f, _, stdout, stderr := e.factory()
			journal := filepath.Join(e.dir, "run.jsonl")
			code := runCLI(f, "apply", "--auto-approve", "--parallelism", "1", "--on-failure", tt.policy, "--journal", journal, e.spec)
			if code != ExitError {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if got := e.atDesired(); !reflect.DeepEqual(got, tt.desired) {
				t.Errorf("at desired state: %v, want %v", got, tt.desired)
			}
			// Devices not at the desired state are untouched (empty).
			for _, n := range []string{"leaf3", "leaf4", "spine1", "h1"} {
				if !slices.Contains(tt.desired, n) && len(e.store.Get(n)) != 0 {
					t.Errorf("%s changed: %v", n, e.store.Get(n))
				}
			}
			testutil.Golden(t, "testdata/apply/fail-"+tt.policy+".stdout", []byte(e.normalize(afterPlan(stdout.String()))))
			for _, out := range []string{stdout.String(), stderr.String()} {
				if strings.Contains(out, testPassword) {
					t.Errorf("output holds the password:\n%s", out)
				}
			}
			if !strings.Contains(stderr.String(), "Error: apply failed:") || !strings.Contains(stderr.String(), "switch.leaf3 failed (restored): apply: ssh admin:***@192.0.2.13: session aborted") {
				t.Errorf("stderr:\n%s", stderr)
			}
			raw, _ := os.ReadFile(journal)
			if bytes.Contains(raw, []byte(testPassword)) {
				t.Errorf("journal holds the password:\n%s", raw)
			}
			entries := readJournal(t, journal)
			end := entries[len(entries)-1]
			if end.Event != apply.EventRunEnd || end.Status != "failed" || *end.Counts != tt.counts {
				t.Errorf("run_end %+v", end)
			}
			failed := 0
			for _, en := range entries {
				if en.Event == apply.EventDeviceFailed {
					failed++
					if en.Device != "switch.leaf3" || !strings.Contains(en.Error, "admin:***@") {
						t.Errorf("failed entry %+v", en)
					}
				}
			}
			if failed != 1 {
				t.Errorf("%d failed entries", failed)
			}
		})
	}
}

// afterPlan cuts the plan view off apply's output: what follows the
// "Order:" line's blank line before it, or the result table.
func afterPlan(s string) string {
	for _, mark := range []string{"\nOrder: ", "\nDEVICE "} {
		if i := strings.Index(s, mark); i >= 0 {
			return s[i+1:]
		}
	}
	return s
}

func TestApplyJSON(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	code := runCLI(f, "apply", "--json", "--auto-approve", "--parallelism", "1", "--journal", filepath.Join(e.dir, "j.jsonl"), e.spec)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	testutil.Golden(t, "testdata/apply/auto-approve.json", []byte(e.normalize(stdout.String())))
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["format_version"] != "1.1" || doc["status"] != "applied" {
		t.Errorf("%v", doc)
	}
}

func TestApplyInvalidSpec(t *testing.T) {
	e := newApplyEnv(t)
	writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), "fabric \"t\" {}\nswitch \"s\" {\n  platform = \"sonic\"\n  mtu = \"big\"\n}\n")
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", "--auto-approve", e.spec); code != ExitError {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr.String(), "Error:") || stdout.Len() != 0 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if _, err := os.Stat(e.stateDir()); err == nil {
		t.Errorf("state directory created for an invalid spec")
	}
}

// An unreachable device makes the plan incomplete: nothing is applied.
func TestApplyUnreachable(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	e.store.FailRead["spine1"] = errors.New("dial tcp 192.0.2.2:22: connection refused")
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "apply", "--auto-approve", e.spec); code != ExitError {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// The plan shown lists spine1 with its error under "Not planned";
	// the Error counts it and does not repeat the error.
	if len(e.store.Applied) != 0 || !strings.Contains(stderr.String(), "the plan is incomplete, nothing was applied: 1 device could not be planned (listed above under \"Not planned\"); fix them or leave them out with --exclude") {
		t.Errorf("applied %v\nstderr:\n%s", e.store.Applied, stderr)
	}
	if n := strings.Count(stdout.String()+stderr.String(), "dial tcp 192.0.2.2:22: connection refused"); n != 1 {
		t.Errorf("the error appears %d times, want once:\n%s%s", n, stdout, stderr)
	}
	// Leaving it out applies the rest.
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "apply", "--auto-approve", "--exclude", "spine1", e.spec); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestApplyProgressTTY(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, _, stderr := e.factory()
	f.IOStreams.SetStderrTTY(true)
	if code := runCLI(f, "apply", "--auto-approve", "--parallelism", "1", e.spec); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	s := stderr.String()
	for _, want := range []string{"Read 10 devices", "Applying:", "[4/4] host.h1: ", "applied and verified", "\x1b[J"} {
		if !strings.Contains(s, want) {
			t.Errorf("stderr lacks %q:\n%q", want, s)
		}
	}
}

func TestForceUnlockNoSpecNeeded(t *testing.T) {
	e := newApplyEnv(t)
	// The spec is broken; the lock can still be removed.
	writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), "broken {")
	held, err := apply.Acquire(context.Background(), e.stateDir(), "t", apply.LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "force-unlock", "--json", "--force", held.Info.ID, e.spec); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var doc forceUnlockJSONDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || !doc.Unlocked || doc.Lock.ID != held.Info.ID {
		t.Errorf("%v %+v", err, doc)
	}
	f, _, _, stderr = e.factory()
	if code := runCLI(f, "force-unlock"); code != ExitUsage {
		t.Errorf("no ID: exit %d\n%s", code, stderr)
	}
}
