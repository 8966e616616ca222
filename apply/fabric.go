package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// RunStatus is how a fabric run ended (fabctl apply's "status").
type RunStatus string

// Run statuses of RunFabric.
const (
	RunApplied     RunStatus = "applied"     // every changed device applied and verified
	RunNoChanges   RunStatus = "no_changes"  // nothing to do
	RunFailed      RunStatus = "failed"      // some device failed, was rolled back or not attempted
	RunStale       RunStatus = "stale"       // saved plan stale: nothing applied
	RunLocked      RunStatus = "locked"      // another run holds the lock
	RunRefused     RunStatus = "refused"     // incomplete plan or unreachable device: nothing applied
	RunCancelled   RunStatus = "cancelled"   // the confirmation was not given
	RunInterrupted RunStatus = "interrupted" // ctx cancelled: devices in flight finished, nothing new started
	RunError       RunStatus = "error"       // any other error before applying
)

// RunOptions are the inputs of RunFabric: a loaded fabric (a spec, or
// the spec a saved plan carries) and how to apply it.
type RunOptions struct {
	// CheckOnDevice runs every changed device's own non-committing check
	// before the first wave (and before the confirmation): a device that
	// refuses, or whose check does not complete, refuses the run and
	// nothing is applied (preflight.go).
	CheckOnDevice bool
	// Spec and Fabric are the loaded spec and its compiled fabric.
	Spec   *spec.Spec
	Fabric *intent.Fabric
	// Saved is the saved plan to apply as is (no planning, no
	// confirmation), or nil to plan Spec; PlanFile is its path.
	Saved    *plan.SavedPlan
	PlanFile string
	// Diagnostics are the spec's warnings, recorded in the plan made.
	Diagnostics []spec.JSONDiagnostic

	// StateDir holds the applied record and the journals, and the lock
	// file unless Locker says otherwise.
	StateDir string
	// Locker is the fabric lock's backend (nil: the lock file in
	// StateDir, FileLocker).
	Locker Locker
	// Plan are the planning options (applied record, credentials,
	// parallelism, targets, insecure, planning progress); the devices'
	// driver targets are built with them too.
	Plan plan.Options
	// Registry builds the drivers.
	Registry *drivers.Registry

	Parallelism    int
	OnFailure      Policy
	ConfirmTimeout time.Duration
	LockTimeout    time.Duration
	// HostBatches is the batch policy of the hosts' wave (Options).
	HostBatches BatchPolicy
	// Engine names how hosts are reached when not over SSH, for the
	// journal ("kubernetes": the plan's host driver delivers through the
	// cluster).
	Engine string
	// Journal is the journal file ("": <state-dir>/journal/<fabric>-<run-id>.jsonl).
	Journal string
	// Version is the running fabctl's version (lock, journal, checks of a
	// saved plan).
	Version string
	// Now is the clock (nil: time.Now); Getenv resolves the credentials'
	// environment variables to redact from the journal.
	Now    func() time.Time
	Getenv func(string) string

	Hooks Hooks
}

// Hooks are how the caller takes part in a run: what it shows and what
// it asks, as the run gets there. Every field may be nil.
type Hooks struct {
	// Planning is called before the spec is planned (not for a saved
	// plan), Planned after, with the plan.
	Planning func()
	Planned  func(p *plan.Plan)
	// Plan shows the plan about to be applied and its wave order (not
	// for a saved plan), before the confirmation.
	Plan func(p *plan.Plan, wp WavePlan) error
	// Confirm asks whether to apply a plan with changes (not for a saved
	// plan); only true goes on. nil approves (--auto-approve).
	Confirm func(ctx context.Context, p *plan.Plan) (bool, error)
	// Warn reports a problem that does not stop the run, as it is found.
	Warn func(msg string)
	// Progress is told about every device step (Options.Progress).
	Progress func(ProgressEvent)
}

// Outcome is what RunFabric did.
type Outcome struct {
	Status RunStatus
	// Plan is the plan applied (made, or the saved plan's); nil when the
	// run ended before it had one.
	Plan  *plan.Plan
	Waves WavePlan
	// Result is the engine's result (per-device outcomes, counts, stale
	// and unreachable devices); nil when the run ended before applying.
	Result *Result
	// Journal is the journal file written, "" when none.
	Journal string
	// Lock describes the lock another run holds (Status RunLocked).
	Lock *LockInfo
	// Warnings are problems that did not fail the run (journal or record
	// write errors, a lock released by someone else).
	Warnings []string
}

// RunFabric applies a fabric: it takes the fabric lock, plans the spec
// (or checks that a saved plan still fits its spec), shows the plan and
// asks for confirmation (Hooks), then applies in waves with the engine
// (Run), keeping the applied record and writing a journal. It always
// returns an Outcome; the error says why its Status is not RunApplied or
// RunNoChanges (nil for RunCancelled, and for RunInterrupted when no
// device failed).
func RunFabric(ctx context.Context, o RunOptions) (*Outcome, error) {
	out := &Outcome{}
	h := o.Hooks
	fail := func(status RunStatus, err error) (*Outcome, error) {
		out.Status = status
		return out, err
	}
	name := o.Fabric.Name

	// The lock covers planning too: nobody applies between our plan and
	// our apply.
	locker := o.Locker
	if locker == nil {
		locker = FileLocker{StateDir: o.StateDir}
	}
	lock, err := locker.Lock(ctx, LockRequest{Fabric: name, Operation: "apply",
		Version: o.Version, Timeout: o.LockTimeout, Now: o.Now})
	var le *LockedError
	if errors.As(err, &le) {
		out.Lock = &le.Info
		return fail(RunLocked, err)
	}
	if err != nil {
		return fail(RunError, err)
	}
	defer func() {
		// The run's context may be cancelled (an interrupt): unlock apart.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := lock.Unlock(uctx); err != nil {
			out.Warnings = append(out.Warnings, "lock: "+err.Error())
		}
	}()

	reg := o.Registry
	p, err := o.makePlan(ctx)
	if err != nil {
		return fail(RunInterrupted, err)
	}
	out.Plan = p
	devs, err := devices(o.Fabric, p, o.Plan, o.Saved != nil, o.Version)
	if err != nil {
		return fail(RunError, err)
	}
	plans := make([]*plan.DevicePlan, len(devs))
	for i, d := range devs {
		plans[i] = d.Plan
	}
	out.Waves = Waves(plans)
	if o.Saved == nil && h.Plan != nil {
		if err := h.Plan(p, out.Waves); err != nil {
			return fail(RunError, err)
		}
	}
	if bad := unplanned(p.Devices); len(bad) > 0 {
		return fail(RunRefused, &PlanError{Devices: bad})
	}
	if err := blocked(p); err != nil {
		return fail(RunRefused, err)
	}
	if nc := p.NotCarried(); len(nc) > 0 {
		return fail(RunRefused, &NotCarriedError{Devices: nc})
	}
	if o.CheckOnDevice {
		if err := preflight(ctx, reg, devs, o.Parallelism); err != nil {
			return fail(RunRefused, err)
		}
	}
	changed := p.HasChanges()
	if changed && o.Saved == nil && h.Confirm != nil {
		ok, err := h.Confirm(ctx, p)
		if err != nil {
			return fail(RunError, err)
		}
		if !ok {
			return fail(RunCancelled, nil)
		}
	}

	if o.ConfirmTimeout > 0 && h.Warn != nil {
		for _, name := range withoutCommitConfirm(reg, devs) {
			h.Warn(fmt.Sprintf("--confirm-timeout: the %s driver has no commit-confirm; fabctl verifies its devices and rolls them back itself, but they do not revert on their own if fabctl stops mid-run.", name))
		}
	}
	aopts := Options{
		Parallelism:    o.Parallelism,
		OnFailure:      o.OnFailure,
		ConfirmTimeout: o.ConfirmTimeout,
		// With no changes the plan's reads just confirmed every device; a
		// saved plan is always checked (its steps are re-derived).
		CheckStale:    changed || o.Saved != nil,
		HostBatches:   o.HostBatches,
		Lost:          lock.Lost,
		Engine:        o.Engine,
		Progress:      h.Progress,
		Now:           o.Now,
		Fabric:        name,
		FabctlVersion: o.Version,
		SpecHash:      p.SpecHash,
		PlanFile:      o.PlanFile,
	}
	if o.Saved != nil {
		aopts.PlanHash = o.Saved.ContentHash
		// Never run steps that do not follow from the spec: each device
		// is planned again from the plan's own spec and its live state,
		// and the run is refused when the steps differ.
		units := map[string]plan.Unit{}
		for _, u := range plan.Units(o.Fabric) {
			units[u.Device.Addr()] = u
		}
		aopts.Rederive = func(ctx context.Context, addr string) *plan.DevicePlan {
			u, ok := units[addr]
			if !ok {
				return nil
			}
			u.State = nil // flattened again by the planner, as plan did
			return plan.Derive(ctx, u, reg, o.Plan)
		}
	}
	rec, err := OpenRecorder(o.StateDir, name)
	if err != nil {
		return fail(RunError, err)
	}
	aopts.Record = rec
	// No journal for a run with nothing to do: it would record nothing.
	if changed {
		runID := NewRunID(now(o.Now))
		path := o.Journal
		if path == "" {
			path = JournalPath(o.StateDir, name, runID)
		}
		j, err := CreateJournal(path, runID, o.Now, SecretValues(runCredentials(o), o.Getenv))
		if err != nil {
			rec.Close()
			return fail(RunError, err)
		}
		aopts.Journal = j
		out.Journal = path
		defer func() {
			if err := j.Close(); err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("journal %s is incomplete: %v", path, err))
			}
		}()
	}
	res, err := Run(ctx, devs, reg, aopts)
	if rerr := rec.Close(); rerr != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("applied record %s not saved: %v (the next plan may misreport drift)", plan.AppliedPath(o.StateDir, name), rerr))
	}
	out.Result = res
	return fail(runStatus(res, err, changed), err)
}

// BlockedError refuses a run while a selected device has a finding that
// blocks apply (drivers.Finding.BlocksApply: another owner manages its
// settings); nothing was applied.
type BlockedError struct{ Findings []DeviceFinding }

// DeviceFinding is a device's finding.
type DeviceFinding struct {
	Device  string
	Finding drivers.Finding
}

func (e *BlockedError) Error() string {
	parts := firstFew(len(e.Findings), func(i int) string { return e.Findings[i].Device + ": " + e.Findings[i].Finding.Message })
	return "apply refused, nothing was applied: " + strings.Join(parts, "; ")
}

// blocked is the refusal of a plan with findings that block apply.
func blocked(p *plan.Plan) error {
	var out []DeviceFinding
	for _, d := range p.Devices {
		for _, f := range d.Findings {
			if f.BlocksApply {
				out = append(out, DeviceFinding{Device: d.Address, Finding: f})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &BlockedError{Findings: out}
}

// unplanned are the devices that could not be planned: errored, except
// those whose error is their own report of a failed configuration, which
// apply configures again (plan.DevicePlan.Repair).
func unplanned(devs []*plan.DevicePlan) []*plan.DevicePlan {
	var bad []*plan.DevicePlan
	for _, d := range devs {
		if d.Error != "" && !d.Repair {
			bad = append(bad, d)
		}
	}
	return bad
}

// makePlan plans the spec, or returns the saved plan. The error is an
// interrupt while planning.
func (o *RunOptions) makePlan(ctx context.Context) (*plan.Plan, error) {
	if o.Saved != nil {
		return o.Saved.Plan, nil
	}
	if o.Hooks.Planning != nil {
		o.Hooks.Planning()
	}
	p := plan.Make(ctx, o.Spec, o.Fabric, o.Registry, o.Plan)
	if o.Hooks.Planned != nil {
		o.Hooks.Planned(p)
	}
	p.Diagnostics = o.Diagnostics
	if ctx.Err() != nil {
		return nil, errors.New("interrupted while planning: nothing was applied")
	}
	return p, nil
}

// runStatus is the status of a run that reached the engine.
func runStatus(res *Result, err error, changed bool) RunStatus {
	var se *StaleError
	var ue *UnreachableError
	var pe *PlanError
	var me *MismatchPlanError
	switch {
	case errors.As(err, &se):
		return RunStale
	case errors.As(err, &ue), errors.As(err, &pe), errors.As(err, &me):
		return RunRefused
	case res.Interrupted:
		return RunInterrupted
	case err != nil:
		return RunFailed
	case !changed:
		return RunNoChanges
	}
	return RunApplied
}

func now(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// devices pairs each device plan with its driver target, built from the
// spec's unit (address, credentials, known_hosts, ca_file: never from
// the plan). For a saved plan it also checks, before any device is
// contacted, that each device plan is the device the embedded spec
// declares with the driver it derives (plan.CheckDerived), and that the
// spec still compiles to the desired state the plan recorded (it may not
// under another fabctl version).
func devices(f *intent.Fabric, p *plan.Plan, popts plan.Options, saved bool, version string) ([]Device, error) {
	units := map[string]plan.Unit{}
	for _, u := range plan.Units(f) {
		units[u.Device.Addr()] = u
	}
	devs := make([]Device, 0, len(p.Devices))
	for _, dp := range p.Devices {
		u, ok := units[dp.Address]
		if !ok {
			return nil, fmt.Errorf("the plan has %s, which its spec does not declare: the plan file is inconsistent; run fabctl plan again", dp.Address)
		}
		if saved {
			// Who the device is and which driver talks to it follow from
			// the spec, never from the plan file (a forged driver).
			if err := plan.CheckDerived(dp, u); err != nil {
				return nil, err
			}
		}
		if saved && dp.Error == "" && plan.Expressed(u.State, dp).Fingerprint() != dp.Desired.Fingerprint() {
			return nil, fmt.Errorf("the saved plan's spec no longer compiles to the state the plan recorded for %s (was it made by another fabctl version? this is %s, the plan %s): run fabctl plan again",
				dp.Address, version, p.FabctlVersion)
		}
		devs = append(devs, Device{Plan: dp, Target: plan.Target(u, popts)})
	}
	return devs, nil
}

// withoutCommitConfirm lists the drivers of changed devices that cannot
// commit with an auto-revert timer.
func withoutCommitConfirm(reg *drivers.Registry, devs []Device) []string {
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
