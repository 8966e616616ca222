package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// DriverName is the driver a host's device plan names under this engine.
const DriverName = "kubernetes"

// ApplyOptions are the inputs of Apply.
type ApplyOptions struct {
	Clients *Clients
	// Locker is the fabric lock (kubelock.Locker: a Lease).
	Locker   apply.Locker
	Spec     *spec.Spec
	Fabric   *intent.Fabric
	Registry *drivers.Registry
	// Plan are the switches' planning options (and --target/--exclude,
	// which select hosts too).
	Plan           plan.Options
	Parallelism    int
	OnFailure      apply.Policy
	MaxUnavailable MaxUnavailable
	// Canary hosts go first, alone (default 1; 0 = none).
	Canary      int
	HostTimeout time.Duration
	LockTimeout time.Duration
	Version     string
	Hooks       apply.Hooks
	// StateDir holds the applied record and the journals, as with SSH
	// ("": neither is written). Journal is the journal file ("":
	// <state-dir>/journal/<fabric>-<run-id>.jsonl). Getenv resolves the
	// credentials' environment variables to redact from it; Now is the
	// journal's clock.
	StateDir string
	Journal  string
	Getenv   func(string) string
	Now      func() time.Time
	// Rollout is told about every host event.
	Rollout func(RolloutEvent)
}

// Outcome is what Apply did.
type Outcome struct {
	Status apply.RunStatus
	// Plan: the switches and subnet managers planned by their drivers, and
	// one device plan per selected host computed from the published
	// objects (driver "kubernetes": published intent -> compiled).
	Plan     *plan.Plan
	Waves    apply.WavePlan
	Switches *apply.Result
	Rollout  *RolloutResult
	Hosts    []HostReport
	Overlaps []Overlap
	Lock     *apply.LockInfo
	Warnings []string
	// RunID names the run; Journal is the journal file written ("" when
	// none: nothing to change, or no state directory).
	RunID   string
	Journal string
}

// OverlapError refuses a run whose hosts another operator also manages.
type OverlapError struct{ Overlaps []Overlap }

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%d host NIC(s) are also managed by nic-configuration-operator (first: %s): nothing was published", len(e.Overlaps), e.Overlaps[0].Message)
}

// selectedHosts are the fabric's hosts that pass --target/--exclude.
func selectedHosts(f *intent.Fabric, o plan.Options) []*intent.Host {
	var out []*intent.Host
	for _, h := range f.Hosts {
		if plan.Selected(h.Device, o.Targets, o.Excludes) {
			out = append(out, h)
		}
	}
	return out
}

// PlanFabric plans a fabric under this engine: switches and subnet
// managers with their drivers, hosts from their FabricHostConfig objects
// and status (no SSH). It returns the plan (hosts as "kubernetes" device
// plans) and the host reports.
func PlanFabric(ctx context.Context, o ApplyOptions, objs map[string]*FabricHostConfig) (*plan.Plan, []HostReport, error) {
	sw := *o.Fabric
	sw.Hosts = nil
	var p *plan.Plan
	if len(sw.Switches)+len(sw.SubnetManagers) > 0 {
		p = plan.Make(ctx, o.Spec, &sw, o.Registry, o.Plan)
	} else {
		p = &plan.Plan{FormatVersion: plan.FormatVersion, FabctlVersion: o.Plan.FabctlVersion, Fabric: o.Fabric.Name, SpecHash: o.Spec.SourceHash,
			Targets: o.Plan.Targets, Excludes: o.Plan.Excludes}
	}
	p.FabricDevices = len(o.Fabric.Switches) + len(o.Fabric.Hosts) + len(o.Fabric.SubnetManagers)
	hosts := selectedHosts(o.Fabric, o.Plan)
	reps, err := Report(hosts, o.Fabric.Name, objs)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]HostReport{}
	for _, r := range reps {
		byName[r.Name] = r
	}
	for _, h := range hosts {
		r := byName[h.Name]
		dp := &plan.DevicePlan{Address: h.Addr(), Kind: intent.KindHost, Name: h.Name, Platform: h.Platform, Role: h.Role,
			Driver: DriverName, Desired: h.Flatten(), Changes: r.Changes}
		if dp.Changes == nil {
			dp.Changes = []intent.AttrChange{}
		}
		dp.Drift = r.Drift
		switch r.State {
		case HostForeign:
			dp.Error = r.Message
		case HostFailed:
			dp.Error = fmt.Sprintf("the node's agent reports Applied=False (%s): %s", r.Reason, r.Message)
		case HostPending:
			dp.Findings = append(dp.Findings, drivers.Finding{Severity: "info",
				Message: fmt.Sprintf("revision %s is published; the node's agent has not reported it yet", r.Published)})
		}
		p.Devices = append(p.Devices, dp)
	}
	plan.SortDevices(p.Devices)
	return p, reps, nil
}

// Apply applies a fabric with the Kubernetes engine: it takes the
// fabric's Lease, plans (PlanFabric), refuses hosts another operator
// owns, shows the plan and asks (Hooks), then runs the two waves in the
// plan's order: the switches through their drivers (apply.Run, as the
// SSH engine) and the hosts by publishing their intents in batches
// (Rollout).
func Apply(ctx context.Context, o ApplyOptions) (*Outcome, error) {
	out := &Outcome{}
	fail := func(st apply.RunStatus, err error) (*Outcome, error) {
		out.Status = st
		return out, err
	}
	h := o.Hooks
	lease, err := o.Locker.Lock(ctx, apply.LockRequest{Fabric: o.Fabric.Name, Operation: "apply", Version: o.Version, Timeout: o.LockTimeout, Now: o.Now})
	var le *apply.LockedError
	if errors.As(err, &le) {
		out.Lock = &le.Info
		return fail(apply.RunLocked, err)
	}
	if err != nil {
		return fail(apply.RunError, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lease.Unlock(rctx); err != nil {
			out.Warnings = append(out.Warnings, "lock: "+err.Error())
		}
	}()
	tr, err := Track(ctx, o.Clients, o.Fabric.Name)
	if err != nil {
		return fail(apply.RunError, err)
	}
	defer tr.Stop()
	hosts := selectedHosts(o.Fabric, o.Plan)
	ov, err := Overlaps(ctx, o.Clients, hosts)
	if err != nil {
		out.Warnings = append(out.Warnings, err.Error())
		if h.Warn != nil {
			h.Warn(err.Error())
		}
	}
	out.Overlaps = ov
	if len(ov) > 0 {
		return fail(apply.RunRefused, &OverlapError{Overlaps: ov})
	}
	objs := map[string]*FabricHostConfig{}
	for _, hh := range hosts {
		if obj := tr.Get(hh.Name); obj != nil {
			objs[hh.Name] = obj
		}
	}
	if h.Planning != nil {
		h.Planning()
	}
	p, reps, err := PlanFabric(ctx, o, objs)
	if err != nil {
		return fail(apply.RunError, err)
	}
	if h.Planned != nil {
		h.Planned(p)
	}
	out.Plan, out.Hosts = p, reps
	out.Waves = apply.Waves(p.Devices)
	if h.Plan != nil {
		if err := h.Plan(p, out.Waves); err != nil {
			return fail(apply.RunError, err)
		}
	}
	// A host whose agent failed its revision is retried, not refused; a
	// switch that cannot be read, or a node of another fabric, refuses
	// the run.
	failed := map[string]bool{}
	for _, r := range reps {
		failed[r.Name] = r.State == HostFailed
	}
	var bad []*plan.DevicePlan
	for _, d := range p.Devices {
		if d.Error != "" && !(d.Driver == DriverName && failed[d.Name]) {
			bad = append(bad, d)
		}
	}
	if len(bad) > 0 {
		return fail(apply.RunRefused, &apply.PlanError{Devices: bad})
	}
	// Releases: outdated and unpublished hosts, and hosts whose current
	// revision the agent failed or never reported (published again with
	// a new attempt marker).
	var rel []Release
	byName := map[string]*intent.Host{}
	for _, hh := range hosts {
		byName[hh.Name] = hh
	}
	runID := apply.NewRunID(time.Now())
	for _, r := range reps {
		if r.State == HostInSync || r.State == HostForeign {
			continue
		}
		raw, rev, err := EncodeIntent(byName[r.Name])
		if err != nil {
			return fail(apply.RunError, err)
		}
		re := Release{Name: r.Name, Intent: raw, Revision: rev, Retry: r.State == HostFailed || r.State == HostPending || r.State == HostDrifted}
		if obj := objs[r.Name]; obj != nil {
			old := obj.Spec
			old.Attempt = ""
			re.Old = &old
		}
		rel = append(rel, re)
	}
	changed := p.HasChanges() || len(rel) > 0
	if !changed {
		return fail(apply.RunNoChanges, nil)
	}
	if h.Confirm != nil && p.HasChanges() {
		ok, err := h.Confirm(ctx, p)
		if err != nil {
			return fail(apply.RunError, err)
		}
		if !ok {
			return fail(apply.RunCancelled, nil)
		}
	}
	out.RunID = runID
	rec, lg, err := openRunLog(o, out, p, hosts, reps, rel)
	if err != nil {
		return fail(apply.RunError, err)
	}
	defer func() {
		if rec != nil {
			if err := rec.Close(); err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("applied record %s not saved: %v (the next plan may misreport drift)", plan.AppliedPath(o.StateDir, o.Fabric.Name), err))
			}
		}
		if lg != nil {
			if err := lg.j.Close(); err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("journal %s is incomplete: %v", out.Journal, err))
			}
		}
	}()
	hostWave, switchWave := 1, 2
	if out.Waves.Order != apply.HostsFirst {
		hostWave, switchWave = 2, 1
	}
	var switchDevs []apply.Device
	units := map[string]plan.Unit{}
	for _, u := range plan.Units(o.Fabric) {
		units[u.Device.Addr()] = u
	}
	for _, dp := range p.Devices {
		if dp.Kind != intent.KindHost && dp.HasChanges() {
			switchDevs = append(switchDevs, apply.Device{Plan: dp, Target: plan.Target(units[dp.Address], o.Plan)})
		} else if dp.Kind != intent.KindHost && dp.Error == "" {
			rec.Verified(dp.Address, dp.Desired) // read by the plan just now: part of the baseline, as with SSH
		}
	}
	if len(switchDevs) == 0 || len(rel) == 0 {
		hostWave, switchWave = 1, 1
	}
	switchesRan := false
	var held *apply.Held // the switch wave's rollback points, until the run's end
	var j *apply.Journal
	if lg != nil {
		lg.wave = hostWave
		j = lg.j
	}
	runSwitches := func() error {
		if len(switchDevs) == 0 {
			return nil
		}
		switchesRan = true
		res, hd, err := apply.RunHeld(ctx, switchDevs, o.Registry, apply.Options{Parallelism: o.Parallelism, OnFailure: o.OnFailure,
			Progress: h.Progress, Fabric: o.Fabric.Name, FabctlVersion: o.Version, SpecHash: p.SpecHash,
			Journal: j, Record: rec, Nested: true, FirstWave: switchWave, Now: o.Now})
		out.Switches, held = res, hd
		return err
	}
	ropts := RolloutOptions{Fabric: o.Fabric.Name, MaxUnavailable: o.MaxUnavailable.Of(len(rel)), Canary: o.Canary,
		OnFailure: o.OnFailure, HostTimeout: o.HostTimeout, Workers: o.Parallelism, RunID: runID,
		Progress: func(e RolloutEvent) {
			lg.event(e)
			if o.Rollout != nil {
				o.Rollout(e)
			}
		},
		Starting: lg.starting}
	runHosts := func() error {
		if len(rel) == 0 {
			return nil
		}
		res, err := Rollout(ctx, o.Clients, tr, rel, ropts)
		for _, ho := range res.Hosts {
			ho.wave = hostWave
		}
		out.Rollout = res
		return err
	}
	first, second := runSwitches, runHosts
	if out.Waves.Order == apply.HostsFirst {
		first, second = runHosts, runSwitches
	}
	end := func(st apply.RunStatus, err error) (*Outcome, error) {
		rollbackWaves(ctx, o, out, held, func() { RollbackHosts(ctx, o.Clients, tr, rel, out.Rollout, ropts) })
		secondWave := max(hostWave, switchWave)
		if switchesRan || len(switchDevs) == 0 {
			out.notRun(nil, rel, hostWave, "not started: "+errText(err))
		} else {
			out.notRun(switchDevs, nil, secondWave, "not started: "+errText(err))
		}
		lg.end(out.Result(), switchesRan, st, err)
		return fail(st, err)
	}
	if err := first(); err != nil {
		return end(statusOf(ctx), err)
	}
	if ctx.Err() != nil {
		return end(apply.RunInterrupted, errors.New("interrupted between the waves: the second wave was not started"))
	}
	if err := lease.Lost(); err != nil {
		return end(apply.RunFailed, err)
	}
	if err := second(); err != nil {
		return end(statusOf(ctx), err)
	}
	return end(apply.RunApplied, nil)
}

// rollbackWaves ends the switch wave's hold on its rollback points.
// Under --on-failure rollback one SSH run rolls back every device it
// applied when one fails, whatever its wave; the Kubernetes engine's two
// waves do the same: a failed host wave (its hosts rolled back by
// Rollout) rolls back the switch wave that ran before it, and a failed
// switch wave (its switches rolled back by apply.Run) has the hosts
// released before it rolled back (rollbackHosts). Otherwise, and after
// an interrupt, the switches' rollback points are released.
func rollbackWaves(ctx context.Context, o ApplyOptions, out *Outcome, held *apply.Held, rollbackHosts func()) {
	if o.OnFailure != apply.Rollback || ctx.Err() != nil {
		held.Release()
		return
	}
	hostsFailed := out.Rollout != nil && out.Rollout.Failed > 0
	switchesFailed := false
	if out.Switches != nil {
		for _, d := range out.Switches.Devices {
			switchesFailed = switchesFailed || d.Status == apply.StatusFailed || d.Status == apply.StatusRolledBack
		}
	}
	switch {
	case hostsFailed:
		held.Rollback()
	case switchesFailed && out.Rollout != nil:
		held.Release()
		rollbackHosts()
	default:
		held.Release()
	}
}

func errText(err error) string {
	if err == nil {
		return "the run ended first"
	}
	return err.Error()
}

// openRunLog opens the fabric's applied record and, for a run with
// changes, its journal, writes run_start and checks the journal can be
// written (nothing is published or applied otherwise). Hosts already
// in sync enter the record, as unchanged devices do with SSH. No state
// directory: neither (nil, nil).
func openRunLog(o ApplyOptions, out *Outcome, p *plan.Plan, hosts []*intent.Host, reps []HostReport, rel []Release) (*apply.Recorder, *runLog, error) {
	if o.StateDir == "" {
		return nil, nil, nil
	}
	rec, err := apply.OpenRecorder(o.StateDir, o.Fabric.Name)
	if err != nil {
		return nil, nil, err
	}
	lg := &runLog{rec: rec, addr: map[string]string{}, desired: map[string]intent.State{}, changes: map[string]int{}}
	for _, h := range hosts {
		lg.addr[h.Name] = h.Addr()
		if dp := p.Device(h.Addr()); dp != nil {
			lg.desired[h.Name] = dp.Desired
		}
	}
	for _, r := range reps {
		lg.changes[r.Name] = len(r.Changes)
		if r.State == HostInSync {
			rec.Verified(lg.addr[r.Name], lg.desired[r.Name])
		}
	}
	path := o.Journal
	if path == "" {
		path = apply.JournalPath(o.StateDir, o.Fabric.Name, out.RunID)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	j, err := apply.CreateJournal(path, out.RunID, o.Now, apply.SecretValues(o.Spec.Credentials, getenv))
	if err != nil {
		rec.Close()
		return nil, nil, err
	}
	lg.j = j
	out.Journal = path
	j.Write(apply.Entry{Event: apply.EventRunStart, FormatVersion: apply.JournalFormatVersion, Fabric: o.Fabric.Name,
		FabctlVersion: o.Version, SpecHash: p.SpecHash, Parallelism: o.Parallelism, OnFailure: string(o.OnFailure),
		Order: string(out.Waves.Order), OrderReason: out.Waves.Reason, Devices: len(p.Devices),
		Engine: DriverName, MaxUnavailable: o.MaxUnavailable.String(), Canary: o.Canary})
	if err := j.Sync(); err != nil {
		j.Close()
		rec.Close()
		out.Journal = ""
		return nil, nil, &apply.JournalError{Path: path, Err: err}
	}
	return rec, lg, nil
}

func statusOf(ctx context.Context) apply.RunStatus {
	if ctx.Err() != nil {
		return apply.RunInterrupted
	}
	return apply.RunFailed
}
