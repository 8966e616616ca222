package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
)

// MaxUnavailable is --max-unavailable: a count, or a percentage of the
// hosts in the rollout (rounded up, at least 1), as a DaemonSet's.
type MaxUnavailable struct {
	N       int
	Percent bool
}

// ParseMaxUnavailable reads "N" or "P%".
func ParseMaxUnavailable(s string) (MaxUnavailable, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 100 {
			return MaxUnavailable{}, fmt.Errorf("invalid --max-unavailable %q: want a count (2) or a percentage from 1%% to 100%% (10%%)", s)
		}
		return MaxUnavailable{N: n, Percent: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return MaxUnavailable{}, fmt.Errorf("invalid --max-unavailable %q: want a count of at least 1 (2) or a percentage (10%%)", s)
	}
	return MaxUnavailable{N: n}, nil
}

// Of is the count for a rollout of total hosts.
func (m MaxUnavailable) Of(total int) int {
	if !m.Percent {
		return m.N
	}
	return max(1, int(math.Ceil(float64(total)*float64(m.N)/100)))
}

func (m MaxUnavailable) String() string {
	if m.Percent {
		return strconv.Itoa(m.N) + "%"
	}
	return strconv.Itoa(m.N)
}

// Release is one host to publish.
type Release struct {
	Name     string
	Intent   json.RawMessage
	Revision string
	// Old is the spec the host had before this run (nil: new object),
	// what --on-failure=rollback publishes again.
	Old *HostSpec
	// Retry: the revision is already published but the agent failed it or
	// has not reported it; publish it again with a new attempt marker.
	Retry bool
}

// RolloutOptions tune Rollout.
type RolloutOptions struct {
	Fabric string
	// MaxUnavailable bounds the hosts released but not yet Applied at
	// any time.
	MaxUnavailable int
	// Canary hosts go first, alone; the rest is released only when they
	// all applied (0: no canary).
	Canary int
	// OnFailure: stop (a failure budget of 0: release nothing more after
	// the first failed host, let those in flight finish), continue (no
	// budget), rollback (stop, then publish again the previous spec of
	// every host this run released).
	OnFailure apply.Policy
	// HostTimeout is how long a released host may take to report (its
	// agent may be missing): then it counts as failed.
	HostTimeout time.Duration
	// Workers publish objects in parallel (default 32).
	Workers int
	// RunID marks retried objects (spec.attempt).
	RunID string
	// Progress is told about every host event (calls serialised).
	Progress func(RolloutEvent)
	// Starting is called before a host is published (batch 1 = canary);
	// an error leaves the host unpublished and releases nothing more
	// (the journal's device_start could not be written).
	Starting func(r Release, batch int) error
	Now      func() time.Time
}

// RolloutEvent is one step of a host in a rollout.
type RolloutEvent struct {
	Host     string
	Phase    string // released | applied | unchanged | failed | rolled_back | rollback_failed
	InFlight int
	Message  string
	// Outcome is the host's outcome as of this event; for rolled_back,
	// Revision is the previous revision published again and Generation
	// the generation that publish stored.
	Outcome HostOutcome
}

// HostOutcome is how a host's rollout ended.
type HostOutcome struct {
	Name       string        `json:"name"`
	Status     apply.Status  `json:"status"`
	Reason     string        `json:"reason,omitempty"`
	Message    string        `json:"message,omitempty"`
	Revision   string        `json:"revision"`
	Generation int64         `json:"generation,omitempty"`
	Changes    int           `json:"changes"`
	Batch      int           `json:"batch,omitempty"` // 1 = canary
	Duration   time.Duration `json:"-"`

	// ObservedGeneration is the generation the node's agent reported on.
	ObservedGeneration int64 `json:"observed_generation,omitempty"`
	wave               int   // the run's wave of hosts (1 or 2)
}

// RolloutResult is what Rollout did.
type RolloutResult struct {
	Hosts []*HostOutcome `json:"hosts"`
	// MaxInFlight is the most hosts released but not yet reported at once.
	MaxInFlight int  `json:"max_in_flight"`
	Stopped     bool `json:"stopped,omitempty"` // the failure budget was spent
	Failed      int  `json:"failed"`
	Applied     int  `json:"applied"`
	Started     time.Time
	Finished    time.Time
}

// Publish writes one host's spec with server-side apply (field manager
// fabctl) and returns the object as stored.
func Publish(ctx context.Context, cl *Clients, name string, sp HostSpec, attempt string) (*FabricHostConfig, error) {
	sp.Attempt = attempt
	b, err := objectBody(name, sp)
	if err != nil {
		return nil, err
	}
	backoff := 200 * time.Millisecond
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		raw, err := cl.REST.Patch(types.ApplyPatchType).AbsPath(objectPath(name)).
			Param("fieldManager", FieldManager).Param("force", "true").Body(b).Do(ctx).Raw()
		if err == nil {
			return decodeObject(name, raw)
		}
		// An apiserver or etcd outage (no API status, 5xx, 429) is waited
		// out, and so is a 403 for 20 s (an apiserver that just restarted
		// refuses until its authorizer caught up); a 422 or 404 is final.
		retry := transient(err) || apierrors.IsForbidden(err) && time.Since(start) < 20*time.Second
		if !retry || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("publishing %s %s: %w", Kind, name, err)
		}
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// objectPath is the API path of the FabricHostConfig named name ("" for
// the collection).
func objectPath(name string) string {
	p := "/apis/" + Group + "/" + Version + "/" + Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

// objectBody is the JSON of an object as the publisher writes it
// (create, or server-side apply's configuration): apiVersion, kind, the
// name and the spec, with spec.hold written even when false (fabctl owns
// it: releasing is an explicit false). The publisher writes these bytes
// and reads the answer into FabricHostConfig directly: the dynamic
// client's unstructured maps cost two more JSON passes each way, for
// every host (measured: kube.create was 13% of the bench's CPU).
func objectBody(name string, sp HostSpec) ([]byte, error) {
	type spec struct {
		HostSpec
		Hold bool `json:"hold"` // shadows HostSpec's omitempty Hold
	}
	return json.Marshal(struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Spec       spec              `json:"spec"`
	}{Group + "/" + Version, Kind, map[string]string{"name": name}, spec{sp, sp.Hold}})
}

// decodeObject reads the apiserver's answer.
func decodeObject(name string, raw []byte) (*FabricHostConfig, error) {
	var o FabricHostConfig
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("%s %s: the apiserver's answer: %w", Kind, name, err)
	}
	return &o, nil
}

// transient reports an error worth retrying: no answer from the server,
// or an answer that says "later".
func transient(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true // connection refused or reset, timeout: no API status
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}

// create publishes a host's first spec with a plain create (field
// manager fabctl); later publishes use server-side apply with the same
// manager.
func create(ctx context.Context, cl *Clients, name string, sp HostSpec) (*FabricHostConfig, error) {
	b, err := objectBody(name, sp)
	if err != nil {
		return nil, err
	}
	backoff := 200 * time.Millisecond
	start := time.Now()
	for {
		raw, err := cl.REST.Post().AbsPath(objectPath("")).Param("fieldManager", FieldManager).Body(b).Do(ctx).Raw()
		if err == nil {
			return decodeObject(name, raw)
		}
		if !transient(err) || time.Since(start) > 2*time.Minute || ctx.Err() != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, err
			}
			return nil, fmt.Errorf("publishing %s %s: %w", Kind, name, err)
		}
		sleepCtx(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// Rollout publishes the releases in batches and waits for each host's
// agent to report its generation: never more than MaxUnavailable hosts
// released and not yet reported, the canary first, and no new release
// once the failure budget is spent.
func Rollout(ctx context.Context, cl *Clients, tr *Tracker, rel []Release, o RolloutOptions) (*RolloutResult, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.MaxUnavailable < 1 {
		o.MaxUnavailable = 1
	}
	if o.HostTimeout <= 0 {
		o.HostTimeout = 10 * time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	res := &RolloutResult{Started: now()}
	outs := make(map[string]*HostOutcome, len(rel))
	for _, r := range rel {
		h := &HostOutcome{Name: r.Name, Status: apply.StatusNotAttempted, Revision: r.Revision}
		outs[r.Name] = h
		res.Hosts = append(res.Hosts, h)
	}
	var mu sync.Mutex
	emit := func(e RolloutEvent) {
		if o.Progress != nil {
			o.Progress(e)
		}
	}
	type flight struct {
		r     Release
		gen   int64
		start time.Time
	}
	inflight := map[string]*flight{}
	budgetSpent := func() bool {
		switch o.OnFailure {
		case apply.Continue:
			return false
		}
		return res.Failed > 0
	}
	next := 0
	batch := 0
	// release publishes up to n hosts in parallel.
	release := func(n int) error {
		todo := rel[next:min(next+n, len(rel))]
		next += len(todo)
		sem := make(chan struct{}, o.Workers)
		var wg sync.WaitGroup
		var firstErr error
		for _, r := range todo {
			wg.Add(1)
			sem <- struct{}{}
			go func(r Release) {
				defer wg.Done()
				defer func() { <-sem }()
				if o.Starting != nil {
					if err := o.Starting(r, batch); err != nil {
						mu.Lock()
						defer mu.Unlock()
						outs[r.Name].Message = "not started: " + err.Error()
						if firstErr == nil {
							firstErr = err
						}
						return
					}
				}
				attempt := ""
				if r.Retry {
					attempt = o.RunID
				}
				sp := HostSpec{Fabric: o.Fabric, Protocol: Protocol, Revision: r.Revision, Intent: r.Intent}
				var got *FabricHostConfig
				var err error
				if r.Old == nil {
					got, err = create(ctx, cl, r.Name, sp) // a new node: a plain create is cheaper than an apply
				}
				if r.Old != nil || apierrors.IsAlreadyExists(err) {
					got, err = Publish(ctx, cl, r.Name, sp, attempt)
				}
				mu.Lock()
				defer mu.Unlock()
				h := outs[r.Name]
				h.Batch = batch
				if err != nil {
					h.Status, h.Message = apply.StatusFailed, err.Error()
					res.Failed++
					if firstErr == nil && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err)) {
						firstErr = err
					}
					emit(RolloutEvent{Host: r.Name, Phase: "failed", InFlight: len(inflight), Message: err.Error(), Outcome: *h})
					return
				}
				tr.Set(got)
				h.Generation = got.Metadata.Generation
				inflight[r.Name] = &flight{r: r, gen: got.Metadata.Generation, start: now()}
				res.MaxInFlight = max(res.MaxInFlight, len(inflight))
				emit(RolloutEvent{Host: r.Name, Phase: "released", InFlight: len(inflight), Outcome: *h})
			}(r)
		}
		wg.Wait()
		return firstErr
	}
	// settle moves reported hosts out of flight.
	settle := func() {
		mu.Lock()
		defer mu.Unlock()
		for name, f := range inflight {
			obj := tr.Get(name)
			h := outs[name]
			done := false
			if obj != nil && obj.Metadata.Generation == f.gen && obj.Status.ObservedGeneration >= f.gen {
				c := obj.Status.Cond(CondApplied)
				switch {
				case obj.AppliedCurrent():
					h.Status, h.Changes = apply.StatusApplied, obj.Status.Changes
					if obj.Status.Changes == 0 {
						h.Status = apply.StatusUnchanged
					}
					res.Applied++
					done = true
				case obj.FailedCurrent():
					h.Status = apply.StatusFailed
					res.Failed++
					done = true
				}
				if done && c != nil {
					h.Reason, h.Message = c.Reason, c.Message
				}
			} else if obj != nil && obj.Metadata.Generation > f.gen {
				h.Status, h.Message = apply.StatusFailed, "the object was changed by someone else during the rollout"
				res.Failed++
				done = true
			}
			if !done && now().Sub(f.start) > o.HostTimeout {
				h.Status, h.Reason = apply.StatusFailed, ReasonTimeout
				h.Message = timeoutMessage(o.HostTimeout, name, tr.FailedSince(f.start))
				res.Failed++
				done = true
			}
			if done {
				h.Duration = now().Sub(f.start)
				if obj != nil {
					h.ObservedGeneration = obj.Status.ObservedGeneration
				}
				delete(inflight, name)
				emit(RolloutEvent{Host: name, Phase: string(h.Status), InFlight: len(inflight), Message: h.Message, Outcome: *h})
			}
		}
	}
	var fatal error
	canaryN := min(o.Canary, o.MaxUnavailable, len(rel))
	batch = 0
	for {
		settle()
		mu.Lock()
		nIn := len(inflight)
		free := o.MaxUnavailable - nIn
		spent := budgetSpent()
		mu.Unlock()
		stopping := ctx.Err() != nil || fatal != nil || spent
		if !stopping && next < len(rel) {
			canaryDone := canaryN == 0 || next > canaryN || next == canaryN && nIn == 0
			if next == 0 && canaryN > 0 {
				batch = 1
				fatal = release(canaryN)
				continue
			}
			if canaryDone && free > 0 {
				batch++
				fatal = release(free)
				continue
			}
		} else if nIn == 0 {
			break
		}
		done := ctx.Done()
		if ctx.Err() != nil {
			done = nil // stopping: wait for the hosts in flight
		}
		select {
		case <-tr.Changed():
		case <-time.After(250 * time.Millisecond):
		case <-done:
		}
	}
	res.Stopped = budgetSpent() && next < len(rel)
	if o.OnFailure == apply.Rollback && res.Failed > 0 && ctx.Err() == nil {
		rollback(ctx, cl, tr, rel, outs, o, emit)
	}
	res.Finished = now()
	sort.Slice(res.Hosts, func(i, j int) bool { return res.Hosts[i].Name < res.Hosts[j].Name })
	if fatal != nil {
		return res, fatal
	}
	if res.Failed > 0 {
		return res, fmt.Errorf("%d host(s) failed", res.Failed)
	}
	if ctx.Err() != nil {
		return res, errors.New("interrupted: hosts in flight finished, no new host was released")
	}
	return res, nil
}

// RollbackHosts publishes again the previous spec of every host a
// finished rollout released (res: its result) and waits for their
// agents, as Rollout does under --on-failure rollback when one of its
// hosts fails: the Kubernetes engine calls it when the switch wave that
// followed the hosts failed. Each host's outcome in res becomes
// rolled_back, or keeps its status with why the rollback failed.
func RollbackHosts(ctx context.Context, cl *Clients, tr *Tracker, rel []Release, res *RolloutResult, o RolloutOptions) {
	if o.HostTimeout <= 0 {
		o.HostTimeout = 10 * time.Minute
	}
	outs := make(map[string]*HostOutcome, len(res.Hosts))
	for _, h := range res.Hosts {
		outs[h.Name] = h
	}
	var mine []Release
	for _, r := range rel {
		if outs[r.Name] != nil {
			mine = append(mine, r)
		}
	}
	rollback(ctx, cl, tr, mine, outs, o, func(e RolloutEvent) {
		if o.Progress != nil {
			o.Progress(e)
		}
	})
}

// rollback publishes again the previous spec of every host this run
// released (applied or failed), and waits for their agents.
func rollback(ctx context.Context, cl *Clients, tr *Tracker, rel []Release, outs map[string]*HostOutcome, o RolloutOptions, emit func(RolloutEvent)) {
	type back struct {
		name string
		gen  int64
	}
	var pending []back
	for _, r := range rel {
		h := outs[r.Name]
		if h.Status == apply.StatusNotAttempted || r.Old == nil {
			continue
		}
		got, err := Publish(ctx, cl, r.Name, *r.Old, o.RunID+"-rollback")
		if err != nil {
			h.Message += "; rollback not published: " + err.Error()
			emit(RolloutEvent{Host: r.Name, Phase: "rollback_failed", Message: "rollback not published: " + err.Error(),
				Outcome: HostOutcome{Name: r.Name, Status: h.Status, Revision: r.Old.Revision}})
			continue
		}
		tr.Set(got)
		pending = append(pending, back{r.Name, got.Metadata.Generation})
	}
	deadline := time.Now().Add(o.HostTimeout)
	for len(pending) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		rest := pending[:0]
		for _, p := range pending {
			obj := tr.Get(p.name)
			if obj != nil && obj.Status.ObservedGeneration >= p.gen && (obj.AppliedCurrent() || obj.FailedCurrent()) {
				h := outs[p.name]
				back := HostOutcome{Name: p.name, Status: h.Status, Revision: obj.Spec.Revision, Generation: p.gen,
					ObservedGeneration: obj.Status.ObservedGeneration, Reason: obj.Status.Cond(CondApplied).Reason}
				if obj.AppliedCurrent() {
					h.Status = apply.StatusRolledBack
					back.Status = h.Status
					emit(RolloutEvent{Host: p.name, Phase: "rolled_back", Outcome: back})
				} else {
					h.Message += "; rollback failed: " + obj.Status.Cond(CondApplied).Message
					emit(RolloutEvent{Host: p.name, Phase: "rollback_failed", Message: "rollback failed: " + obj.Status.Cond(CondApplied).Message, Outcome: back})
				}
				continue
			}
			rest = append(rest, p)
		}
		pending = rest
		select {
		case <-tr.Changed():
		case <-time.After(250 * time.Millisecond):
		}
	}
	for _, p := range pending {
		h := outs[p.name]
		msg := fmt.Sprintf("rollback not confirmed: the node's agent did not report generation %d within %s", p.gen, o.HostTimeout)
		if ctx.Err() != nil {
			msg = "rollback not confirmed: interrupted while waiting for the node's agent"
		}
		h.Message += "; " + msg
		emit(RolloutEvent{Host: p.name, Phase: "rollback_failed", Message: msg, Outcome: HostOutcome{Name: p.name, Status: h.Status, Generation: p.gen}})
	}
}

// changesOf flattens the difference of two published intents.
func changesOf(old json.RawMessage, h *intent.Host) []intent.AttrChange {
	var oh *intent.Host
	if len(old) > 0 {
		oh, _ = DecodeIntent(old)
	}
	return changesFrom(oh, h)
}

// timeoutMessage says why a released host counts as failed: no report
// in time; when the API server failed meanwhile (apiErr), that first, as
// the agent may have been unable to report.
func timeoutMessage(timeout time.Duration, node string, apiErr error) string {
	if apiErr != nil {
		return fmt.Sprintf("no report from the node's agent within %s, and the API server failed meanwhile (%v): the agent may not have been able to report; check the API server and etcd, then see the node's state with fabctl plan --engine kubernetes", timeout, apiErr)
	}
	return fmt.Sprintf("no report from the node's agent within %s: is the fabctl-agent DaemonSet running on node %s?", timeout, node)
}
