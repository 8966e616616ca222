package kube

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

func TestParseMaxUnavailable(t *testing.T) {
	for _, c := range []struct {
		in    string
		total int
		want  int
		err   bool
	}{
		{"2", 100, 2, false},
		{"10%", 100, 10, false},
		{"10%", 8, 1, false}, // rounded up
		{"25%", 6, 2, false},
		{"100%", 4096, 4096, false},
		{"1%", 3, 1, false}, // at least one
		{"0", 5, 0, true},
		{"-1", 5, 0, true},
		{"0%", 5, 0, true},
		{"101%", 5, 0, true},
		{"x", 5, 0, true},
		{"", 5, 0, true},
	} {
		m, err := ParseMaxUnavailable(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v, want error %v", c.in, err, c.err)
			continue
		}
		if err == nil && m.Of(c.total) != c.want {
			t.Errorf("%q of %d = %d, want %d", c.in, c.total, m.Of(c.total), c.want)
		}
	}
}

func obj(name string, h *intent.Host, gen, observed int64, applied, reason string, drift []DriftEntry) *FabricHostConfig {
	raw, rev, _ := EncodeIntent(h)
	o := &FabricHostConfig{Metadata: ObjectMeta{Name: name, Generation: gen},
		Spec: HostSpec{Fabric: "f", Protocol: Protocol, Revision: rev, Intent: raw}}
	o.Status.ObservedGeneration = observed
	o.Status.ObservedRevision = rev
	if applied != "" {
		o.Status.Conditions = append(o.Status.Conditions, Condition{Type: CondApplied, Status: applied, Reason: reason})
	}
	if drift != nil {
		o.Status.Conditions = append(o.Status.Conditions, Condition{Type: CondDrifted, Status: "True", Reason: ReasonDrift})
		o.Status.Drift = drift
	}
	return o
}

// TestReport: each host's standing is read from its object and status
// alone, the way plan --engine kubernetes shows it.
func TestReport(t *testing.T) {
	host := func(name string, mtu int) *intent.Host {
		return &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: name}, NICs: []intent.NIC{{Name: "eth1", MTU: mtu}}}
	}
	hosts := []*intent.Host{host("a", 9000), host("b", 9000), host("c", 9000), host("d", 9000), host("e", 9000), host("f", 9000), host("g", 9000)}
	objs := map[string]*FabricHostConfig{
		"b": obj("b", host("b", 9000), 2, 2, "True", ReasonApplied, nil),
		"c": obj("c", host("c", 1500), 3, 3, "True", ReasonApplied, nil),
		"d": obj("d", host("d", 9000), 4, 3, "True", ReasonApplied, nil),
		"e": obj("e", host("e", 9000), 5, 5, "False", ReasonVerify, nil),
		"f": obj("f", host("f", 9000), 1, 1, "True", ReasonApplied, []DriftEntry{{Path: "nic/eth1/pfc", Applied: "3", Live: "3,4"}}),
		"g": obj("g", host("g", 9000), 1, 1, "True", ReasonApplied, nil),
	}
	objs["g"].Spec.Fabric = "other"
	reps, err := Report(hosts, "f", objs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]HostState{"a": HostUnpublished, "b": HostInSync, "c": HostOutdated, "d": HostPending, "e": HostFailed, "f": HostDrifted, "g": HostForeign}
	for _, r := range reps {
		if r.State != want[r.Name] {
			t.Errorf("%s: %s, want %s", r.Name, r.State, want[r.Name])
		}
		switch r.Name {
		case "c":
			if len(r.Changes) != 1 || r.Changes[0].Path != "nic/eth1/mtu" || r.Changes[0].Before != "1500" || r.Changes[0].After != "9000" {
				t.Errorf("c: changes %+v, want the MTU 1500 -> 9000", r.Changes)
			}
		case "f":
			if len(r.Drift) != 1 || r.Drift[0].After != "3,4" || len(r.Changes) != 1 || r.Changes[0].After != "3" {
				t.Errorf("f: drift %+v changes %+v", r.Drift, r.Changes)
			}
		case "e":
			if r.Reason != ReasonVerify {
				t.Errorf("e: reason %q", r.Reason)
			}
		}
	}
}

func TestUnstructuredRoundTrip(t *testing.T) {
	raw, rev, _ := EncodeIntent(&intent.Host{Device: intent.Device{Name: "n1"}})
	u, err := ToUnstructured(&FabricHostConfig{Metadata: ObjectMeta{Name: "n1"}, Spec: HostSpec{Fabric: "f", Protocol: Protocol, Revision: rev, Intent: raw}})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != Kind || u.GetAPIVersion() != "fabctl.io/v1alpha1" || u.GetName() != "n1" {
		t.Fatalf("%+v", u.Object)
	}
	if h, ok := u.Object["spec"].(map[string]any)["hold"]; !ok || h != false {
		t.Fatalf("hold must be owned (explicit false): %v", u.Object["spec"])
	}
	if _, ok := u.Object["status"]; ok {
		t.Fatal("the publisher's apply configuration carries status")
	}
	back, err := FromUnstructured(u)
	if err != nil || back.Spec.Revision != rev || string(back.Spec.Intent) != string(raw) { // both with sorted keys
		t.Fatalf("%v %+v", err, back)
	}
	var st HostStatus
	b, _ := StatusPatch(&HostStatus{ObservedGeneration: 3, Conditions: []Condition{{Type: CondApplied, Status: "True"}}})
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	if err := json.Unmarshal(m["status"], &st); err != nil || st.ObservedGeneration != 3 || !st.IsTrue(CondApplied) {
		t.Fatalf("status patch %s", b)
	}
}

// TestTrackerSetKeepsReport: the publisher's own write result never
// hides a report the watch already delivered for the same generation.
func TestTrackerSetKeepsReport(t *testing.T) {
	tr := &Tracker{objs: map[string]*FabricHostConfig{}}
	reported := &FabricHostConfig{Metadata: ObjectMeta{Name: "n", Generation: 1}}
	reported.Status.ObservedGeneration = 1
	tr.objs["n"] = reported
	tr.Set(&FabricHostConfig{Metadata: ObjectMeta{Name: "n", Generation: 1}})
	if tr.Get("n").Status.ObservedGeneration != 1 {
		t.Fatal("the create's answer replaced the agent's report")
	}
	tr.Set(&FabricHostConfig{Metadata: ObjectMeta{Name: "n", Generation: 2}})
	if tr.Get("n").Metadata.Generation != 2 {
		t.Fatal("a newer generation was not recorded")
	}
}

// TestObjectBody: the publisher's bytes are the apply configuration
// ToUnstructured makes (spec.hold written when false, spec.attempt when
// set), and the answer decodes into FabricHostConfig.
func TestObjectBody(t *testing.T) {
	raw, rev, _ := EncodeIntent(&intent.Host{Device: intent.Device{Name: "n1"}, NICs: []intent.NIC{{Name: "e1", MTU: 9000}}})
	for _, sp := range []HostSpec{
		{Fabric: "f", Protocol: Protocol, Revision: rev, Intent: raw},
		{Fabric: "f", Protocol: Protocol, Revision: rev, Intent: raw, Hold: true, Attempt: "run-1"},
	} {
		b, err := objectBody("n1", sp)
		if err != nil {
			t.Fatal(err)
		}
		u, err := ToUnstructured(&FabricHostConfig{Metadata: ObjectMeta{Name: "n1"}, Spec: sp})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := u.MarshalJSON()
		var got, exp any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("body\n%s\nwant\n%s", b, want)
		}
		o, err := decodeObject("n1", b)
		if err != nil || o.Spec.Revision != rev || o.Spec.Hold != sp.Hold || o.Metadata.Name != "n1" {
			t.Errorf("decoded %+v, %v", o, err)
		}
	}
	if _, err := decodeObject("n1", []byte(`{"spec":`)); err == nil {
		t.Error("a truncated answer decoded")
	}
}

// TestTrackerDrain reads a watch stream as the apiserver writes it (one
// WatchEvent JSON after another): added and modified objects are kept,
// a deleted one dropped, a bookmark only moves the resource version, and
// an error event asks for a new LIST ("").
func TestTrackerDrain(t *testing.T) {
	tr := &Tracker{objs: map[string]*FabricHostConfig{"gone": {}}, notify: make(chan struct{}, 1)}
	stream := `{"type":"ADDED","object":{"kind":"FabricHostConfig","metadata":{"name":"a","generation":1,"resourceVersion":"10"},"spec":{"fabric":"f","revision":"r1"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"a","generation":1,"resourceVersion":"11"},"spec":{"fabric":"f","revision":"r1"},"status":{"observedGeneration":1}}}
{"type":"DELETED","object":{"metadata":{"name":"gone","resourceVersion":"12"}}}
{"type":"BOOKMARK","object":{"kind":"FabricHostConfig","metadata":{"resourceVersion":"15"}}}
`
	if rv := tr.drain(io.NopCloser(strings.NewReader(stream)), "9"); rv != "15" {
		t.Errorf("resource version after the stream: %q, want 15", rv)
	}
	if a := tr.Get("a"); a == nil || a.Status.ObservedGeneration != 1 || a.Spec.Revision != "r1" {
		t.Errorf("a: %+v", a)
	}
	if tr.Get("gone") != nil || len(tr.objs) != 1 {
		t.Errorf("objects: %v", tr.objs)
	}
	errStream := `{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}` + "\n"
	if rv := tr.drain(io.NopCloser(strings.NewReader(errStream)), "15"); rv != "" {
		t.Errorf("after an error event: %q, want a new LIST", rv)
	}
}
