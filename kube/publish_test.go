package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

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
	tr := &Tracker{objs: map[string]*FabricHostConfig{"gone": {}}}
	stream := `{"type":"ADDED","object":{"kind":"FabricHostConfig","metadata":{"name":"a","generation":1,"resourceVersion":"10"},"spec":{"fabric":"f","revision":"r1"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"a","generation":1,"resourceVersion":"11"},"spec":{"fabric":"f","revision":"r1"},"status":{"observedGeneration":1}}}
{"type":"DELETED","object":{"metadata":{"name":"gone","resourceVersion":"12"}}}
{"type":"BOOKMARK","object":{"kind":"FabricHostConfig","metadata":{"resourceVersion":"15"}}}
`
	waitA, waitB := tr.Changed("a"), tr.Changed("b")
	if rv := tr.drain(io.NopCloser(strings.NewReader(stream)), "9"); rv != "15" {
		t.Errorf("resource version after the stream: %q, want 15", rv)
	}
	select {
	case <-waitA:
	default:
		t.Error("a changed, and who waits for it was not woken")
	}
	select {
	case <-waitB:
		t.Error("b did not change, and who waits for it was woken")
	default:
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

// TestPublishFinalErrors: an answer the API server means as final (422
// Invalid, 409 AlreadyExists on a create, 403) ends the write at once
// with that Status; only an outage (5xx, 429, no answer) is waited out.
// client-go's Result.Raw gives every HTTP error as an "unexpected server
// response", which made each of them look transient.
func TestPublishFinalErrors(t *testing.T) {
	for _, c := range []struct {
		code   int
		reason string
		is     func(error) bool
	}{
		{http.StatusUnprocessableEntity, "Invalid", apierrors.IsInvalid},
		{http.StatusConflict, "AlreadyExists", apierrors.IsAlreadyExists},
		{http.StatusForbidden, "Forbidden", apierrors.IsForbidden},
	} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"message":"refused","code":%d}`, c.reason, c.code)
		}))
		cl, err := NewClients(&rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		_, err = create(ctx, cl, "n1", HostSpec{Fabric: "f"})
		if !c.is(err) || time.Since(start) > 5*time.Second || calls.Load() != 1 {
			t.Errorf("create answered %d: %v after %s and %d requests, want the %s at once", c.code, err, time.Since(start), calls.Load(), c.reason)
		}
		if c.code == http.StatusForbidden {
			cancel()
			srv.Close()
			continue // Publish waits 20 s for an apiserver's authorizer
		}
		calls.Store(0)
		start = time.Now()
		_, err = Publish(ctx, cl, "n1", HostSpec{Fabric: "f"}, "")
		if err == nil || time.Since(start) > 5*time.Second || calls.Load() != 1 {
			t.Errorf("publish answered %d: %v after %s and %d requests", c.code, err, time.Since(start), calls.Load())
		}
		cancel()
		srv.Close()
	}
}

// TestPublishForbiddenAfterOutage: an outage longer than the 403 window,
// then a 403 (the restarted apiserver's authorizer not caught up yet),
// then the write goes through. The window counts from the first 403:
// counted from the start of the write (make e2e-kube's apiserver restart
// spent 13 s of the 20 before its first answer), the publish failed.
func TestPublishForbiddenAfterOutage(t *testing.T) {
	defer func(w time.Duration) { forbiddenWindow = w }(forbiddenWindow)
	forbiddenWindow = 300 * time.Millisecond
	// 503 twice (200 ms and 400 ms of backoff, past the window), then 403.
	srv, calls := testutil.RestartingAPIServer(t, `{"apiVersion":"fabctl.io/v1alpha1","kind":"FabricHostConfig","metadata":{"name":"n1","generation":2},"spec":{"fabric":"f"}}`, nil)
	cl, err := NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := Publish(ctx, cl, "n1", HostSpec{Fabric: "f"}, "")
	if err != nil || o.Metadata.Generation != 2 || calls.Load() != 4 {
		t.Fatalf("publish across an outage and a 403: %v (%d requests), want it published after 4", err, calls.Load())
	}
}
