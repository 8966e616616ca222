package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// ApplyOptions are the inputs of fabctl apply.
type ApplyOptions struct {
	IO   *IOStreams
	JSON bool

	// Path is a spec (file or directory) or a saved plan file, told apart
	// by content (default: the spec in the current directory).
	Path string

	AutoApprove      bool
	Parallelism      int
	OnFailure        string
	ConfirmTimeout   time.Duration
	Targets          []string
	Excludes         []string
	StateDir         string
	Journal          string
	LockTimeout      time.Duration
	Vars             []string
	VarFiles         []string
	Insecure         bool
	DetailedExitcode bool
}

// NewCmdApply returns `fabctl apply`.
func NewCmdApply(f *Factory, runF func(*ApplyOptions) error) *cobra.Command {
	opts := &ApplyOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "apply [SPEC | PLANFILE]",
		Short: "Apply the spec (or a saved plan) to the fabric",
		Long: `Apply a fabric spec to the switches and hosts, or apply a plan saved with
fabctl plan -out.

With a spec (a *.fab.hcl file or a directory; default: the current
directory), apply plans first, shows the plan and asks for confirmation;
only 'yes' is accepted. --auto-approve skips the question; without it,
apply refuses to run when stdin is not a terminal.

With a saved plan, apply applies exactly that plan without asking: the
plan carries its own copy of the spec, so later edits on disk do not
matter. Every device is read again first; if any changed since the plan
was made, nothing is applied and apply exits 3 (stale plan).

apply takes the fabric lock (<state-dir>/<fabric>.lock) for the whole run,
applies switches and hosts in two waves (switches first when the plan
enables lossless classes or raises MTUs, hosts first when it removes them;
see docs/apply.md), devices in parallel within a wave, each as one
transaction that is read back and verified. It writes a journal of JSON
lines as it goes and ends with an applied / failed / rolled back / not
attempted table.

Exit status: 0 success or nothing to do (with --detailed-exitcode: 0
nothing to do, 2 changes applied), 1 failure, 3 stale plan, 4 lock held,
64 usage error.`,
		Example: `  fabctl apply                                  # plan, show, ask, apply
  fabctl plan -out plan.fab fabric/ && fabctl apply plan.fab
  fabctl apply --auto-approve --on-failure=rollback fabric/
  fabctl apply --target 'role:leaf' --confirm-timeout 5m fabric/
  fabctl apply --json --auto-approve fabric/ | jq .counts`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if opts.Parallelism < 1 {
				return FlagErrorf("invalid --parallelism %d: want at least 1", opts.Parallelism)
			}
			if _, err := apply.ParsePolicy(opts.OnFailure); err != nil {
				return &FlagError{Err: err}
			}
			if opts.ConfirmTimeout < 0 || opts.LockTimeout < 0 {
				return FlagErrorf("--confirm-timeout and --lock-timeout must not be negative")
			}
			if err := checkGlobs(opts.Targets, "--target"); err != nil {
				return err
			}
			if err := checkGlobs(opts.Excludes, "--exclude"); err != nil {
				return err
			}
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return applyRun(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.AutoApprove, "auto-approve", false, "Apply without asking for confirmation (for pipelines)")
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Devices read and applied at once (within a wave)")
	fl.StringVar(&opts.OnFailure, "on-failure", string(apply.Stop), "When a device fails: `stop` (start no new device), continue, or rollback (stop, then roll back every device applied in this run)")
	fl.DurationVar(&opts.ConfirmTimeout, "confirm-timeout", 0, "Commit with an auto-revert timer of this `duration` where the platform supports it; confirm after read-back verification")
	fl.StringArrayVar(&opts.Targets, "target", nil, "Apply only devices matching this `glob` (name, switch.leaf*, role:spine); repeatable; not with a saved plan")
	fl.StringArrayVar(&opts.Excludes, "exclude", nil, "Leave out devices matching this `glob`; repeatable; not with a saved plan")
	fl.StringVar(&opts.StateDir, "state-dir", "", "Directory of the lock, applied record and journals (default: .fabctl beside the spec)")
	fl.StringVar(&opts.Journal, "journal", "", "Write the journal to this `file` (default: <state-dir>/journal/<fabric>-<run-id>.jsonl)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", 0, "Wait up to this `duration` for a lock held by another run (default: fail at once)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable; not with a saved plan)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` (repeatable; not with a saved plan)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (labs only)")
	// The SSH-specific spelling users of SSH tools look for; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	fl.BoolVar(&opts.DetailedExitcode, "detailed-exitcode", false, "Exit 2 when changes were applied successfully, 0 when there was nothing to do")
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	_ = cmd.MarkFlagFilename("journal", "jsonl")
	_ = cmd.RegisterFlagCompletionFunc("on-failure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"stop", "continue", "rollback"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// applyStatus values (the JSON document's "status").
const (
	applyStatusApplied     = "applied"     // every changed device applied and verified
	applyStatusNoChanges   = "no_changes"  // nothing to do
	applyStatusFailed      = "failed"      // some device failed, was rolled back or not attempted
	applyStatusStale       = "stale"       // saved plan stale: nothing applied
	applyStatusLocked      = "locked"      // another run holds the lock
	applyStatusRefused     = "refused"     // incomplete plan or unreachable device: nothing applied
	applyStatusInvalid     = "invalid"     // the spec has errors
	applyStatusCancelled   = "cancelled"   // the user did not answer yes
	applyStatusInterrupted = "interrupted" // Ctrl-C: devices in flight finished, nothing new started
	applyStatusError       = "error"       // any other error before applying
)

// applyOutcome is what an apply run did; the views render it.
type applyOutcome struct {
	Fabric   string
	PlanFile string // the saved plan applied, or ""
	Status   string
	Plan     *plan.Plan
	Result   *apply.Result
	Journal  string
	Lock     *apply.LockInfo // set when the lock was held by another run
	Err      error
	Loaded   *loadedFabric // for diagnostics
	Waves    apply.WavePlan
	// Warnings are problems that did not fail the run (journal or record
	// write errors, a lock released by someone else).
	Warnings []string
}

// stdinIsTTY reports whether stdin is a terminal. A test stream says so by
// implementing IsTerminal.
func stdinIsTTY(ios *IOStreams) bool {
	if t, ok := ios.In.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	_, ok := terminalFd(ios.In)
	return ok
}

// readSavedPlan tells a saved plan from a spec by content: a JSON object
// with "plan" and "content_hash". It returns nil for a spec.
func readSavedPlan(path string) (*plan.SavedPlan, error) {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return nil, nil // a directory is a spec; a missing path is reported by the loader
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, nil
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) != nil {
		return nil, nil
	}
	_, hasPlan := probe["plan"]
	_, hasHash := probe["content_hash"]
	if !hasPlan && !hasHash {
		return nil, nil // a JSON spec (*.fab.hcl.json)
	}
	return plan.Decode(b, path)
}

func applyRun(f *Factory, opts *ApplyOptions) error {
	clock := f.Now
	if clock == nil {
		clock = time.Now
	}
	var view ApplyView = newApplyHuman(opts.IO, clock)
	if opts.JSON {
		view = &ApplyJSON{IO: opts.IO, progress: newApplyHuman(opts.IO, clock)}
	}
	ctx, release := interruptContext(view.Interrupted)
	defer release()
	ctx, closeLog, err := f.sessionLogContext(ctx)
	if err != nil {
		return err
	}
	defer closeLog()
	out := &applyOutcome{}
	code := applyMain(ctx, f, opts, view, out)
	if code == ExitUsage {
		return out.Err // printed with the usage hint, no document
	}
	if err := view.Result(out); err != nil {
		return err
	}
	return exitWith(code)
}

// applyMain does the work and fills out; it returns the exit code.
func applyMain(ctx context.Context, f *Factory, opts *ApplyOptions, view ApplyView, out *applyOutcome) ExitCode {
	fail := func(status string, err error) ExitCode {
		out.Status, out.Err = status, err
		return ExitError
	}
	sp, err := readSavedPlan(opts.Path)
	if err != nil {
		return fail(applyStatusError, err)
	}
	if sp != nil {
		out.PlanFile = opts.Path
		for flag, set := range map[string]bool{"--target": len(opts.Targets) > 0, "--exclude": len(opts.Excludes) > 0,
			"--var": len(opts.Vars) > 0, "--var-file": len(opts.VarFiles) > 0} {
			if set {
				out.Status = applyStatusError
				out.Err = FlagErrorf("%s cannot be used with a saved plan: the plan fixes the devices and variables; run fabctl plan again with %s", flag, flag)
				return ExitUsage
			}
		}
	} else if !opts.AutoApprove {
		switch {
		case opts.JSON:
			return fail(applyStatusError, errors.New("--json needs --auto-approve (or a saved plan): fabctl cannot ask for confirmation while writing JSON"))
		case !stdinIsTTY(opts.IO):
			return fail(applyStatusError, errors.New("fabctl apply asks for confirmation, but stdin is not a terminal: review the plan and pass --auto-approve, or save a plan (fabctl plan -out plan.fab) and apply it (fabctl apply plan.fab)"))
		}
	}

	// Load the spec: the plan's own copy for a saved plan.
	var lf *loadedFabric
	if sp != nil {
		lf, err = loadSavedFabric(f, sp)
	} else {
		lf, err = loadFabric(f, opts.Path, opts.Vars, opts.VarFiles)
	}
	out.Loaded = lf
	if errors.Is(err, errSpecInvalid) {
		return fail(applyStatusInvalid, fmt.Errorf("the spec has %s", plural(lf.Errors, "error", "errors")))
	}
	if err != nil {
		var fe *FlagError
		if errors.As(err, &fe) {
			out.Status, out.Err = applyStatusError, err
			return ExitUsage
		}
		return fail(applyStatusError, err)
	}
	out.Fabric = lf.Fabric.Name
	selected := 0
	for _, u := range plan.Units(lf.Fabric) {
		if plan.Selected(u.Device, opts.Targets, opts.Excludes) {
			selected++
		}
	}
	if selected == 0 {
		out.Status = applyStatusError
		out.Err = FlagErrorf("no device matches --target %s --exclude %s (match device names such as leaf1, addresses such as switch.leaf1, or role:NAME)",
			strings.Join(opts.Targets, ","), strings.Join(opts.Excludes, ","))
		return ExitUsage
	}
	if opts.Insecure {
		view.Warn("--insecure: SSH host keys and TLS certificates are not verified.")
	}

	// The state directory: beside the spec the plan was made from.
	specPath := opts.Path
	if sp != nil {
		specPath = sp.SpecPath
		if opts.StateDir == "" {
			if _, err := os.Stat(specPath); specPath == "" || err != nil {
				return fail(applyStatusError, fmt.Errorf("the saved plan was made from the spec at %q, which is not here, so its state directory (lock, applied record) is unknown: pass --state-dir", specPath))
			}
		}
	}
	dir := stateDir(specPath, opts.StateDir)
	popts, err := lf.planOptions(dir)
	if err != nil {
		return fail(applyStatusError, err)
	}
	popts.Parallelism = opts.Parallelism
	popts.Targets, popts.Excludes = opts.Targets, opts.Excludes
	popts.Insecure = opts.Insecure

	// The lock covers planning too: nobody applies between our plan and
	// our apply.
	lock, err := apply.Acquire(ctx, dir, lf.Fabric.Name, apply.LockOptions{Operation: "apply",
		Version: readBuildInfo().Version, Timeout: opts.LockTimeout, Now: f.Now})
	var le *apply.LockedError
	if errors.As(err, &le) {
		out.Status, out.Err, out.Lock = applyStatusLocked, err, &le.Info
		return ExitLocked
	}
	if err != nil {
		return fail(applyStatusError, err)
	}
	defer func() {
		if err := lock.Release(); err != nil {
			out.Warnings = append(out.Warnings, "lock: "+err.Error())
		}
	}()

	reg := f.Drivers()
	var p *plan.Plan
	if sp != nil {
		p = sp.Plan
	} else {
		prog := newPlanProgress(opts.IO, f.Now)
		popts.Started, popts.Progress = prog.Started, prog.Done
		prog.Start(selected)
		p = plan.Make(ctx, lf.Spec, lf.Fabric, reg, popts)
		prog.Stop(len(p.Devices))
		p.Diagnostics = lf.JSONDiagnostics()
		if ctx.Err() != nil {
			return fail(applyStatusInterrupted, errors.New("interrupted while planning: nothing was applied"))
		}
	}
	out.Plan = p
	devs, err := applyDevices(lf, p, popts, sp != nil)
	if err != nil {
		return fail(applyStatusError, err)
	}
	plans := make([]*plan.DevicePlan, len(devs))
	for i, d := range devs {
		plans[i] = d.Plan
	}
	out.Waves = apply.Waves(plans)
	if sp == nil {
		if err := view.Plan(p, out.Waves); err != nil {
			return fail(applyStatusError, err)
		}
	}
	if p.Errored() {
		var bad []*plan.DevicePlan
		for _, d := range p.Devices {
			if d.Error != "" {
				bad = append(bad, d)
			}
		}
		return fail(applyStatusRefused, &apply.PlanError{Devices: bad})
	}
	changed := p.HasChanges()
	if changed && sp == nil && !opts.AutoApprove {
		ok, err := view.Confirm(ctx, p)
		if err != nil {
			return fail(applyStatusError, err)
		}
		if !ok {
			out.Status = applyStatusCancelled
			return ExitError
		}
	}

	if opts.ConfirmTimeout > 0 {
		for _, name := range withoutCommitConfirm(reg, devs) {
			view.Warn(fmt.Sprintf("--confirm-timeout: the %s driver has no commit-confirm; fabctl verifies its devices and rolls them back itself, but they do not revert on their own if fabctl stops mid-run.", name))
		}
	}
	aopts := apply.Options{
		Parallelism:    opts.Parallelism,
		OnFailure:      apply.Policy(opts.OnFailure),
		ConfirmTimeout: opts.ConfirmTimeout,
		CheckStale:     changed, // with no changes the plan's reads just confirmed every device
		Progress:       view.Progress,
		Now:            f.Now,
		Fabric:         lf.Fabric.Name,
		FabctlVersion:  readBuildInfo().Version,
		SpecHash:       p.SpecHash,
		PlanFile:       out.PlanFile,
	}
	if sp != nil {
		aopts.PlanHash = sp.ContentHash
	}
	rec, err := apply.OpenRecorder(dir, lf.Fabric.Name)
	if err != nil {
		return fail(applyStatusError, err)
	}
	aopts.Record = rec
	// No journal for a run with nothing to do: it would record nothing.
	if changed {
		runID := apply.NewRunID(now(f.Now))
		path := opts.Journal
		if path == "" {
			path = apply.JournalPath(dir, lf.Fabric.Name, runID)
		}
		j, err := apply.CreateJournal(path, runID, f.Now, apply.SecretValues(lf.Spec.Credentials, f.Getenv))
		if err != nil {
			rec.Close()
			return fail(applyStatusError, err)
		}
		aopts.Journal = j
		out.Journal = path
		defer func() {
			if err := j.Close(); err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("journal %s is incomplete: %v", path, err))
			}
		}()
	}
	res, err := apply.Run(ctx, devs, reg, aopts)
	view.ProgressDone()
	if rerr := rec.Close(); rerr != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("applied record %s not saved: %v (the next plan may misreport drift)", plan.AppliedPath(dir, lf.Fabric.Name), rerr))
	}
	out.Result = res
	out.Err = err
	var se *apply.StaleError
	var ue *apply.UnreachableError
	var pe *apply.PlanError
	switch {
	case errors.As(err, &se):
		out.Status = applyStatusStale
		return ExitStalePlan
	case errors.As(err, &ue), errors.As(err, &pe):
		out.Status = applyStatusRefused
		return ExitError
	case res.Interrupted:
		out.Status = applyStatusInterrupted
		return ExitError
	case err != nil:
		out.Status = applyStatusFailed
		return ExitError
	case !changed:
		out.Status = applyStatusNoChanges
		return ExitOK
	}
	out.Status = applyStatusApplied
	if opts.DetailedExitcode {
		return ExitChanges
	}
	return ExitOK
}

func now(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// expressed is a compiled desired state without the settings the plan
// found the device cannot express (drivers.Limiter): the plan's Desired
// leaves them out, so a saved plan is compared on the same footing.
func expressed(st intent.State, dp *plan.DevicePlan) intent.State {
	if len(dp.Unexpressible) == 0 {
		return st
	}
	out := make(intent.State, len(st))
	for k, v := range st {
		out[k] = v
	}
	for _, u := range dp.Unexpressible {
		delete(out, u.Path)
	}
	return out
}

// applyDevices pairs each device plan with its driver target. For a saved
// plan it also checks that the plan's embedded spec still compiles to the
// desired state the plan recorded (it may not under another fabctl
// version); the plan's content is what is applied either way.
func applyDevices(lf *loadedFabric, p *plan.Plan, popts plan.Options, saved bool) ([]apply.Device, error) {
	units := map[string]plan.Unit{}
	for _, u := range plan.Units(lf.Fabric) {
		units[u.Device.Addr()] = u
	}
	devs := make([]apply.Device, 0, len(p.Devices))
	for _, dp := range p.Devices {
		u, ok := units[dp.Address]
		if !ok {
			return nil, fmt.Errorf("the plan has %s, which its spec does not declare: the plan file is inconsistent; run fabctl plan again", dp.Address)
		}
		if saved && dp.Error == "" && expressed(u.State, dp).Fingerprint() != dp.Desired.Fingerprint() {
			return nil, fmt.Errorf("the saved plan's spec no longer compiles to the state the plan recorded for %s (was it made by another fabctl version? this is %s, the plan %s): run fabctl plan again",
				dp.Address, readBuildInfo().Version, p.FabctlVersion)
		}
		devs = append(devs, apply.Device{Plan: dp, Target: plan.Target(u, popts)})
	}
	return devs, nil
}

// withoutCommitConfirm lists the drivers of changed devices that cannot
// commit with an auto-revert timer.
func withoutCommitConfirm(reg *drivers.Registry, devs []apply.Device) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range devs {
		name := d.Plan.Driver
		if !d.Plan.HasChanges() || seen[name] {
			continue
		}
		seen[name] = true
		if drv, err := reg.New(name); err == nil && !drv.Capabilities().CommitConfirm {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// interruptContext returns a context cancelled by the first Ctrl-C or
// SIGTERM: apply then starts no new device and lets the devices in flight
// finish their transaction (onInterrupt says so). A second signal gets the
// default behaviour: the process ends. The returned func releases it.
func interruptContext(onInterrupt func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			signal.Stop(ch) // a second signal ends the process
			if onInterrupt != nil {
				onInterrupt()
			}
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		cancel()
	}
}

// readAnswer reads one line from r; an interrupt while waiting gives "".
func readAnswer(ctx context.Context, r io.Reader) (string, error) {
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if errors.Is(err, io.EOF) {
			err = nil // end of input: whatever was typed, usually nothing
		}
		ch <- answer{strings.TrimSpace(line), err}
	}()
	select {
	case a := <-ch:
		return a.line, a.err
	case <-ctx.Done():
		return "", nil
	}
}
