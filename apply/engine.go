// Package apply executes a plan: it takes the fabric lock (lock.go),
// refuses a stale plan, applies devices in waves (waves.go), each as one
// transaction that is read back and verified before it counts as applied,
// follows the failure policy, writes a journal of JSON lines as it goes
// (journal.go) and keeps the applied record up to date (record.go).
//
// The contract users rely on: a device is reported "applied" only after
// its live state was read back and equals the desired state; a failed
// device is reported "restored" only after it was read back and matches
// its state at plan time. docs/apply.md describes the behaviour.
//
// RunFabric (fabric.go) is the whole operation of fabctl apply: lock,
// plan or saved-plan checks, the caller's view and confirmation through
// Hooks, the engine run (Run), record and journal, and a typed Outcome
// the CLI maps to its exit codes. The package may import plan, drivers,
// intent and spec; it never imports the CLI.
package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// Policy is what a run does when a device fails.
type Policy string

// Failure policies (--on-failure).
const (
	// Stop: no new device starts; devices in flight finish. The default.
	Stop Policy = "stop"
	// Continue: every other device is still applied, except devices cabled
	// to a failed device of an earlier wave (the wave order would be
	// broken on that link).
	Continue Policy = "continue"
	// Rollback: stop, then roll back every device applied in this run,
	// last wave first.
	Rollback Policy = "rollback"
)

// Policies lists the valid policies.
var Policies = []Policy{Stop, Continue, Rollback}

// ParsePolicy parses an --on-failure value.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("invalid --on-failure %q: want stop, continue or rollback", s)
}

// Status is a device's outcome.
type Status string

// Outcomes.
const (
	StatusApplied      Status = "applied"       // applied and verified by read-back
	StatusFailed       Status = "failed"        // see Restored / Partial
	StatusRolledBack   Status = "rolled_back"   // applied, then rolled back by --on-failure=rollback
	StatusNotAttempted Status = "not_attempted" // never started
	StatusUnchanged    Status = "unchanged"     // nothing to change
)

// Device is one device of the plan to apply, with the driver target
// (connection details and credentials) it is applied through.
type Device struct {
	Plan   *plan.DevicePlan
	Target drivers.Target
}

// Options tune a run.
type Options struct {
	// Parallelism bounds devices in flight within a wave (default 16).
	Parallelism int
	// OnFailure is the failure policy (default Stop).
	OnFailure Policy
	// ConfirmTimeout > 0 asks drivers for a commit with an auto-revert
	// timer; the device is confirmed only after read-back verification.
	ConfirmTimeout time.Duration
	// CheckStale re-reads every device first and refuses the whole run
	// (*StaleError) if any fingerprint moved since the plan.
	CheckStale bool
	// Rederive, when set (a saved plan), replans a device from the
	// plan's own spec and its live state; the staleness check then also
	// refuses the run (*MismatchPlanError) when the steps or changes
	// derived differ from the plan's.
	Rederive func(ctx context.Context, address string) *plan.DevicePlan
	// Journal receives the run's events (nil: none).
	Journal *Journal
	// Record is updated with every verified device (nil: none).
	Record *Recorder
	// HostBatches is the batch policy of the hosts' wave (zero: every
	// host at once, up to Parallelism).
	HostBatches BatchPolicy
	// Lost, when set, says the fabric lock was taken over (nil: still
	// held); no wave starts after it was.
	Lost func() error
	// Progress is told about every step. Calls are serialised; keep it
	// cheap (it runs while a device's worker waits).
	Progress func(ProgressEvent)
	// Now is the clock for timestamps and durations.
	Now func() time.Time

	// Recorded in the journal's run_start.
	Fabric        string
	FabctlVersion string
	SpecHash      string
	PlanHash      string
	PlanFile      string
	// Engine is how hosts are reached, when not over SSH ("kubernetes").
	Engine string
}

// Phases reported to Progress.
const (
	PhaseCheck    = "checking"   // staleness re-read
	PhaseApply    = "applying"   // transaction in flight
	PhaseVerify   = "verifying"  // read-back
	PhaseConfirm  = "confirming" // confirming a commit-confirm
	PhaseSave     = "saving"     // persisting the running configuration
	PhaseRollback = "rolling back"
	PhaseDone     = "done"
)

// ProgressEvent is one step of a device.
type ProgressEvent struct {
	Device string
	Phase  string
	// Result is set when Phase is PhaseDone.
	Result *DeviceResult
	// Totals over the devices with changes.
	Done, Total, InFlight int
}

// DeviceResult is the outcome of one device.
type DeviceResult struct {
	Address string `json:"address"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Wave    int    `json:"wave,omitempty"` // 1-based; 0 for unchanged devices
	Changes int    `json:"changes"`
	// Token identifies the transaction (checkpoint, session, commit id).
	Token     string `json:"token,omitempty"`
	Confirmed bool   `json:"confirmed,omitempty"` // a commit-confirm was confirmed
	// Saved: the running configuration was persisted (platforms with a
	// startup configuration). NotSaved: it was applied and verified, but
	// the save failed: the device holds the new configuration until its
	// next reload. Such a device is failed, not "not restored".
	Saved    bool `json:"saved,omitempty"`
	NotSaved bool `json:"not_saved,omitempty"`
	// Restored: for a failed device, it was read back and matches its state
	// at plan time. False with Status failed means NOT restored: inspect it.
	Restored bool `json:"restored"`
	// Partial: the driver reported a transaction it could not undo.
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
	// Remaining are the settings that still differed from the desired
	// state at read-back.
	Remaining []intent.AttrChange `json:"remaining,omitempty"`
	// Reason says why a device was not attempted.
	Reason string `json:"reason,omitempty"`
	// RollbackError: --on-failure=rollback could not roll this device back;
	// it keeps the applied configuration.
	RollbackError string        `json:"rollback_error,omitempty"`
	Duration      time.Duration `json:"-"`

	seq int // completion order, for rollback
}

// NotRestored reports a device left in neither its old nor its new state
// (or one whose state could not be confirmed).
func (d *DeviceResult) NotRestored() bool {
	return (d.Status == StatusFailed && !d.Restored && !d.NotSaved) || d.RollbackError != ""
}

// Counts totals a run.
type Counts struct {
	Applied      int `json:"applied"`
	Failed       int `json:"failed"`
	RolledBack   int `json:"rolled_back"`
	NotAttempted int `json:"not_attempted"`
	Unchanged    int `json:"unchanged"`
	// NotRestored counts failed devices not verified back at their prior
	// state, and devices whose rollback failed.
	NotRestored int `json:"not_restored"`
	// NotSaved counts failed devices that hold the applied configuration
	// but could not save it.
	NotSaved int `json:"not_saved,omitempty"`
}

// StaleDevice is a device whose live state moved since the plan, or that
// could not be re-read to check.
type StaleDevice struct {
	Address string `json:"address"`
	Planned string `json:"planned_fingerprint,omitempty"`
	Live    string `json:"live_fingerprint,omitempty"`
	Error   string `json:"error,omitempty"` // set when the re-read failed
}

// Result is what a run did.
type Result struct {
	RunID       string          `json:"run_id"`
	Order       Order           `json:"order"`
	OrderReason string          `json:"order_reason"`
	Conflict    bool            `json:"order_conflict,omitempty"`
	Devices     []*DeviceResult `json:"devices"`
	Counts      Counts          `json:"counts"`
	// Stale lists the devices that moved since the plan; Unreachable those
	// that could not be re-read. Either way nothing was applied.
	Stale       []StaleDevice `json:"stale,omitempty"`
	Unreachable []StaleDevice `json:"unreachable,omitempty"`
	// Interrupted is set when the run was cancelled (Ctrl-C): devices in
	// flight finished, no new one started.
	Interrupted bool      `json:"interrupted,omitempty"`
	Started     time.Time `json:"-"`
	Finished    time.Time `json:"-"`
}

// OK reports a run in which nothing failed.
func (r *Result) OK() bool {
	c := r.Counts
	return c.Failed == 0 && c.RolledBack == 0 && c.NotAttempted == 0 && c.NotRestored == 0 &&
		len(r.Stale) == 0 && len(r.Unreachable) == 0 && !r.Interrupted
}

// StaleError refuses a plan whose devices moved since it was made.
type StaleError struct{ Devices []StaleDevice }

func (e *StaleError) Error() string {
	names := make([]string, len(e.Devices))
	for i, d := range e.Devices {
		names[i] = d.Address
	}
	if len(names) == 1 {
		return fmt.Sprintf("stale plan: %s changed since the plan; run fabctl plan again (nothing was applied)", names[0])
	}
	return fmt.Sprintf("stale plan: %d devices changed since the plan (%s); run fabctl plan again (nothing was applied)", len(names), strings.Join(names, ", "))
}

// UnreachableError: the staleness check could not re-read some devices.
type UnreachableError struct{ Devices []StaleDevice }

func (e *UnreachableError) Error() string {
	parts := make([]string, len(e.Devices))
	for i, d := range e.Devices {
		parts[i] = d.Address + ": " + d.Error
	}
	return fmt.Sprintf("cannot check the plan against the fabric, nothing was applied: %s", strings.Join(parts, "; "))
}

// PlanError: the plan has devices that could not be planned.
type PlanError struct{ Devices []*plan.DevicePlan }

func (e *PlanError) Error() string {
	parts := firstFew(len(e.Devices), func(i int) string {
		d := e.Devices[i]
		return d.Address + ": " + strings.TrimPrefix(d.Error, "read "+d.Address+": ")
	})
	what := "1 device"
	if len(e.Devices) != 1 {
		what = fmt.Sprintf("%d devices", len(e.Devices))
	}
	return fmt.Sprintf("the plan is incomplete, nothing was applied: %s could not be planned (%s); fix them or leave them out with --exclude",
		what, strings.Join(parts, "; "))
}

// Listed is the error's text for a reader who has just seen the plan,
// which lists each of these devices with its error under "Not planned":
// how many, not each one again.
func (e *PlanError) Listed() string {
	what := "1 device"
	if len(e.Devices) != 1 {
		what = fmt.Sprintf("%d devices", len(e.Devices))
	}
	return fmt.Sprintf("the plan is incomplete, nothing was applied: %s could not be planned (listed above under \"Not planned\"); fix them or leave them out with --exclude", what)
}

// firstFew lists the first three of n items (item(i)), and how many
// more there are.
func firstFew(n int, item func(i int) string) []string {
	const show = 3
	var parts []string
	for i := 0; i < n; i++ {
		if i == show {
			return append(parts, fmt.Sprintf("and %d more", n-show))
		}
		parts = append(parts, item(i))
	}
	return parts
}

// NotCarriedError: devices cannot carry the intent (plan.NotCarried):
// settings of a lossless, RDMA or CNP class their platforms cannot
// express, not accepted by the spec. Nothing is applied.
type NotCarriedError struct{ Devices []*plan.DevicePlan }

func (e *NotCarriedError) Error() string {
	const show = 3
	var parts []string
	for i, d := range e.Devices {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Devices)-show))
			break
		}
		parts = append(parts, d.Address+": "+strings.Join(plan.NotCarriedSummary(d, 3), "; "))
	}
	what := "1 device cannot"
	if len(e.Devices) != 1 {
		what = fmt.Sprintf("%d devices cannot", len(e.Devices))
	}
	return fmt.Sprintf("nothing was applied: %s carry the intent (%s); %s", what, strings.Join(parts, "; "), plan.AcceptHint)
}

// FailedError summarises the devices a run did not bring to the desired
// state.
type FailedError struct{ Result *Result }

func (e *FailedError) Error() string {
	r := e.Result
	var parts []string
	for _, d := range r.Devices {
		switch {
		case d.Status == StatusFailed && d.NotSaved:
			parts = append(parts, fmt.Sprintf("%s failed, applied but NOT saved: %s", d.Address, d.Error))
		case d.Status == StatusFailed && d.Partial:
			parts = append(parts, fmt.Sprintf("%s failed, NOT restored: %s", d.Address, d.Error))
		case d.Status == StatusFailed && !d.Restored:
			parts = append(parts, fmt.Sprintf("%s failed, NOT restored: %s", d.Address, d.Error))
		case d.Status == StatusFailed:
			parts = append(parts, fmt.Sprintf("%s failed (restored): %s", d.Address, d.Error))
		case d.RollbackError != "":
			parts = append(parts, fmt.Sprintf("%s could not be rolled back: %s", d.Address, d.RollbackError))
		}
	}
	c := r.Counts
	msg := fmt.Sprintf("apply failed: %d applied, %d failed, %d rolled back, %d not attempted", c.Applied, c.Failed, c.RolledBack, c.NotAttempted)
	if r.Interrupted {
		msg += " (interrupted)"
	}
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, "; ")
	}
	return msg
}

// NewRunID returns a run id: UTC time plus 8 random hex digits, sortable.
func NewRunID(now time.Time) string {
	return now.UTC().Format("20060102T150405Z") + "-" + NewID()[:8]
}

type run struct {
	ctx  context.Context // device operations: never cancelled mid-transaction
	stop context.Context // cancelled on interrupt: start no new device
	devs []Device
	reg  *drivers.Registry
	opts Options
	res  *Result
	now  func() time.Time
	j    *Journal

	stopping  atomic.Bool
	stopCause atomic.Value // string
	failed    sync.Map     // address -> wave, for Continue
	drvs      sync.Map     // address -> drivers.Driver of applied devices, for rollback
	interrupt atomic.Bool  // a device was skipped because of an interrupt
	staleInTx atomic.Bool  // a transaction found its device moved since the plan
	links     map[string][]string
	waveOf    map[string]int

	mu       sync.Mutex // guards progress counters and calls, seq
	done     int
	total    int
	inFlight int
	seq      int
}

// Run applies devs. It always returns a Result; the error is a
// *PlanError, *UnreachableError or *StaleError when nothing was applied,
// a *FailedError when some device did not end in the desired state, or
// nil.
func Run(ctx context.Context, devs []Device, reg *drivers.Registry, opts Options) (*Result, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 16
	}
	if opts.OnFailure == "" {
		opts.OnFailure = Stop
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	plans := make([]*plan.DevicePlan, len(devs))
	for i, d := range devs {
		plans[i] = d.Plan
	}
	wp := Waves(plans)
	runID := opts.Journal.RunID()
	if runID == "" {
		runID = NewRunID(opts.Now())
	}
	r := &run{ctx: context.WithoutCancel(ctx), stop: ctx, devs: devs, reg: reg, opts: opts, now: opts.Now, j: opts.Journal,
		res: &Result{RunID: runID, Order: wp.Order, OrderReason: wp.Reason, Conflict: wp.Conflict, Started: opts.Now()}}
	r.res.Devices = make([]*DeviceResult, len(devs))
	r.waveOf = map[string]int{}
	for w, wave := range wp.Waves {
		for _, i := range wave {
			r.waveOf[devs[i].Plan.Address] = w + 1
		}
		r.total += len(wave)
	}
	for i, d := range devs {
		dp := d.Plan
		dr := &DeviceResult{Address: dp.Address, Kind: dp.Kind, Name: dp.Name, Changes: len(dp.Changes),
			Wave: r.waveOf[dp.Address], Status: StatusNotAttempted}
		if !dp.HasChanges() && (dp.Error == "" || dp.Repair) {
			dr.Status = StatusUnchanged
		}
		r.res.Devices[i] = dr
	}
	confirm := ""
	if opts.ConfirmTimeout > 0 {
		confirm = opts.ConfirmTimeout.String()
	}
	r.j.Write(Entry{Event: EventRunStart, FormatVersion: JournalFormatVersion, Fabric: opts.Fabric,
		FabctlVersion: opts.FabctlVersion, SpecHash: opts.SpecHash, PlanHash: opts.PlanHash, PlanFile: opts.PlanFile,
		Parallelism: opts.Parallelism, OnFailure: string(opts.OnFailure), Order: string(wp.Order),
		OrderReason: wp.Reason, ConfirmTime: confirm, Devices: len(devs),
		Engine: opts.Engine, MaxUnavailable: opts.HostBatches.MaxUnavailable.String(), Canary: opts.HostBatches.Canary})

	// The journal must be writable before any device is touched.
	var err error
	if jerr := r.j.Sync(); jerr != nil {
		err = &JournalError{Path: r.j.Path(), Err: jerr}
	} else {
		err = r.execute(wp)
	}
	r.release()
	r.res.Finished = r.now()
	r.res.Counts = count(r.res.Devices)
	status := "ok"
	switch {
	case err != nil:
		status = "refused"
		for _, dr := range r.res.Devices {
			if dr.Status == StatusNotAttempted {
				dr.Reason = refusal(err)
			}
		}
	case r.j.Err() != nil:
		status = "failed"
		err = &JournalError{Path: r.j.Path(), Err: r.j.Err()}
	case !r.res.OK():
		status = "failed"
		err = &FailedError{Result: r.res}
	}
	c := r.res.Counts
	r.j.Write(Entry{Event: EventRunEnd, Status: status, Counts: &c, Error: errText(err)})
	_ = r.j.Flush() // write errors are the caller's to report (Journal.Err)
	return r.res, err
}

func refusal(err error) string {
	switch err.(type) {
	case *StaleError:
		return "nothing applied: stale plan"
	case *UnreachableError:
		return "nothing applied: devices could not be re-read"
	case *MismatchPlanError:
		return "nothing applied: the plan's steps do not follow from its spec"
	case *JournalError:
		return "nothing applied: the journal cannot be written"
	default:
		return "nothing applied: incomplete plan"
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (r *run) execute(wp WavePlan) error {
	plans := make([]*plan.DevicePlan, len(r.devs))
	for i, d := range r.devs {
		plans[i] = d.Plan
	}
	if bad := unplanned(plans); len(bad) > 0 {
		return &PlanError{Devices: bad}
	}
	if r.opts.CheckStale {
		if err := r.checkStale(); err != nil {
			return err
		}
	}
	// Devices with nothing to change match the desired state (checked just
	// now, or by the plan): they are part of the applied baseline.
	for _, d := range r.devs {
		if !d.Plan.HasChanges() {
			r.opts.Record.Verified(d.Plan.Address, d.Plan.Desired)
		}
	}
	if len(r.devs) > 0 {
		r.links = links(r.devs)
	}
	for w, wave := range wp.Waves {
		if w > 0 && r.opts.Lost != nil {
			if err := r.opts.Lost(); err != nil {
				r.halt("stopped before wave " + strconv.Itoa(w+1) + ": " + err.Error())
			}
		}
		r.runWave(w+1, wave)
	}
	// An interrupt ends the run "interrupted" even when every device was
	// already in flight (none was left to skip).
	r.res.Interrupted = r.interrupt.Load() || r.stop.Err() != nil
	if r.opts.OnFailure == Rollback && r.stopping.Load() && r.res.anyFailed() || r.staleInTx.Load() {
		r.rollbackAll()
	}
	for _, dr := range r.res.Devices {
		if dr.Status == StatusNotAttempted {
			if dr.Reason == "" {
				dr.Reason = r.notAttemptedReason()
			}
			r.j.Write(Entry{Event: EventSkipped, Device: dr.Address, Wave: dr.Wave, Reason: dr.Reason})
		}
	}
	if len(r.res.Stale) > 0 && r.nothingApplied() {
		// Staleness found by transactions (checkedInTransaction) before
		// anything was applied: the same outcome as the re-read's.
		return &StaleError{Devices: r.res.Stale}
	}
	return nil
}

// nothingApplied: no device is left changed by this run (every attempted
// one failed before its transaction changed it, or was rolled back).
func (r *run) nothingApplied() bool {
	stale := map[string]bool{}
	for _, sd := range r.res.Stale {
		stale[sd.Address] = true
	}
	for _, dr := range r.res.Devices {
		switch dr.Status {
		case StatusNotAttempted, StatusUnchanged:
		case StatusRolledBack:
			if dr.RollbackError != "" {
				return false
			}
		case StatusFailed:
			if !dr.Restored || dr.Partial || !stale[dr.Address] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (res *Result) anyFailed() bool {
	for _, d := range res.Devices {
		if d.Status == StatusFailed {
			return true
		}
	}
	return false
}

func (r *run) notAttemptedReason() string {
	if r.interrupt.Load() {
		return "interrupted: no new device was started"
	}
	if c, ok := r.stopCause.Load().(string); ok && c != "" {
		return c
	}
	return "not started"
}

func (r *run) halt(cause string) {
	if r.stopping.CompareAndSwap(false, true) {
		r.stopCause.Store(cause)
	}
}

func (r *run) progress(ev ProgressEvent, delta int, finished bool) {
	r.mu.Lock()
	r.inFlight += delta
	if finished {
		r.done++
	}
	if r.opts.Progress != nil {
		ev.Done, ev.Total, ev.InFlight = r.done, r.total, r.inFlight
		r.opts.Progress(ev)
	}
	r.mu.Unlock()
}

// checkStale re-reads every device and compares fingerprints.
func (r *run) checkStale() error {
	type out struct {
		live     string
		err      error
		mismatch bool
	}
	outs := make([]out, len(r.devs))
	r.parallel(len(r.devs), func(i int) {
		d := r.devs[i]
		if r.opts.Rederive != nil {
			r.progress(ProgressEvent{Device: d.Plan.Address, Phase: PhaseCheck}, 0, false)
			fresh := r.opts.Rederive(r.ctx, d.Plan.Address)
			switch {
			case fresh == nil:
				outs[i].err = errors.New("the plan's spec does not declare this device")
			case fresh.Error != "":
				outs[i].err = errors.New(fresh.Error)
			default:
				outs[i].live = fresh.Fingerprint
				outs[i].mismatch = fresh.Fingerprint == d.Plan.Fingerprint && !plan.SameWork(d.Plan, fresh)
			}
			return
		}
		drv, err := r.reg.New(d.Plan.Driver)
		if err != nil {
			outs[i].err = err
			return
		}
		if checkedInTransaction(drv, d.Plan) {
			// Checked by the device's transaction itself (transact), in
			// the same round trip, just before it applies.
			outs[i].live = d.Plan.Fingerprint
			return
		}
		r.progress(ProgressEvent{Device: d.Plan.Address, Phase: PhaseCheck}, 0, false)
		live, err := drv.Read(r.ctx, d.Target)
		var ue *drivers.UnconfirmedError
		switch {
		case errors.As(err, &ue):
			live = intent.State{} // still unconfirmed, as planned
		case err != nil:
			outs[i].err = err
			return
		}
		outs[i].live = live.Fingerprint()
	})
	var forged []string
	for i, o := range outs {
		dp := r.devs[i].Plan
		switch {
		case o.mismatch:
			forged = append(forged, dp.Address)
			r.j.Write(Entry{Event: EventStale, Device: dp.Address, Fingerprint: o.live,
				Reason: "the plan's steps do not follow from its spec and the live state"})
		case o.err != nil:
			sd := StaleDevice{Address: dp.Address, Error: r.j.Redact(o.err.Error())}
			r.res.Unreachable = append(r.res.Unreachable, sd)
			r.j.Write(Entry{Event: EventUnreachable, Device: dp.Address, Error: sd.Error})
		case o.live != dp.Fingerprint:
			sd := StaleDevice{Address: dp.Address, Planned: dp.Fingerprint, Live: o.live}
			r.res.Stale = append(r.res.Stale, sd)
			r.j.Write(Entry{Event: EventStale, Device: dp.Address, Fingerprint: o.live,
				Reason: "live state changed since the plan (fingerprint " + short(dp.Fingerprint) + " -> " + short(o.live) + ")"})
		}
	}
	if len(forged) > 0 {
		return &MismatchPlanError{Devices: forged}
	}
	if len(r.res.Unreachable) > 0 {
		return &UnreachableError{Devices: r.res.Unreachable}
	}
	if len(r.res.Stale) > 0 {
		return &StaleError{Devices: r.res.Stale}
	}
	return nil
}

// checkedInTransaction: the device's staleness check is its transaction's
// (drivers.CheckedApplier with the plan's fingerprint; a device with
// changes, so it has a transaction). A saved plan (Rederive) is still
// re-read before the waves, as its check re-derives the steps; its
// transaction checks the fingerprint again.
func checkedInTransaction(drv drivers.Driver, dp *plan.DevicePlan) bool {
	_, ok := drv.(drivers.CheckedApplier)
	return ok && dp.Fingerprint != "" && dp.HasChanges()
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

// parallel runs fn(0..n-1) on at most Parallelism goroutines, in order of
// index, and waits.
func (r *run) parallel(n int, fn func(i int)) { r.parallelN(r.opts.Parallelism, n, fn) }

// parallelN is parallel on at most workers goroutines.
func (r *run) parallelN(workers, n int, fn func(i int)) {
	workers = min(workers, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// runWave applies a wave's devices, Parallelism at a time; the hosts'
// wave in batches when the run has a batch policy (HostBatches): the
// canary devices alone first, then the rest, at most MaxUnavailable in
// flight. A failure stops what --on-failure stops, across the batches.
func (r *run) runWave(wave int, idx []int) {
	bp := r.opts.HostBatches
	if bp.IsZero() || r.devs[idx[0]].Plan.Kind != intent.KindHost {
		r.runBatch(wave, 0, r.opts.Parallelism, idx)
		return
	}
	canary, inFlight := bp.batches(len(idx))
	if inFlight <= 0 {
		inFlight = r.opts.Parallelism
	}
	batch := 1
	if canary > 0 {
		r.runBatch(wave, batch, canary, idx[:canary])
		batch++
	}
	r.runBatch(wave, batch, inFlight, idx[canary:])
}

// runBatch applies devices (indexes into devs), workers at a time;
// batch numbers them in the journal (0: the run has no batches).
func (r *run) runBatch(wave, batch, workers int, idx []int) {
	r.parallelN(workers, len(idx), func(k int) {
		i := idx[k]
		dr := r.res.Devices[i]
		if r.stop.Err() != nil {
			r.interrupt.Store(true)
			return // stays not attempted
		}
		if r.stopping.Load() {
			return
		}
		if r.j.Err() != nil {
			r.halt("stopped: the journal cannot be written")
			return
		}
		if wave > 1 && r.opts.OnFailure == Continue {
			for _, peer := range r.links[dr.Address] {
				if w, failed := r.failed.Load(peer); failed && w.(int) < wave {
					dr.Reason = fmt.Sprintf("cabled to %s, which failed in wave %d: applying this device would break the wave order on that link", peer, w.(int))
					return
				}
			}
		}
		r.applyDevice(i, wave, batch)
		if dr.Status == StatusFailed {
			r.failed.Store(dr.Address, wave)
			if r.opts.OnFailure != Continue {
				r.halt(fmt.Sprintf("on-failure=%s: stopped after %s failed", r.opts.OnFailure, dr.Address))
			}
		}
	})
}

// applyDevice runs one device's transaction, verification and confirm.
func (r *run) applyDevice(i, wave, batch int) {
	d := r.devs[i]
	dp, dr := d.Plan, r.res.Devices[i]
	start := r.now()
	drv, err := r.reg.New(dp.Driver)
	if err != nil {
		drv = nil
	}
	// The device is touched only once its device_start is in the journal.
	if err := r.j.WriteSync(delivered(drv, d, Entry{Event: EventDeviceStart, Device: dp.Address, Wave: wave, Changes: len(dp.Changes), Batch: batch})); err != nil {
		dr.Reason = "not started: the journal cannot be written"
		r.halt("stopped: the journal cannot be written")
		return
	}
	r.progress(ProgressEvent{Device: dp.Address, Phase: PhaseApply}, +1, false)
	if err != nil {
		dr.Status, dr.Restored, dr.Error = StatusFailed, true, err.Error()
		drv = nil
	} else {
		r.transact(drv, d, dr, batch)
	}
	r.finishDevice(d, dr, start, drv)
}

// delivered adds to a journal entry what an agent-delivered device's
// driver handed over and what its agent reported (drivers.AgentApplier).
func delivered(drv drivers.Driver, d Device, e Entry) Entry {
	aa, ok := drv.(drivers.AgentApplier)
	if !ok {
		return e
	}
	x := aa.Delivery(d.Target)
	e.Revision, e.PreviousRevision, e.Generation, e.ObservedGeneration = x.Revision, x.PreviousRevision, x.Generation, x.ObservedGeneration
	if e.Reason == "" {
		e.Reason = x.Reason
	}
	if e.Event == EventDeviceStart {
		e.Generation, e.ObservedGeneration = 0, 0
	}
	return e
}

// transact does the device's work with its driver, leaving the outcome
// in dr.
func (r *run) transact(drv drivers.Driver, d Device, dr *DeviceResult, batch int) {
	dp := d.Plan
	saver, saves := drv.(drivers.Saver)
	steps := dp.Steps
	if saves {
		steps = drivers.WithoutSaveSteps(steps)
		if len(steps) == 0 {
			// Only unsaved: nothing to transact, verify or confirm.
			r.save(saver, d, dr)
			return
		}
	}
	res, after, err := r.applySteps(drv, d, dr, steps)
	if dr.Status == StatusFailed {
		return // stale: nothing applied
	}
	if err != nil {
		dr.Status = StatusFailed
		dr.Error = "apply: " + err.Error()
		var pe *drivers.PartialError
		if errors.As(err, &pe) {
			dr.Partial = true
			dr.Error = err.Error()
			return
		}
		// The driver says the device is back at its prior state: check.
		dr.Restored, dr.Error = r.checkRestored(drv, d, dr.Error)
		return
	}
	dr.Token = res.Token
	r.j.Write(delivered(drv, d, Entry{Event: EventDeviceApplied, Device: dp.Address, Token: res.Token, Pending: res.Pending, Batch: batch}))

	r.progress(ProgressEvent{Device: dp.Address, Phase: PhaseVerify}, 0, false)
	if aa, ok := drv.(drivers.AgentApplier); ok {
		// The device's agent applies and verifies it: wait for its report.
		if err := aa.Await(r.ctx, d.Target, res); err != nil {
			agentFailed(dr, err)
			return
		}
	}
	live := after
	if live == nil {
		live, err = drv.Read(r.ctx, d.Target)
	}
	var cause string
	if err != nil {
		cause = "read-back after apply: " + err.Error()
	} else if rem := dp.WithoutUnexpressible(drivers.WithoutSaved(intent.Diff(dp.Desired, live, drv.Fields()))); len(rem) > 0 {
		dr.Remaining = rem
		cause = "verification: " + describeRemaining(rem)
	} else if moved := dp.UnmanagedMoved(live); len(moved) > 0 {
		// The spec leaves these as the device ran them: an apply that
		// changed one is undone, never kept.
		dr.Remaining = moved
		cause = "verification: the apply changed settings the spec leaves unmanaged: " + describeRemaining(moved)
	}
	if cause == "" && res.Pending {
		r.progress(ProgressEvent{Device: dp.Address, Phase: PhaseConfirm}, 0, false)
		if err := drv.Confirm(r.ctx, d.Target, res); err != nil {
			cause = "confirm: " + err.Error()
		} else {
			dr.Confirmed = true
		}
	}
	if cause == "" {
		dr.Status = StatusApplied
		if saves {
			r.save(saver, d, dr)
		}
		return
	}
	r.undo(drv, d, dr, res, cause)
}

// applySteps runs the device's transaction: checked against the plan's
// fingerprint in the same round trip where the driver can
// (drivers.CheckedApplier; after is then the state read back). A device
// that moved since the plan is left failed (and stale), with nothing
// applied.
func (r *run) applySteps(drv drivers.Driver, d Device, dr *DeviceResult, steps []drivers.Change) (res drivers.Result, after intent.State, err error) {
	dp := d.Plan
	ca, ok := drv.(drivers.CheckedApplier)
	if !ok || !r.opts.CheckStale || !checkedInTransaction(drv, dp) {
		res, err = drv.Apply(r.ctx, d.Target, steps, drivers.ApplyOptions{ConfirmTimeout: r.opts.ConfirmTimeout})
		return res, nil, err
	}
	res, after, err = ca.ApplyChecked(r.ctx, d.Target, steps, dp.Fingerprint, drivers.ApplyOptions{ConfirmTimeout: r.opts.ConfirmTimeout})
	var se *drivers.StaleError
	if !errors.As(err, &se) {
		return res, after, err
	}
	// The staleness check, done in the transaction's round trip: nothing
	// was applied on this device.
	sd := StaleDevice{Address: dp.Address, Planned: dp.Fingerprint, Live: se.Live}
	r.mu.Lock()
	r.res.Stale = append(r.res.Stale, sd)
	r.mu.Unlock()
	r.j.Write(Entry{Event: EventStale, Device: dp.Address, Fingerprint: se.Live,
		Reason: "live state changed since the plan (fingerprint " + short(dp.Fingerprint) + " -> " + short(se.Live) + ")"})
	dr.Status, dr.Restored = StatusFailed, true
	dr.Error = "stale plan: live state changed since the plan (fingerprint " + short(dp.Fingerprint) + " -> " + short(se.Live) + "); nothing applied on this device: run fabctl plan again"
	// The plan no longer describes the fabric: start no other device,
	// and roll back what this run applied (execute), so the fabric is
	// left as the plan found it, as when the re-read before the waves
	// finds a device moved.
	r.staleInTx.Store(true)
	r.halt("stopped: " + dp.Address + " changed since the plan (stale plan)")
	return res, nil, nil
}

// agentFailed records an agent's report that it did not apply the
// device (drivers.AgentApplier.Await): restored as the agent says, since
// the engine cannot read the device to check.
func agentFailed(dr *DeviceResult, err error) {
	dr.Status, dr.Error = StatusFailed, err.Error()
	var pe *drivers.PartialError
	var ae *drivers.AgentError
	switch {
	case errors.As(err, &pe):
		dr.Partial = true
	case errors.As(err, &ae):
		dr.Restored = ae.Restored
	default:
		dr.Error = "apply: " + err.Error()
	}
}

// undo rolls back a device whose transaction was not verified (cause
// says why) rather than leave a device the run cannot vouch for.
func (r *run) undo(drv drivers.Driver, d Device, dr *DeviceResult, res drivers.Result, cause string) {
	dr.Status = StatusFailed
	r.progress(ProgressEvent{Device: d.Plan.Address, Phase: PhaseRollback}, 0, false)
	rerr := drv.Rollback(r.ctx, d.Target, res)
	switch {
	case rerr != nil && res.Pending && errors.Is(rerr, drivers.ErrUnsupported):
		dr.Error = fmt.Sprintf("%s; not confirmed: the device reverts by itself when its confirm timer (%s) expires", cause, r.opts.ConfirmTimeout)
	case rerr != nil:
		dr.Error = fmt.Sprintf("%s; rollback failed: %v", cause, rerr)
	default:
		dr.Restored, dr.Error = r.checkRestored(drv, d, cause+"; rolled back")
	}
}

// save persists a verified (and confirmed) device's configuration. A
// failed save leaves the device applied and verified but not saved: it
// fails the run (the next reload would lose the configuration) without a
// rollback, and the applied record says unsaved so plan shows the save.
func (r *run) save(s drivers.Saver, d Device, dr *DeviceResult) {
	r.progress(ProgressEvent{Device: d.Plan.Address, Phase: PhaseSave}, 0, false)
	if err := s.Save(r.ctx, d.Target); err != nil {
		dr.Status, dr.NotSaved = StatusFailed, true
		dr.Error = fmt.Sprintf("applied and verified, but not saved: %v; the device loses this configuration at its next reload: run apply again (it saves) or save it on the device", err)
		return
	}
	dr.Status, dr.Saved = StatusApplied, true
}

// checkRestored reads the device back and compares it with the state the
// plan observed.
func (r *run) checkRestored(drv drivers.Driver, d Device, cause string) (bool, string) {
	return r.checkRestoredAs(drv, d, cause, "")
}

// checkRestoredAs is checkRestored for a device saved after its rollback
// whose configuration was unsaved before the run: savedBefore ("false")
// stands for the config/saved it read then.
func (r *run) checkRestoredAs(drv drivers.Driver, d Device, cause, savedBefore string) (bool, string) {
	live, err := drv.Read(r.ctx, d.Target)
	if err == nil && savedBefore != "" {
		live[drivers.PathSaved] = savedBefore
	}
	switch {
	case err != nil:
		return false, fmt.Sprintf("%s; could not read the device back to check it was restored: %v", cause, err)
	case d.Plan.Fingerprint == "":
		return false, cause + "; the plan recorded no prior state to check the restore against"
	case live.Fingerprint() != d.Plan.Fingerprint:
		return false, cause + "; the device does not match its state before the apply" + priorDiff(d.Plan, live)
	}
	return true, cause
}

// priorDiff names the settings of the plan that differ between live and
// the state the plan read (its changes' before values, and its desired
// values where it changed nothing): ": port/Ethernet0/mtu is 6000, was
// 5000", at most three; "" when those all match (the difference is in a
// setting the plan does not manage).
func priorDiff(dp *plan.DevicePlan, live intent.State) string {
	prior := make(map[string]*string, len(dp.Desired))
	for k := range dp.Desired {
		v := dp.Desired[k]
		prior[k] = &v
	}
	for _, c := range dp.Changes {
		switch c.Action {
		case intent.Create:
			prior[c.Path] = nil
		default:
			b := c.Before
			prior[c.Path] = &b
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(prior)) {
		have, ok := live[k]
		switch was := prior[k]; {
		case was == nil && ok:
			out = append(out, fmt.Sprintf("%s is %q, was unset", k, have))
		case was != nil && !ok:
			out = append(out, fmt.Sprintf("%s is unset, was %q", k, *was))
		case was != nil && have != *was:
			out = append(out, fmt.Sprintf("%s is %q, was %q", k, have, *was))
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return ": " + strings.Join(out, ", ")
}

// describeRemaining renders a verification diff: "2 settings differ after
// apply: port/Ethernet0/mtu want 9100 have 1500, ...".
func describeRemaining(rem []intent.AttrChange) string {
	const show = 3
	var parts []string
	for i, c := range rem {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(rem)-show))
			break
		}
		switch c.Action {
		case intent.Create:
			parts = append(parts, fmt.Sprintf("%s missing (want %q)", c.Path, c.After))
		case intent.Delete:
			parts = append(parts, fmt.Sprintf("%s still present (%q)", c.Path, c.Before))
		default:
			parts = append(parts, fmt.Sprintf("%s want %q have %q", c.Path, c.After, c.Before))
		}
	}
	return fmt.Sprintf("%d setting(s) differ after apply: %s", len(rem), strings.Join(parts, ", "))
}

func (r *run) finishDevice(d Device, dr *DeviceResult, start time.Time, drv drivers.Driver) {
	dr.Duration = r.now().Sub(start)
	dur := dr.Duration.Milliseconds()
	dr.Error = r.j.Redact(dr.Error)
	switch dr.Status {
	case StatusApplied:
		r.opts.Record.Verified(d.Plan.Address, d.Plan.Desired)
		r.j.Write(delivered(drv, d, Entry{Event: EventDeviceVerified, Device: dr.Address, Token: dr.Token, Confirmed: dr.Confirmed, Saved: dr.Saved, DurationMS: &dur}))
	case StatusFailed:
		if dr.NotSaved {
			// Applied and verified: record it, as unsaved, so drift and
			// plan compare against what the device runs.
			unsaved := make(intent.State, len(d.Plan.Desired))
			for k, v := range d.Plan.Desired {
				unsaved[k] = v
			}
			unsaved[drivers.PathSaved] = "false"
			r.opts.Record.Verified(d.Plan.Address, unsaved)
		}
		restored := dr.Restored
		r.j.Write(delivered(drv, d, Entry{Event: EventDeviceFailed, Device: dr.Address, Error: dr.Error, Restored: &restored,
			Partial: dr.Partial, NotSaved: dr.NotSaved, Remaining: dr.Remaining, DurationMS: &dur}))
	}
	r.mu.Lock()
	r.seq++
	dr.seq = r.seq
	r.mu.Unlock()
	if drv != nil && dr.Status == StatusApplied {
		r.drvs.Store(dr.Address, drv)
	}
	r.progress(ProgressEvent{Device: dr.Address, Phase: PhaseDone, Result: dr}, -1, true)
}

// rollbackAll undoes every device applied in this run, last wave first
// and, within a wave, most recently applied first (in parallel, bounded).
func (r *run) rollbackAll() {
	byDev := map[string]Device{}
	for _, d := range r.devs {
		byDev[d.Plan.Address] = d
	}
	var applied []*DeviceResult
	for _, dr := range r.res.Devices {
		if dr.Status == StatusApplied {
			applied = append(applied, dr)
		}
	}
	sort.SliceStable(applied, func(a, b int) bool {
		if applied[a].Wave != applied[b].Wave {
			return applied[a].Wave > applied[b].Wave
		}
		return applied[a].seq > applied[b].seq
	})
	for len(applied) > 0 {
		w := applied[0].Wave
		n := 0
		for n < len(applied) && applied[n].Wave == w {
			n++
		}
		batch := applied[:n]
		applied = applied[n:]
		r.parallel(len(batch), func(k int) {
			dr := batch[k]
			d := byDev[dr.Address]
			r.progress(ProgressEvent{Device: dr.Address, Phase: PhaseRollback}, +1, false)
			r.rollbackOne(d, dr)
			r.progress(ProgressEvent{Device: dr.Address, Phase: PhaseDone, Result: dr}, -1, false)
		})
	}
}

func (r *run) rollbackOne(d Device, dr *DeviceResult) {
	var drv drivers.Driver
	if v, ok := r.drvs.Load(dr.Address); ok {
		drv = v.(drivers.Driver)
	}
	fail := func(msg string) {
		dr.RollbackError = r.j.Redact(msg)
		r.j.Write(delivered(drv, d, Entry{Event: EventRollbackFailed, Device: dr.Address, Token: dr.Token, Error: dr.RollbackError}))
	}
	if drv == nil {
		fail("no driver instance")
		return
	}
	if err := drv.Rollback(r.ctx, d.Target, drivers.Result{Token: dr.Token}); err != nil {
		fail("rollback: " + err.Error())
		return
	}
	// A driver's rollback restores the running configuration. When this
	// run saved the device, its startup configuration holds the change
	// and a reload would bring back what the run reports rolled back:
	// save again. A configuration that was unsaved before the run (the
	// plan changed config/saved) cannot get its earlier startup
	// configuration back; it is left as the running one from before the
	// run, and the result says so.
	savedBefore, note := "", ""
	if s, ok := drv.(drivers.Saver); ok && dr.Saved {
		if err := s.Save(r.ctx, d.Target); err != nil {
			fail("rolled back the running configuration, but saving it failed, so the startup configuration still holds this run's change (a reload brings it back): " + err.Error())
			return
		}
		if unsavedBefore(d.Plan) {
			savedBefore = "false"
			note = "its configuration was not saved before this run, which saved it: the startup configuration is now the running configuration from before the run, not the startup configuration it had"
		}
	}
	ok, msg := r.checkRestoredAs(drv, d, "rolled back", savedBefore)
	if !ok {
		fail(msg)
		return
	}
	dr.Status = StatusRolledBack
	if note != "" {
		dr.Error = strings.TrimPrefix(dr.Error+"; rolled back: "+note, "; ")
	}
	r.opts.Record.Revert(dr.Address)
	r.j.Write(delivered(drv, d, Entry{Event: EventRolledBack, Device: dr.Address, Token: dr.Token, Reason: note}))
}

// unsavedBefore: the plan found the device's running configuration
// unsaved (its changes include config/saved).
func unsavedBefore(dp *plan.DevicePlan) bool {
	for _, c := range dp.Changes {
		if c.Path == drivers.PathSaved {
			return true
		}
	}
	return false
}

// release lets drivers that keep a rollback point on the device for the
// run (NX-OS checkpoints: the switch keeps at most ten) remove it once the
// run is over and the device stays applied. A failure is journaled; the
// device is still applied and verified.
func (r *run) release() {
	for _, dr := range r.res.Devices {
		if dr.Status != StatusApplied || dr.Token == "" {
			continue
		}
		v, ok := r.drvs.Load(dr.Address)
		if !ok {
			continue
		}
		rel, ok := v.(drivers.Releaser)
		if !ok {
			continue
		}
		for _, d := range r.devs {
			if d.Plan.Address != dr.Address {
				continue
			}
			if err := rel.Release(r.ctx, d.Target, drivers.Result{Token: dr.Token}); err != nil {
				r.j.Write(Entry{Event: EventReleaseFailed, Device: dr.Address, Token: dr.Token, Error: r.j.Redact("release: " + err.Error())})
			}
		}
	}
}

// CountResults counts device results by status (Result.Counts).
func CountResults(devs []*DeviceResult) Counts { return count(devs) }

func count(devs []*DeviceResult) Counts {
	var c Counts
	for _, d := range devs {
		switch d.Status {
		case StatusApplied:
			c.Applied++
		case StatusFailed:
			c.Failed++
		case StatusRolledBack:
			c.RolledBack++
		case StatusNotAttempted:
			c.NotAttempted++
		case StatusUnchanged:
			c.Unchanged++
		}
		if d.NotSaved {
			c.NotSaved++
		}
		if d.NotRestored() {
			c.NotRestored++
		}
	}
	return c
}

// MismatchPlanError refuses a saved plan whose native steps (or changes)
// are not what its own spec and the devices' live state give: the file
// was edited and re-sealed, or made by a fabctl that renders otherwise.
// Apply never runs steps that do not follow from the spec.
type MismatchPlanError struct{ Devices []string }

func (e *MismatchPlanError) Error() string {
	return fmt.Sprintf("the saved plan's native steps for %s do not follow from the plan's spec and the live state (the plan file was edited, or made by another fabctl version): nothing was applied; run fabctl plan -out again",
		strings.Join(e.Devices, ", "))
}

// JournalError fails a run whose journal could not be written: the run
// starts no device after it (docs/apply.md promises a journal of every
// run).
type JournalError struct {
	Path string
	Err  error
}

func (e *JournalError) Error() string {
	where := "the journal"
	if e.Path != "" {
		where = "the journal " + e.Path
	}
	return fmt.Sprintf("%s cannot be written (%v): no further device was started", where, e.Err)
}

func (e *JournalError) Unwrap() error { return e.Err }
