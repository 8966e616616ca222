package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/fabctl/fabctl/intent"
)

// ListPage is the page size of fabctl's paginated LISTs.
const ListPage = 500

// ListFabric lists every FabricHostConfig of a fabric (field selector
// spec.fabric, paginated) and returns them by name with the list's
// resource version. The pages are read into FabricHostConfig directly
// (no unstructured maps: decodeObject).
func ListFabric(ctx context.Context, cl *Clients, fabric string) (map[string]*FabricHostConfig, string, error) {
	out := map[string]*FabricHostConfig{}
	cont := ""
	for {
		req := cl.REST.Get().AbsPath(objectPath("")).Param("fieldSelector", "spec.fabric="+fabric).Param("limit", strconv.Itoa(ListPage))
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := result(req.Do(ctx))
		if err != nil {
			return nil, "", fmt.Errorf("listing %s of fabric %s: %w", Resource, fabric, err)
		}
		var l struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
				Continue        string `json:"continue"`
			} `json:"metadata"`
			Items []*FabricHostConfig `json:"items"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, "", fmt.Errorf("listing %s of fabric %s: the apiserver's answer: %w", Resource, fabric, err)
		}
		for _, o := range l.Items {
			out[o.Metadata.Name] = o
		}
		if l.Metadata.Continue == "" {
			return out, l.Metadata.ResourceVersion, nil
		}
		cont = l.Metadata.Continue
	}
}

// Tracker keeps a fabric's objects current: a paginated LIST, then a
// WATCH from its resource version, listing again after a watch error.
type Tracker struct {
	cl     *Clients
	fabric string
	mu     sync.Mutex
	objs   map[string]*FabricHostConfig
	// waiting holds, per object name, the channel Changed handed out,
	// closed at that object's next change: thousands of hosts waiting
	// for their agents each wake for their own object only.
	waiting map[string]chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	// failed is when the list or watch last failed, and failure why;
	// zero while it works.
	failed  time.Time
	failure error
}

// Track lists the fabric's objects and keeps watching them until Stop.
func Track(ctx context.Context, cl *Clients, fabric string) (*Tracker, error) {
	objs, rv, err := ListFabric(ctx, cl, fabric)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	t := &Tracker{cl: cl, fabric: fabric, objs: objs, waiting: map[string]chan struct{}{}, cancel: cancel, done: make(chan struct{})}
	go t.run(wctx, rv)
	return t, nil
}

func (t *Tracker) run(ctx context.Context, rv string) {
	defer close(t.done)
	for ctx.Err() == nil {
		if rv == "" {
			objs, lrv, err := ListFabric(ctx, t.cl, t.fabric)
			if err != nil {
				t.fail(ctx, err)
				sleepCtx(ctx, time.Second)
				continue
			}
			t.mu.Lock()
			t.objs = objs
			for name := range t.waiting {
				t.poke(name)
			}
			t.mu.Unlock()
			rv = lrv
		}
		body, err := t.cl.REST.Get().AbsPath(objectPath("")).Param("watch", "true").Param("fieldSelector", "spec.fabric="+t.fabric).
			Param("resourceVersion", rv).Param("allowWatchBookmarks", "true").Stream(ctx)
		if err != nil {
			t.fail(ctx, fmt.Errorf("watching %s of fabric %s: %w", Resource, t.fabric, err))
			sleepCtx(ctx, 500*time.Millisecond)
			rv = ""
			continue
		}
		rv = t.drain(body, rv)
	}
}

// drain reads a watch stream (one WatchEvent JSON after another) into
// the tracker until it ends, and returns the resource version to watch
// from next ("" after an error event: list again). The objects are read
// into FabricHostConfig directly.
func (t *Tracker) drain(body io.ReadCloser, rv string) string {
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return rv // the stream ended (timeout, Stop, server gone): watch again from rv
		}
		if ev.Type == string(watch.Error) {
			return ""
		}
		var o FabricHostConfig
		if err := json.Unmarshal(ev.Object, &o); err != nil {
			continue
		}
		if o.Metadata.ResourceVersion != "" {
			rv = o.Metadata.ResourceVersion
		}
		if ev.Type == string(watch.Bookmark) {
			continue
		}
		t.mu.Lock()
		if ev.Type == string(watch.Deleted) {
			delete(t.objs, o.Metadata.Name)
		} else {
			t.objs[o.Metadata.Name] = &o
		}
		t.poke(o.Metadata.Name)
		t.mu.Unlock()
	}
}

// fail records a failed list or watch (not one the tracker's own Stop
// caused).
func (t *Tracker) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	t.mu.Lock()
	t.failed, t.failure = time.Now(), err
	t.mu.Unlock()
}

// FailedSince returns the last list or watch failure after since (nil
// when there was none): a host that did not report may have been unable
// to, or its report unseen.
func (t *Tracker) FailedSince(since time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failure == nil || t.failed.Before(since) {
		return nil
	}
	return t.failure
}

// poke wakes who waits for name's next change; t.mu is held.
func (t *Tracker) poke(name string) {
	if ch, ok := t.waiting[name]; ok {
		close(ch)
		delete(t.waiting, name)
	}
}

// Get returns the object as last seen (nil when absent).
func (t *Tracker) Get(name string) *FabricHostConfig {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.objs[name]
}

// Set records an object as the publisher's write returned it (so a wait
// never sees an older generation than it wrote).
func (t *Tracker) Set(o *FabricHostConfig) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The watch may already have delivered this generation with its
	// agent's report: the write's answer (no status yet) must not hide it.
	if cur, ok := t.objs[o.Metadata.Name]; ok && (cur.Metadata.Generation > o.Metadata.Generation ||
		cur.Metadata.Generation == o.Metadata.Generation && cur.Status.ObservedGeneration >= cur.Metadata.Generation) {
		return
	}
	t.objs[o.Metadata.Name] = o
}

// Changed returns a channel closed at the next change of the object
// named name (or after the tracker listed the objects again).
func (t *Tracker) Changed(name string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting == nil {
		t.waiting = map[string]chan struct{}{}
	}
	ch, ok := t.waiting[name]
	if !ok {
		ch = make(chan struct{})
		t.waiting[name] = ch
	}
	return ch
}

// Stop ends the watch.
func (t *Tracker) Stop() {
	t.cancel()
	<-t.done
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// HostState is a host's standing under the Kubernetes engine, as plan
// and drift report it (docs/kubernetes.md, "Status and plan").
type HostState string

// Host states.
const (
	HostInSync      HostState = "in_sync"      // published revision = compiled, Applied=True for the current generation
	HostUnpublished HostState = "unpublished"  // no FabricHostConfig for this host yet
	HostOutdated    HostState = "outdated"     // the published revision is not the spec's: apply publishes it
	HostPending     HostState = "pending"      // published, the agent has not reported this generation yet
	HostFailed      HostState = "failed"       // the agent reported Applied=False for this generation
	HostDrifted     HostState = "drifted"      // applied, and the agent's DCB watch saw a change since
	HostForeign     HostState = "other_fabric" // the node's object belongs to another fabric
)

// HostReport is a host's standing as its object and the node agent's
// status say.
type HostReport struct {
	Name      string
	State     HostState
	Revision  string // compiled from the spec
	Published string // spec.revision of the object
	Observed  string // status.observedRevision
	Reason    string // the Applied condition's reason
	Message   string
}

// Report compares a compiled host with its object (nil: none): no SSH,
// only the status the node's agent wrote. rev is the host's revision
// (EncodeIntent).
func Report(h *intent.Host, rev, fabric string, o *FabricHostConfig) HostReport {
	r := HostReport{Name: h.Name, Revision: rev}
	switch {
	case o == nil:
		r.State = HostUnpublished
		return r
	case o.Spec.Fabric != fabric:
		r.State, r.Message = HostForeign, "the node's FabricHostConfig belongs to fabric "+o.Spec.Fabric
		return r
	}
	r.Published, r.Observed = o.Spec.Revision, o.Status.ObservedRevision
	if c := o.Status.Cond(CondApplied); c != nil {
		r.Reason, r.Message = c.Reason, c.Message
	}
	switch {
	case o.Spec.Revision != rev:
		r.State = HostOutdated
	case o.FailedCurrent():
		r.State = HostFailed
	case !o.AppliedCurrent():
		r.State = HostPending
	case o.Status.IsTrue(CondDrifted):
		r.State = HostDrifted
	default:
		r.State = HostInSync
	}
	return r
}
