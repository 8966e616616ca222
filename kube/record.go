package kube

import (
	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
)

// runLog writes a Kubernetes-engine run into the SSH engine's journal
// (apply.Journal, format 1.0) and applied record (apply.Recorder), so
// that audit, drift and the record read the same files whatever the
// engine (docs/apply.md "The journal", docs/kubernetes.md "Journal and
// applied record"). A host's events:
//
//	device_start       before its object is published (written and
//	                   synced first: a host is published only once the
//	                   journal holds its start): revision, previous_revision,
//	                   changes, wave, batch
//	device_applied     the publish stored the object: revision, generation
//	device_verified    its agent reported Applied=True for that generation:
//	                   observed_generation, reason (Applied, Unchanged);
//	                   the host enters the applied record
//	device_failed      Applied=False (reason, error), no report within
//	                   --host-timeout (reason Timeout), or the publish
//	                   failed; restored as apply.DeviceResult says
//	device_rolled_back --on-failure rollback published the previous
//	                   revision again and the agent applied it; the
//	                   record's entry goes back to what it was
//	device_rollback_failed, device_skipped as with SSH
//
// A nil *runLog records nothing.
type runLog struct {
	j       *apply.Journal
	rec     *apply.Recorder
	addr    map[string]string       // host name -> device address (host.NAME)
	desired map[string]intent.State // host name -> the compiled state recorded once verified
	changes map[string]int
	wave    int
}

// starting writes a host's device_start and waits until it is written.
func (l *runLog) starting(r Release, batch int) error {
	if l == nil {
		return nil
	}
	e := apply.Entry{Event: apply.EventDeviceStart, Device: l.addr[r.Name], Wave: l.wave, Changes: l.changes[r.Name],
		Revision: r.Revision, Batch: batch}
	if r.Old != nil {
		e.PreviousRevision = r.Old.Revision
	}
	if err := l.j.WriteSync(e); err != nil {
		return &apply.JournalError{Path: l.j.Path(), Err: err}
	}
	return nil
}

// event journals one rollout event and keeps the record.
func (l *runLog) event(ev RolloutEvent) {
	if l == nil {
		return
	}
	h := ev.Outcome
	addr := l.addr[ev.Host]
	dur := h.Duration.Milliseconds()
	switch ev.Phase {
	case "released":
		l.j.Write(apply.Entry{Event: apply.EventDeviceApplied, Device: addr, Revision: h.Revision, Generation: h.Generation, Batch: h.Batch})
	case string(apply.StatusApplied), string(apply.StatusUnchanged):
		l.rec.Verified(addr, l.desired[ev.Host])
		l.j.Write(apply.Entry{Event: apply.EventDeviceVerified, Device: addr, Revision: h.Revision, Generation: h.Generation,
			ObservedGeneration: h.ObservedGeneration, Reason: h.Reason, DurationMS: &dur})
	case string(apply.StatusFailed):
		restored := h.Restored()
		reason := h.Reason
		if reason == "" && h.Generation == 0 {
			reason = "NotPublished"
		}
		e := apply.Entry{Event: apply.EventDeviceFailed, Device: addr, Error: h.Message, Reason: reason, Restored: &restored,
			Partial: h.Reason == ReasonPartial, Revision: h.Revision, Generation: h.Generation, ObservedGeneration: h.ObservedGeneration}
		if h.Generation != 0 {
			e.DurationMS = &dur
		}
		l.j.Write(e)
	case "rolled_back":
		l.rec.Revert(addr)
		l.j.Write(apply.Entry{Event: apply.EventRolledBack, Device: addr, Revision: h.Revision, Generation: h.Generation,
			ObservedGeneration: h.ObservedGeneration, Reason: h.Reason})
	case "rollback_failed":
		l.j.Write(apply.Entry{Event: apply.EventRollbackFailed, Device: addr, Error: ev.Message, Revision: h.Revision, Generation: h.Generation,
			ObservedGeneration: h.ObservedGeneration})
	}
}

// Restored reports whether a failed host is known to be at its state
// before the publish: its agent restored it (every failure reason but
// NotRestored), or it was never published. A host whose agent never
// reported (Timeout) is in an unknown state: not restored.
func (h *HostOutcome) Restored() bool {
	switch h.Reason {
	case ReasonPartial, ReasonTimeout:
		return false
	}
	return true
}

// ReasonTimeout is a released host's failure when its agent did not
// report within --host-timeout.
const ReasonTimeout = "Timeout"

// Result is the run's outcome in apply's shape: the switches' device
// results and one per host to change (the engine's per-device table,
// counts and journal run_end).
func (o *Outcome) Result() *apply.Result {
	if o.Switches == nil && o.Rollout == nil {
		return nil
	}
	res := &apply.Result{Order: o.Waves.Order, OrderReason: o.Waves.Reason, Conflict: o.Waves.Conflict, RunID: o.RunID}
	if o.Switches != nil {
		res.Devices = append(res.Devices, o.Switches.Devices...)
		res.Stale, res.Unreachable, res.Interrupted = o.Switches.Stale, o.Switches.Unreachable, o.Switches.Interrupted
	}
	if o.Rollout != nil {
		for _, h := range o.Rollout.Hosts {
			dr := &apply.DeviceResult{Address: "host." + h.Name, Kind: intent.KindHost, Name: h.Name, Status: h.Status, Changes: h.Changes,
				Wave: h.wave, Error: h.Message, Restored: h.Restored(), Partial: h.Reason == ReasonPartial}
			switch h.Status {
			case apply.StatusNotAttempted:
				dr.Reason, dr.Error = h.Message, ""
				if dr.Reason == "" {
					dr.Reason = "the failure budget (--on-failure) was spent before this host was released"
				}
			case apply.StatusApplied, apply.StatusUnchanged:
				dr.Error = ""
			}
			res.Devices = append(res.Devices, dr)
		}
	}
	res.Counts = apply.CountResults(res.Devices)
	return res
}

// notRun fills the outcome of a wave that never started (the first one
// failed or was interrupted): its devices are not attempted, with why.
func (o *Outcome) notRun(switches []apply.Device, rel []Release, wave int, why string) {
	if o.Switches == nil && len(switches) > 0 {
		o.Switches = &apply.Result{}
		for _, d := range switches {
			o.Switches.Devices = append(o.Switches.Devices, &apply.DeviceResult{Address: d.Plan.Address, Kind: d.Plan.Kind, Name: d.Plan.Name,
				Status: apply.StatusNotAttempted, Wave: wave, Changes: len(d.Plan.Changes), Reason: why, Restored: true})
		}
	}
	if o.Rollout == nil && len(rel) > 0 {
		o.Rollout = &RolloutResult{}
		for _, r := range rel {
			o.Rollout.Hosts = append(o.Rollout.Hosts, &HostOutcome{Name: r.Name, Status: apply.StatusNotAttempted, Revision: r.Revision,
				Message: why, wave: wave})
		}
	}
}

// end writes the not-attempted hosts, and the switches of a switch wave
// that never started (device_skipped; apply.Run journals those of a
// wave it ran), and run_end.
func (l *runLog) end(res *apply.Result, switchesRan bool, status apply.RunStatus, err error) {
	if l == nil {
		return
	}
	var c apply.Counts
	if res != nil {
		for _, dr := range res.Devices {
			if dr.Status == apply.StatusNotAttempted && (dr.Kind == intent.KindHost || !switchesRan) {
				l.j.Write(apply.Entry{Event: apply.EventSkipped, Device: dr.Address, Wave: dr.Wave, Reason: dr.Reason})
			}
		}
		c = res.Counts
	}
	st := "ok"
	switch status {
	case apply.RunApplied, apply.RunNoChanges:
	case apply.RunRefused:
		st = "refused"
	default:
		st = "failed"
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	l.j.Write(apply.Entry{Event: apply.EventRunEnd, Status: st, Counts: &c, Error: msg})
}
