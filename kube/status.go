package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
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
		raw, err := req.Do(ctx).Raw()
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
	notify chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
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
	t := &Tracker{cl: cl, fabric: fabric, objs: objs, notify: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
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
			t.mu.Unlock()
			t.poke()
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
		t.mu.Unlock()
		t.poke()
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

func (t *Tracker) poke() {
	select {
	case t.notify <- struct{}{}:
	default:
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

// Changed is signalled after the tracker saw a change.
func (t *Tracker) Changed() <-chan struct{} { return t.notify }

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

// HostReport is one host of plan --engine kubernetes.
type HostReport struct {
	Name      string              `json:"name"`
	State     HostState           `json:"state"`
	Revision  string              `json:"revision"`            // compiled from the spec
	Published string              `json:"published,omitempty"` // spec.revision of the object
	Observed  string              `json:"observed,omitempty"`  // status.observedRevision
	Reason    string              `json:"reason,omitempty"`    // the Applied (or Drifted) condition's reason
	Message   string              `json:"message,omitempty"`
	Changes   []intent.AttrChange `json:"changes,omitempty"` // published intent -> compiled (outdated), live -> desired (drifted)
	Drift     []intent.AttrChange `json:"drift,omitempty"`   // applied -> live, from the agent's DCB watch
	NICs      []NICStatus         `json:"nics,omitempty"`
	Diff      []string            `json:"diff,omitempty"`
}

// Report compares the compiled hosts with their objects: no SSH, only
// the status the agents wrote.
func Report(hosts []*intent.Host, fabric string, objs map[string]*FabricHostConfig) ([]HostReport, error) {
	out := make([]HostReport, 0, len(hosts))
	for _, h := range hosts {
		_, rev, err := EncodeIntent(h)
		if err != nil {
			return nil, err
		}
		r := HostReport{Name: h.Name, Revision: rev}
		o := objs[h.Name]
		switch {
		case o == nil:
			r.State = HostUnpublished
			r.Changes = changesFrom(nil, h)
		case o.Spec.Fabric != fabric:
			r.State, r.Message = HostForeign, "the node's FabricHostConfig belongs to fabric "+o.Spec.Fabric
		default:
			r.Published, r.Observed, r.NICs, r.Diff = o.Spec.Revision, o.Status.ObservedRevision, o.Status.NICs, o.Status.Diff
			if c := o.Status.Cond(CondApplied); c != nil {
				r.Reason, r.Message = c.Reason, c.Message
			}
			switch {
			case o.Spec.Revision != rev:
				r.State = HostOutdated
				old, _ := DecodeIntent(o.Spec.Intent)
				r.Changes = changesFrom(old, h)
			case o.FailedCurrent():
				r.State = HostFailed
			case !o.AppliedCurrent():
				r.State = HostPending
			case o.Status.IsTrue(CondDrifted):
				r.State = HostDrifted
				c := o.Status.Cond(CondDrifted)
				r.Reason, r.Message = c.Reason, c.Message
				for _, d := range o.Status.Drift {
					r.Drift = append(r.Drift, intent.AttrChange{Path: d.Path, Action: intent.Update, Before: d.Applied, After: d.Live})
					r.Changes = append(r.Changes, intent.AttrChange{Path: d.Path, Action: intent.Update, Before: d.Live, After: d.Applied})
				}
			default:
				r.State = HostInSync
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// changesFrom is the difference between two host intents as settings
// (old nil: everything is new).
func changesFrom(old, h *intent.Host) []intent.AttrChange {
	var live intent.State
	if old != nil {
		live = old.Flatten()
	} else {
		live = intent.State{}
	}
	return intent.Diff(h.Flatten(), live, nil)
}
