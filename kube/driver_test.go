package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// fakeAPI serves the FabricHostConfig API the way kube-apiserver does for
// what the driver uses (create, server-side apply with a generation
// bumped only when the spec changes, a paginated LIST with the fabric's
// field selector, a WATCH from a resource version) and runs a fake
// agent per node: a new generation is reported on after a short delay,
// Applied, or failed as fail says, or never (silent). The real
// apiserver and agents are testbed/kubetb's; this is for the engine's
// logic through the real driver.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	rv      int64
	objs    map[string]*FabricHostConfig
	events  []fakeEvent
	wake    chan struct{}                // closed and replaced at every event
	fail    map[string]string            // node -> the agent's failure reason
	silent  map[string]bool              // node -> its agent never reports
	nco     map[string]map[string]string // nic-configuration-operator: node -> NIC -> NicDevice
	most    int                          // the most generations published and not yet reported at once
	writes  []string                     // "create h1", "apply h1 gen 2"
	latency time.Duration
}

type fakeEvent struct {
	rv  int64
	typ string
	obj FabricHostConfig
}

func newFakeAPI(t *testing.T) (*fakeAPI, *Clients) {
	f := &fakeAPI{t: t, objs: map[string]*FabricHostConfig{}, wake: make(chan struct{}), fail: map[string]string{},
		silent: map[string]bool{}, latency: 20 * time.Millisecond}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	cl, err := NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return f, cl
}

// seed stores an object for h at generation gen, reported Applied by its
// agent (or as status says).
func (f *fakeAPI) seed(fabric string, h *intent.Host, gen int64, applied bool, reason string) {
	raw, rev, err := EncodeIntent(h)
	if err != nil {
		f.t.Fatal(err)
	}
	o := &FabricHostConfig{APIVersion: Group + "/" + Version, Kind: Kind, Metadata: ObjectMeta{Name: h.Name, Generation: gen},
		Spec: HostSpec{Fabric: fabric, Protocol: Protocol, Revision: rev, Intent: raw}}
	if reason != "" {
		st := "True"
		if !applied {
			st = "False"
		}
		o.Status = HostStatus{ObservedGeneration: gen, ObservedRevision: rev, Conditions: []Condition{{Type: CondApplied, Status: st, Reason: reason, Message: "seeded: " + reason}}}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.store("ADDED", o)
}

// store records o as the next resource version and tells the watchers;
// f.mu is held.
func (f *fakeAPI) store(typ string, o *FabricHostConfig) {
	f.rv++
	o.Metadata.ResourceVersion = strconv.FormatInt(f.rv, 10)
	f.objs[o.Metadata.Name] = o
	f.events = append(f.events, fakeEvent{rv: f.rv, typ: typ, obj: *o})
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *fakeAPI) status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"message":%q,"code":%d}`, reason, msg, code)
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	base := "/apis/" + Group + "/" + Version + "/" + Resource
	switch {
	case strings.HasPrefix(r.URL.Path, "/apis/configuration.net.nvidia.com/"):
		f.serveNCO(w, r)
	case r.URL.Path == base && r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		f.watch(w, r)
	case r.URL.Path == base && r.Method == http.MethodGet:
		f.list(w, r)
	case r.URL.Path == base && r.Method == http.MethodPost:
		f.write(w, r, "")
	case strings.HasPrefix(r.URL.Path, base+"/") && r.Method == http.MethodGet:
		f.mu.Lock()
		o := f.objs[strings.TrimPrefix(r.URL.Path, base+"/")]
		f.mu.Unlock()
		if o == nil {
			f.status(w, http.StatusNotFound, "NotFound", "not found")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(o)
	case strings.HasPrefix(r.URL.Path, base+"/") && r.Method == http.MethodPatch:
		f.write(w, r, strings.TrimPrefix(r.URL.Path, base+"/"))
	default:
		f.status(w, http.StatusNotFound, "NotFound", "not served here")
	}
}

func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request) {
	fabric := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "spec.fabric=")
	f.mu.Lock()
	var items []*FabricHostConfig
	for _, o := range f.objs {
		if o.Spec.Fabric == fabric {
			c := *o
			items = append(items, &c)
		}
	}
	rv := f.rv
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]string{"resourceVersion": strconv.FormatInt(rv, 10)}, "items": items})
}

func (f *fakeAPI) watch(w http.ResponseWriter, r *http.Request) {
	from, _ := strconv.ParseInt(r.URL.Query().Get("resourceVersion"), 10, 64)
	fabric := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "spec.fabric=")
	w.Header().Set("Content-Type", "application/json")
	w.(http.Flusher).Flush()
	for {
		f.mu.Lock()
		var out []fakeEvent
		for _, e := range f.events {
			if e.rv > from && e.obj.Spec.Fabric == fabric {
				out = append(out, e)
			}
		}
		if n := len(f.events); n > 0 {
			from = max(from, f.events[n-1].rv)
		}
		wake := f.wake
		f.mu.Unlock()
		for _, e := range out {
			b, _ := json.Marshal(map[string]any{"type": e.typ, "object": e.obj})
			_, _ = w.Write(append(b, '\n'))
		}
		w.(http.Flusher).Flush()
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		}
	}
}

// write is a create (name "") or a server-side apply of name.
func (f *fakeAPI) write(w http.ResponseWriter, r *http.Request, name string) {
	var in struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec HostSpec `json:"spec"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	create := name == ""
	if create {
		name = in.Metadata.Name
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.objs[name]
	switch {
	case create && cur != nil:
		f.status(w, http.StatusConflict, "AlreadyExists", name+" already exists")
		return
	case cur == nil:
		cur = &FabricHostConfig{APIVersion: Group + "/" + Version, Kind: Kind, Metadata: ObjectMeta{Name: name}}
	}
	o := *cur
	old, _ := json.Marshal(cur.Spec)
	now, _ := json.Marshal(in.Spec)
	typ := "MODIFIED"
	if cur.Metadata.Generation == 0 {
		typ = "ADDED"
	}
	if !bytes.Equal(old, now) || cur.Metadata.Generation == 0 {
		o.Spec = in.Spec
		o.Metadata.Generation++
		f.writes = append(f.writes, fmt.Sprintf("%s gen %d", name, o.Metadata.Generation))
		f.store(typ, &o)
		waiting := 0
		for _, x := range f.objs {
			if x.Metadata.Generation > x.Status.ObservedGeneration {
				waiting++
			}
		}
		f.most = max(f.most, waiting)
		go f.agent(name, o.Metadata.Generation)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&o)
}

// agent reports on generation gen of node's object, as the node's fabctl
// agent would.
func (f *fakeAPI) agent(node string, gen int64) {
	time.Sleep(f.latency)
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.objs[node]
	if o == nil || o.Metadata.Generation != gen || f.silent[node] {
		return
	}
	c := *o
	c.Status = HostStatus{ObservedGeneration: gen, ObservedRevision: o.Spec.Revision, Changes: 1,
		Conditions: []Condition{{Type: CondApplied, Status: "True", ObservedGeneration: gen, Reason: ReasonApplied, Message: "applied 1 setting(s)"}}}
	if reason := f.fail[node]; reason != "" {
		c.Status.Conditions[0] = Condition{Type: CondApplied, Status: "False", ObservedGeneration: gen, Reason: reason, Message: "link v0a: no such device"}
	}
	f.store("MODIFIED", &c)
}

// serveNCO serves nic-configuration-operator's templates and devices
// from f.nco (404, the CRDs not installed, when nil).
func (f *fakeAPI) serveNCO(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	nco := f.nco
	f.mu.Unlock()
	if nco == nil {
		f.status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	const gv = "configuration.net.nvidia.com/v1alpha1"
	if strings.HasSuffix(r.URL.Path, "/nicconfigurationtemplates") {
		var devs []string
		for _, byNIC := range nco {
			for _, d := range byNIC {
				devs = append(devs, d)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": gv, "kind": "NicConfigurationTemplateList", "metadata": map[string]any{},
			"items": []any{map[string]any{"apiVersion": gv, "kind": "NicConfigurationTemplate",
				"metadata": map[string]any{"name": "roce", "namespace": "nco"},
				"spec":     map[string]any{"template": map[string]any{"roceOptimized": map[string]any{"enabled": true}}},
				"status":   map[string]any{"nicDevices": devs}}}})
		return
	}
	dev := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	for node, byNIC := range nco {
		for nic, d := range byNIC {
			if d == dev {
				_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": gv, "kind": "NicDevice", "metadata": map[string]any{"name": d, "namespace": "nco"},
					"status": map[string]any{"node": node, "ports": []any{map[string]any{"networkInterface": nic}}}})
				return
			}
		}
	}
	f.status(w, http.StatusNotFound, "NotFound", dev)
}

func (f *fakeAPI) get(name string) FabricHostConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.objs[name]
}

func mtuHost(name string, mtu int) *intent.Host {
	return &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: name, Platform: "linux"}, NICs: []intent.NIC{{Name: "v0a", MTU: mtu}}}
}

// kubeRun is a fabric of hosts applied through the Kubernetes driver
// under the one operation (apply.RunFabric), its lock a file.
type kubeRun struct {
	hosts *Hosts
	o     apply.RunOptions
}

func newKubeRun(t *testing.T, cl *Clients, hosts []*intent.Host, ho HostsOptions) *kubeRun {
	hs := NewHosts(cl, "f", ho)
	t.Cleanup(hs.Close)
	reg := drivers.NewRegistry()
	if err := reg.Register(DriverName, hs.Driver); err != nil {
		t.Fatal(err)
	}
	return &kubeRun{hosts: hs, o: apply.RunOptions{Spec: &spec.Spec{}, Fabric: &intent.Fabric{Name: "f", Hosts: hosts},
		StateDir: t.TempDir(), Plan: plan.Options{HostDriver: DriverName}, Registry: reg, Parallelism: 16, OnFailure: apply.Stop,
		Engine: DriverName, Version: "test"}}
}

func (k *kubeRun) run(t *testing.T) (*apply.Outcome, []apply.Entry) {
	t.Helper()
	out, _ := apply.RunFabric(context.Background(), k.o)
	if out.Journal == "" {
		return out, nil
	}
	fh, err := os.Open(out.Journal)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	es, err := apply.ParseJournal(fh)
	if err != nil {
		t.Fatal(err)
	}
	return out, es
}

func deviceEvents(es []apply.Entry, dev string) (out []apply.Entry, names string) {
	var n []string
	for _, e := range es {
		if e.Device == dev {
			out = append(out, e)
			n = append(n, e.Event)
		}
	}
	return out, strings.Join(n, ",")
}

// TestDriverPlan: plan.Make through the Kubernetes driver shows each
// host as its node's agent reported it, without SSH: a new node's
// settings all to add, an older revision's differences, nothing for a
// node in sync, its drift against the applied record, a revision the
// agent has not reported (info) or failed (error: plan fails, apply
// repairs) with every setting to set, a node of another fabric as an
// error, and a NIC nic-configuration-operator also manages as a warning
// that blocks apply. A revision the agent failed is the device's error,
// with every setting to set: plan fails, apply repairs it.
func TestDriverPlan(t *testing.T) {
	api, cl := newFakeAPI(t)
	hosts := []*intent.Host{mtuHost("a", 9000), mtuHost("b", 9000), mtuHost("c", 9000), mtuHost("d", 9000), mtuHost("e", 9000),
		mtuHost("f", 9000), mtuHost("g", 9000)}
	api.seed("f", mtuHost("b", 9000), 2, true, ReasonApplied)
	api.seed("f", mtuHost("c", 1500), 3, true, ReasonApplied)
	api.seed("f", mtuHost("d", 9000), 4, true, "")
	api.seed("f", mtuHost("e", 9000), 5, false, ReasonIncompatible)
	api.seed("f", mtuHost("f", 9000), 1, true, ReasonApplied)
	api.seed("other", mtuHost("g", 9000), 1, true, ReasonApplied)
	api.mu.Lock()
	o := api.objs["f"]
	o.Status.Conditions = append(o.Status.Conditions, Condition{Type: CondDrifted, Status: "True", Reason: ReasonDrift})
	o.Status.Drift = []DriftEntry{{Path: "nic/v0a/mtu", Applied: "9000", Live: "1500"}}
	api.objs["g"].Spec.Fabric = "other"
	api.nco = map[string]map[string]string{"b": {"v0a": "b-101d-0000-3b-00"}}
	api.mu.Unlock()

	k := newKubeRun(t, cl, hosts, HostsOptions{})
	k.o.Plan.Applied = map[string]intent.State{"host.f": mtuHost("f", 9000).Flatten()}
	p := plan.Make(context.Background(), k.o.Spec, k.o.Fabric, k.o.Registry, k.o.Plan)
	all := len(mtuHost("x", 9000).Flatten())
	for _, c := range []struct {
		name     string
		changes  int
		severity string
		err      string
	}{
		{"a", all, "", ""},
		{"b", 0, "warning", ""},
		{"c", 1, "", ""},
		{"d", all, "info", ""},
		{"e", all, "", "the node's agent reports Applied=False (Incompatible)"},
		{"f", 1, "", ""},
		// The LIST is the fabric's (field selector spec.fabric): another
		// fabric's node reads as new; apply refuses to take it over
		// (TestDriverOtherFabric).
		{"g", all, "", ""},
	} {
		d := p.Device("host." + c.name)
		if d.Driver != DriverName || len(d.Changes) != c.changes || !strings.Contains(d.Error, c.err) || (c.err == "") != (d.Error == "") || d.Repair != (c.name == "e") {
			t.Errorf("%s: driver %s, %d changes (want %d), error %q (want %q), repair %v", c.name, d.Driver, len(d.Changes), c.changes, d.Error, c.err, d.Repair)
		}
		sev := ""
		for _, x := range d.Findings {
			sev = x.Severity
			if x.BlocksApply != (x.Severity == "warning") {
				t.Errorf("%s: finding %+v", c.name, x)
			}
		}
		if sev != c.severity {
			t.Errorf("%s: findings %+v, want one of severity %q", c.name, d.Findings, c.severity)
		}
	}
	if ch := p.Device("host.c").Changes[0]; ch.Path != "nic/v0a/mtu" || ch.Before != "1500" || ch.After != "9000" {
		t.Errorf("c: %+v, want the MTU 1500 -> 9000 from the published revision", ch)
	}
	if d := p.Device("host.f"); len(d.Drift) != 1 || d.Drift[0].Before != "1500" || d.Drift[0].After != "9000" || d.Changes[0].Before != "1500" {
		t.Errorf("f: drift %+v changes %+v, want 9000 -> 1500 drifted and back", d.Drift, d.Changes)
	}
	if x := p.Device("host.b").Findings; len(x) != 1 || !strings.Contains(x[0].Message, "NicDevice b-101d-0000-3b-00") {
		t.Errorf("b: %+v", x)
	}

	// apply refuses while b's NIC has another owner: nothing published.
	k.o.Fabric.Hosts = hosts[:6]
	out, _ := k.run(t)
	if out.Status != apply.RunRefused || len(api.writes) != 0 {
		t.Fatalf("apply with an overlapping owner: %s, writes %v", out.Status, api.writes)
	}
}

// TestDriverRollout: the hosts' wave through the Kubernetes driver under
// a batch policy (--canary 1 --max-unavailable 2): the canary alone
// first, never more than two nodes published and not yet reported, the
// journal and applied record as the SSH engine keeps them, with what was
// published and what each agent reported; a second run has nothing to
// do.
func TestDriverRollout(t *testing.T) {
	api, cl := newFakeAPI(t)
	var hosts []*intent.Host
	for i := 1; i <= 6; i++ {
		n := fmt.Sprintf("h%d", i)
		api.seed("f", mtuHost(n, 5000), 1, true, ReasonApplied)
		hosts = append(hosts, mtuHost(n, 6000))
	}
	prev := api.get("h3").Spec.Revision
	k := newKubeRun(t, cl, hosts, HostsOptions{})
	k.o.HostBatches = apply.BatchPolicy{Canary: 1, MaxUnavailable: apply.MaxUnavailable{N: 2}}
	out, es := k.run(t)
	if out.Status != apply.RunApplied || out.Result.Counts.Applied != 6 {
		t.Fatalf("rollout: %s %+v %v", out.Status, out.Result, out.Warnings)
	}
	if api.most != 2 {
		t.Errorf("at most %d nodes published and not yet reported, want 2", api.most)
	}
	if api.writes[0] != "h1 gen 2" {
		t.Errorf("writes %v: the canary h1 first", api.writes)
	}
	if es[0].Engine != DriverName || es[0].MaxUnavailable != "2" || es[0].Canary != 1 || es[0].Devices != 6 {
		t.Errorf("run_start %+v", es[0])
	}
	ev, names := deviceEvents(es, "host.h3")
	if names != "device_start,device_applied,device_verified" {
		t.Fatalf("host.h3 journal %s", names)
	}
	o := api.get("h3")
	if st := ev[0]; st.Revision != o.Spec.Revision || st.PreviousRevision != prev || st.Changes != 1 || st.Batch != 2 {
		t.Errorf("device_start %+v", st)
	}
	if pub := ev[1]; pub.Generation != 2 || pub.Revision != o.Spec.Revision {
		t.Errorf("device_applied %+v", pub)
	}
	if ver := ev[2]; ver.ObservedGeneration != 2 || ver.Generation != 2 || ver.Reason != ReasonApplied {
		t.Errorf("device_verified %+v", ver)
	}
	rec, err := plan.LoadApplied(k.o.StateDir, "f")
	if err != nil || rec.Devices["host.h6"]["nic/v0a/mtu"] != "6000" {
		t.Fatalf("applied record %v %v", rec, err)
	}
	out, _ = k.run(t)
	if out.Status != apply.RunNoChanges {
		t.Fatalf("second run: %s", out.Status)
	}
}

// TestDriverFailureBudget: a node whose agent fails the revision stops
// the rollout under --on-failure stop (the rest untouched), its object
// keeps the failed revision (its agent restored the host); the next plan
// shows it as an error and the next apply publishes it again. Under
// rollback the nodes released before it get their previous revision
// published again, and the applied record goes back.
func TestDriverFailureBudget(t *testing.T) {
	for _, pol := range []apply.Policy{apply.Stop, apply.Rollback} {
		t.Run(string(pol), func(t *testing.T) {
			api, cl := newFakeAPI(t)
			var hosts []*intent.Host
			for i := 1; i <= 5; i++ {
				n := fmt.Sprintf("h%d", i)
				api.seed("f", mtuHost(n, 5000), 1, true, ReasonApplied)
				hosts = append(hosts, mtuHost(n, 4000))
			}
			prev := map[string]string{}
			for _, h := range hosts {
				prev[h.Name] = api.get(h.Name).Spec.Revision
			}
			api.fail["h3"] = ReasonFailed
			k := newKubeRun(t, cl, hosts, HostsOptions{})
			k.o.OnFailure = pol
			k.o.HostBatches = apply.BatchPolicy{MaxUnavailable: apply.MaxUnavailable{N: 1}}
			out, es := k.run(t)
			c := out.Result.Counts
			if out.Status != apply.RunFailed || c.Failed != 1 || c.NotAttempted != 2 {
				t.Fatalf("%s: %+v", out.Status, c)
			}
			h3 := out.Result.Devices[2]
			if h3.Address != "host.h3" || !h3.Restored || !strings.Contains(h3.Error, "no such device") {
				t.Errorf("h3: %+v", h3)
			}
			if _, names := deviceEvents(es, "host.h5"); names != "device_skipped" {
				t.Errorf("h5 journal %s", names)
			}
			if g := api.get("h5").Metadata.Generation; g != 1 {
				t.Errorf("h5 published (generation %d) after the budget was spent", g)
			}
			rec, _ := plan.LoadApplied(k.o.StateDir, "f")
			if pol == apply.Stop {
				if c.Applied != 2 || api.get("h1").Spec.Revision == prev["h1"] || rec.Devices["host.h1"]["nic/v0a/mtu"] != "4000" {
					t.Errorf("stop: %+v, h1 at %s", c, api.get("h1").Spec.Revision)
				}
				if o := api.get("h3"); !o.FailedCurrent() {
					t.Errorf("h3's object was changed after its agent failed it: %+v", o)
				}
				// The next plan fails on h3; the next apply repairs it.
				delete(api.fail, "h3")
				p := plan.Make(context.Background(), k.o.Spec, k.o.Fabric, k.o.Registry, k.o.Plan)
				if d := p.Device("host.h3"); !p.Errored() || !d.Repair || !strings.Contains(d.Error, "no such device") {
					t.Fatalf("plan after the failure: host.h3 %+v", d)
				}
				out, _ = k.run(t)
				if out.Status != apply.RunApplied || out.Result.Counts.Applied != 3 || !ptr(api.get("h3")).AppliedCurrent() {
					t.Fatalf("repair: %s %+v", out.Status, out.Result.Counts)
				}
				return
			}
			if c.RolledBack != 2 || c.Applied != 0 {
				t.Errorf("rollback: %+v", c)
			}
			for _, n := range []string{"h1", "h2"} {
				o := api.get(n)
				if o.Spec.Revision != prev[n] || !o.AppliedCurrent() || o.Metadata.Generation != 3 || !strings.HasSuffix(o.Spec.Attempt, "-rollback") {
					t.Errorf("%s after the rollback: %+v", n, o)
				}
				ev, names := deviceEvents(es, "host."+n)
				if names != "device_start,device_applied,device_verified,device_rolled_back" {
					t.Errorf("%s journal %s", n, names)
				} else if rb := ev[3]; rb.Revision != prev[n] || rb.Generation != 3 || rb.ObservedGeneration != 3 {
					t.Errorf("%s device_rolled_back %+v", n, rb)
				}
				if v := rec.Devices["host."+n]["nic/v0a/mtu"]; v != "5000" && v != "" {
					t.Errorf("%s applied record %q after the rollback", n, v)
				}
			}
		})
	}
}

// TestDriverTimeout: a node whose agent never reports fails after the
// host timeout, its state unknown (not restored), with the reason
// Timeout and what to check.
func TestDriverTimeout(t *testing.T) {
	api, cl := newFakeAPI(t)
	api.seed("f", mtuHost("h1", 5000), 1, true, ReasonApplied)
	api.silent["h1"] = true
	k := newKubeRun(t, cl, []*intent.Host{mtuHost("h1", 6000)}, HostsOptions{HostTimeout: 300 * time.Millisecond})
	out, es := k.run(t)
	d := out.Result.Devices[0]
	if out.Status != apply.RunFailed || d.Restored || d.Partial || !strings.Contains(d.Error, "DaemonSet running on node h1") {
		t.Fatalf("timeout: %s %+v", out.Status, d)
	}
	if ev, _ := deviceEvents(es, "host.h1"); ev[len(ev)-1].Reason != ReasonTimeout {
		t.Errorf("device_failed %+v", ev[len(ev)-1])
	}
}

func ptr[T any](v T) *T { return &v }

// TestDriverOtherFabric: a node whose object belongs to another fabric
// (which the fabric's LIST does not show) is not taken over: its
// publish fails, the object is left as it is.
func TestDriverOtherFabric(t *testing.T) {
	api, cl := newFakeAPI(t)
	api.seed("other", mtuHost("g", 9000), 1, true, ReasonApplied)
	k := newKubeRun(t, cl, []*intent.Host{mtuHost("g", 4000)}, HostsOptions{})
	out, _ := k.run(t)
	d := out.Result.Devices[0]
	if out.Status != apply.RunFailed || !d.Restored || !strings.Contains(d.Error, "belongs to fabric other") {
		t.Fatalf("%s %+v", out.Status, d)
	}
	if o := api.get("g"); o.Spec.Fabric != "other" || o.Metadata.Generation != 1 {
		t.Fatalf("another fabric's object was written: %+v", o.Spec)
	}
}
