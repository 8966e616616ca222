package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// DriverName is the host driver of --engine kubernetes (plan.Options
// HostDriver): the driver a host's device plan names under this engine.
const DriverName = "kubernetes"

// ReasonTimeout is a released host's failure when its agent did not
// report within the host timeout; ReasonNotPublished one whose object
// could not be written.
const (
	ReasonTimeout      = "Timeout"
	ReasonNotPublished = "NotPublished"
)

// Hosts delivers the hosts of a fabric through the cluster: one
// FabricHostConfig per node, which the node's fabctl agent (agent
// --kube) applies, reads back and reports on. Its Driver is the host
// driver of --engine kubernetes, under the one fabric operation
// (apply.RunFabric): Read reports what each node's agent reported, Apply
// publishes the node's revision, Await waits for its agent's Applied
// condition, Rollback publishes the previous revision again. Waves,
// batches (canary, max-unavailable), the failure budget, the journal and
// the applied record are the engine's, as over SSH.
//
// Hosts lists the fabric's objects once and watches them (Tracker) from
// the first Read on, until Close.
type Hosts struct {
	cl     *Clients
	fabric string
	o      HostsOptions
	runID  string
	sem    chan struct{}

	mu       sync.Mutex
	tr       *Tracker
	ports    map[string][]Overlap // nic-configuration-operator's, by node
	portsErr error
	listed   bool
}

// HostsOptions tune Hosts.
type HostsOptions struct {
	// HostTimeout bounds the wait for a node's agent to report on a
	// revision (default 10m): then the host counts as failed.
	HostTimeout time.Duration
	// Publishers bounds the writes in flight (default 32); how many hosts
	// wait for their agents at once is the engine's batch policy.
	Publishers int
	// Warn reports a problem that does not stop the run (the objects of
	// nic-configuration-operator could not be read).
	Warn func(string)
	Now  func() time.Time
}

// NewHosts returns the delivery of a fabric's hosts through cl.
func NewHosts(cl *Clients, fabric string, o HostsOptions) *Hosts {
	if o.HostTimeout <= 0 {
		o.HostTimeout = 10 * time.Minute
	}
	if o.Publishers <= 0 {
		o.Publishers = 32
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := o.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
	return &Hosts{cl: cl, fabric: fabric, o: o, runID: id, sem: make(chan struct{}, o.Publishers)}
}

// Driver returns a driver for one host (a drivers.Factory).
func (h *Hosts) Driver() drivers.Driver { return &Driver{h: h} }

// Close stops watching the objects.
func (h *Hosts) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tr != nil {
		h.tr.Stop()
		h.tr = nil
	}
}

// tracker lists and watches the fabric's objects, once; it also reads
// nic-configuration-operator's objects, whose failure is only a warning.
func (h *Hosts) tracker(ctx context.Context) (*Tracker, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tr != nil {
		return h.tr, nil
	}
	tr, err := Track(ctx, h.cl, h.fabric)
	if err != nil {
		return nil, err
	}
	h.tr = tr
	if !h.listed {
		h.listed = true
		h.ports, h.portsErr = operatorPorts(ctx, h.cl)
		if h.portsErr != nil && h.o.Warn != nil {
			h.o.Warn(h.portsErr.Error())
		}
	}
	return tr, nil
}

// publish writes a host's spec: a plain create for a new node (cheaper
// than an apply), server-side apply otherwise.
func (h *Hosts) publish(ctx context.Context, name string, sp HostSpec, attempt string, isNew bool) (*FabricHostConfig, error) {
	h.sem <- struct{}{}
	defer func() { <-h.sem }()
	if isNew {
		got, err := create(ctx, h.cl, name, sp)
		if !apierrors.IsAlreadyExists(err) {
			return got, err
		}
		// The fabric's LIST did not have it: it may be another fabric's,
		// which a forced apply would take over.
		if cur, err := getObject(ctx, h.cl, name); err != nil {
			return nil, err
		} else if cur.Spec.Fabric != h.fabric {
			return nil, fmt.Errorf("the node's %s belongs to fabric %s: not published (remove the host from one of the two specs)", Kind, cur.Spec.Fabric)
		}
	}
	return Publish(ctx, h.cl, name, sp, attempt)
}

// errTimeout and errChanged end a wait for a node's agent.
var (
	errTimeout = errors.New("timeout")
	errChanged = errors.New("the object was changed by someone else during the rollout")
)

// wait waits until the node's agent reported on generation gen
// (Applied True, or False with a failure reason), at most HostTimeout
// from start.
func (h *Hosts) wait(ctx context.Context, tr *Tracker, name string, gen int64, start time.Time) (*FabricHostConfig, error) {
	deadline := start.Add(h.o.HostTimeout)
	for {
		changed := tr.Changed(name) // before Get: a change after it wakes us
		obj := tr.Get(name)
		switch {
		case obj != nil && obj.Metadata.Generation == gen && obj.Status.ObservedGeneration >= gen && (obj.AppliedCurrent() || obj.FailedCurrent()):
			return obj, nil
		case obj != nil && obj.Metadata.Generation > gen:
			return obj, errChanged
		}
		left := deadline.Sub(h.o.Now())
		if left <= 0 {
			return obj, errTimeout
		}
		t := time.NewTimer(left)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return obj, ctx.Err()
		}
		t.Stop()
	}
}

// Driver is the Kubernetes engine's host driver for one host (a new one
// per device and run, as the engine builds them): it remembers what it
// published, for Await, Rollback and the journal.
type Driver struct {
	h   *Hosts
	tr  *Tracker
	rep HostReport
	ovl []Overlap
	del drivers.Delivery
	old *HostSpec // the spec this run's publish replaced (nil: a new object)
	gen int64     // the generation this run's publish stored
	at  time.Time // when it was stored
}

var (
	_ drivers.Driver       = (*Driver)(nil)
	_ drivers.Reporter     = (*Driver)(nil)
	_ drivers.AgentApplier = (*Driver)(nil)
)

// Name is "kubernetes".
func (d *Driver) Name() string { return DriverName }

// Capabilities: the previous revision can be published again.
func (d *Driver) Capabilities() drivers.Capabilities { return drivers.Capabilities{Rollback: true} }

// Fields: none. The states compared are intents, exactly (the agent
// applies the host driver's tolerances on the node).
func (d *Driver) Fields() []intent.Field { return nil }

func hostOf(t drivers.Target) (*intent.Host, error) {
	h, ok := t.Intent.(*intent.Host)
	if !ok || h == nil {
		return nil, fmt.Errorf("%s: the %s driver needs a host intent, got %T", t.Device.Name, DriverName, t.Intent)
	}
	return h, nil
}

// Read reports the host's state as its node's agent reported it, from
// the object alone (no SSH): the published intent's settings once its
// agent applied them (with what the agent's DCB watch saw drift), the
// published settings of an older revision, and none where the agent
// confirmed nothing: no object yet, or a revision it has not reported on
// (pending: an info finding). A revision the agent failed is a
// *drivers.UnconfirmedError (plan fails on it, apply publishes it
// again); a node whose object belongs to another fabric an error.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	tr, err := d.h.tracker(ctx)
	if err != nil {
		return nil, err
	}
	d.tr = tr
	_, rev, err := EncodeIntent(h)
	if err != nil {
		return nil, err
	}
	obj := tr.Get(h.Name)
	d.rep = Report(h, rev, d.h.fabric, obj)
	d.ovl = Overlaps(h, d.h.ports)
	switch d.rep.State {
	case HostForeign:
		return nil, errors.New(d.rep.Message)
	case HostFailed:
		return nil, &drivers.UnconfirmedError{Err: fmt.Errorf("the node's agent reports Applied=False (%s): %s", d.rep.Reason, d.rep.Message)}
	case HostInSync:
		return h.Flatten(), nil
	case HostDrifted:
		st := h.Flatten()
		for _, x := range obj.Status.Drift {
			st[x.Path] = x.Live
		}
		return st, nil
	case HostOutdated:
		if old, err := DecodeIntent(obj.Spec.Intent); err == nil {
			return old.Flatten(), nil
		}
	}
	return intent.State{}, nil
}

// Findings: a revision the agent has not reported on (info), and NICs
// nic-configuration-operator also manages (a warning that blocks apply).
func (d *Driver) Findings(drivers.Target) []drivers.Finding {
	var out []drivers.Finding
	if d.rep.State == HostPending {
		out = append(out, drivers.Finding{Severity: "info",
			Message: fmt.Sprintf("revision %s is published; the node's agent has not reported it yet (apply publishes it again)", d.rep.Published)})
	}
	for _, x := range d.ovl {
		out = append(out, drivers.Finding{Severity: "warning", Path: "nic/" + x.NIC, Message: x.Message, BlocksApply: true})
	}
	return out
}

// Changes is one step: publish the revision.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	_, rev, err := EncodeIntent(h)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(diff))
	for i, c := range diff {
		paths[i] = c.Path
	}
	return []drivers.Change{{Paths: paths, Summary: fmt.Sprintf("publish revision %s of %s/%s for the node's agent", rev, Kind, h.Name),
		Payload: []string{fmt.Sprintf("server-side apply %s/%s spec.revision=%s (field manager %s)", Resource, h.Name, rev, FieldManager)}}}, nil
}

// Delivery is what this driver publishes (before Apply), published, and
// what the agent reported.
func (d *Driver) Delivery(t drivers.Target) drivers.Delivery {
	if d.del.Revision == "" {
		if h, err := hostOf(t); err == nil {
			_, d.del.Revision, _ = EncodeIntent(h)
			if tr, err := d.h.tracker(context.Background()); err == nil {
				if obj := tr.Get(h.Name); obj != nil {
					d.del.PreviousRevision = obj.Spec.Revision
				}
			}
		}
	}
	return d.del
}

// Apply publishes the host's revision: a new object, or server-side
// apply over the node's object (with a new spec.attempt when the
// revision is the published one: its agent failed it, has not reported
// it, or drifted from it since). It does not wait: Await does.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, _ []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	h, err := hostOf(t)
	if err != nil {
		return drivers.Result{}, err
	}
	raw, rev, err := EncodeIntent(h)
	if err != nil {
		return drivers.Result{}, err
	}
	tr, err := d.h.tracker(ctx)
	if err != nil {
		return drivers.Result{}, err
	}
	d.tr = tr
	obj := tr.Get(h.Name)
	d.del, d.old = drivers.Delivery{Revision: rev}, nil
	attempt := ""
	if obj != nil {
		old := obj.Spec
		old.Attempt = ""
		d.old, d.del.PreviousRevision = &old, old.Revision
		if old.Revision == rev {
			attempt = d.h.runID
		}
	}
	got, err := d.h.publish(ctx, h.Name, HostSpec{Fabric: d.h.fabric, Protocol: Protocol, Revision: rev, Intent: raw}, attempt, obj == nil)
	if err != nil {
		d.del.Reason = ReasonNotPublished
		return drivers.Result{}, err
	}
	tr.Set(got)
	d.gen, d.at = got.Metadata.Generation, d.h.o.Now()
	d.del.Generation = d.gen
	return drivers.Result{}, nil
}

// Await waits for the node's agent to report on the published
// generation: nil when it applied and verified it; its failure
// (restored unless its reason is NotRestored) or, after the host
// timeout, a failure whose state is not known.
func (d *Driver) Await(ctx context.Context, t drivers.Target, _ drivers.Result) error {
	if d.gen == 0 {
		return &drivers.AgentError{Message: "nothing was published", Restored: true}
	}
	obj, err := d.h.wait(ctx, d.tr, t.Device.Name, d.gen, d.at)
	if obj != nil && obj.Metadata.Generation == d.gen {
		d.del.ObservedGeneration = obj.Status.ObservedGeneration
	}
	switch {
	case errors.Is(err, errTimeout):
		d.del.Reason = ReasonTimeout
		return &drivers.AgentError{Reason: ReasonTimeout, Message: timeoutMessage(d.h.o.HostTimeout, t.Device.Name, d.tr.FailedSince(d.at))}
	case errors.Is(err, errChanged):
		return &drivers.AgentError{Message: err.Error(), Restored: true}
	case err != nil:
		return &drivers.AgentError{Message: "interrupted while waiting for the node's agent: " + err.Error()}
	}
	c := obj.Status.Cond(CondApplied)
	d.del.Reason = c.Reason
	if obj.AppliedCurrent() {
		return nil
	}
	ae := &drivers.AgentError{Reason: c.Reason, Message: c.Message, Restored: c.Reason != ReasonPartial}
	if !ae.Restored {
		return &drivers.PartialError{Device: t.Device.Name, Err: ae}
	}
	return ae
}

// Confirm: nothing to confirm (Await did).
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback publishes again the spec this run's publish replaced (a new
// generation, spec.attempt <id>-rollback) and waits for the node's
// agent to apply it. A node that had no object before this run has no
// previous revision: it keeps this run's.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, _ drivers.Result) error {
	name := t.Device.Name
	switch {
	case d.gen == 0:
		return errors.New("this run published nothing to roll back")
	case d.old == nil:
		return fmt.Errorf("the node had no %s before this run: there is no previous revision to publish again", Kind)
	}
	got, err := d.h.publish(ctx, name, *d.old, d.h.runID+"-rollback", false)
	if err != nil {
		return fmt.Errorf("previous revision not published: %w", err)
	}
	d.tr.Set(got)
	start := d.h.o.Now()
	d.del = drivers.Delivery{Revision: d.old.Revision, PreviousRevision: d.del.Revision, Generation: got.Metadata.Generation}
	obj, err := d.h.wait(ctx, d.tr, name, got.Metadata.Generation, start)
	if obj != nil && obj.Metadata.Generation == got.Metadata.Generation {
		d.del.ObservedGeneration = obj.Status.ObservedGeneration
	}
	switch {
	case errors.Is(err, errTimeout):
		return fmt.Errorf("not confirmed: the node's agent did not report generation %d within %s", got.Metadata.Generation, d.h.o.HostTimeout)
	case err != nil:
		return fmt.Errorf("not confirmed: %v", err)
	}
	c := obj.Status.Cond(CondApplied)
	d.del.Reason = c.Reason
	if !obj.AppliedCurrent() {
		return fmt.Errorf("the node's agent failed the previous revision (%s): %s", c.Reason, c.Message)
	}
	return nil
}

// Start lists the fabric's objects and starts watching them (and reads
// nic-configuration-operator's); the first Read does it otherwise. An
// API server that cannot be reached fails here, once, rather than in
// every host's plan.
func (h *Hosts) Start(ctx context.Context) error {
	_, err := h.tracker(ctx)
	return err
}
