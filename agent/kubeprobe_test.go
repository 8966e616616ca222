package agent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/fabctl/fabctl/kube"
)

// TestKubeReadiness: the readiness probe follows the agent's watch of its
// node's object: not ready before the first list and while it cannot
// list or watch, ready while the watch is open.
func TestKubeReadiness(t *testing.T) {
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{kube.GVR: "FabricHostConfigList"})
	var failList, failWatch atomic.Bool
	failList.Store(true)
	watchers := make(chan *watch.FakeWatcher, 8)
	dc.PrependReactor("list", "fabrichostconfigs", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failList.Load() {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	dc.PrependWatchReactor("fabrichostconfigs", func(k8stesting.Action) (bool, watch.Interface, error) {
		if failWatch.Load() {
			return true, nil, errors.New("forbidden")
		}
		w := watch.NewFake()
		watchers <- w
		return true, w, nil
	})
	a := &KubeAgent{Node: "h1", Clients: &kube.Clients{Dyn: dc}, Server: &Server{}}
	probe := func() (int, string) {
		rec := httptest.NewRecorder()
		a.ProbeHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				code, body := probe()
				t.Fatalf("timed out waiting for %s (probe: %d %s)", what, code, body)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if code, body := probe(); code != http.StatusServiceUnavailable || !strings.Contains(body, "not listed yet") {
		t.Fatalf("before Run: %d %q", code, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	wait("not ready: cannot list", func() bool {
		code, body := probe()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "cannot list FabricHostConfig h1: connection refused")
	})
	failList.Store(false)
	var w *watch.FakeWatcher
	select {
	case w = <-watchers:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent never watched")
	}
	wait("ready: watching", func() bool {
		code, body := probe()
		return code == http.StatusOK && strings.Contains(body, "watching FabricHostConfig h1")
	})
	failWatch.Store(true)
	w.Stop() // the watch ends; the next one is refused
	wait("not ready: cannot watch", func() bool {
		code, body := probe()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "cannot watch FabricHostConfig h1: forbidden")
	})
	failWatch.Store(false)
	wait("ready again", func() bool { code, _ := probe(); return code == http.StatusOK })
	cancel()
	<-done
	if code, body := probe(); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopped") {
		t.Errorf("after Run: %d %q", code, body)
	}
}

// TestServeProbePortTaken: a port another process holds is an error at
// start, naming the flag that picks another.
func TestServeProbePortTaken(t *testing.T) {
	a := &KubeAgent{Node: "h1"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, err := a.ServeProbe(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := a.ServeProbe(ctx, strings.TrimPrefix(srv.URL, "http://")); err == nil || !strings.Contains(err.Error(), "--probe-port") {
		t.Errorf("taken port: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("probe server did not stop with its context")
	}
}

// TestKubeNotReadyWhileNodeUnreadable: while the agent retries reading its
// Node (the taint removal after an apply, the apiserver gone), its probe
// answers 503 naming the Node, and 200 again once the read goes through.
// Without it an agent stuck there answered 200 for up to two minutes.
func TestKubeNotReadyWhileNodeUnreadable(t *testing.T) {
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{kube.NodeGVR: "NodeList"})
	var failGet atomic.Bool
	failGet.Store(true)
	dc.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failGet.Load() {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil // the fake then answers NotFound: no Node, nothing to untaint
	})
	a := &KubeAgent{Node: "h1", Clients: &kube.Clients{Dyn: dc}, Server: &Server{}}
	a.setReady(true, "watching FabricHostConfig h1")
	probe := func() (int, string) {
		rec := httptest.NewRecorder()
		a.ProbeHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, _ := probe(); code != http.StatusOK {
		t.Fatalf("watching: probe %d, want 200", code)
	}
	done := make(chan error, 1)
	go func() { done <- a.untaint(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := probe()
		if code == http.StatusServiceUnavailable && strings.Contains(body, "cannot read the Node h1: connection refused") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe never said the Node is unreadable: %d %q", code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	failGet.Store(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("untaint: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("untaint did not return after the Node became readable")
	}
	if code, body := probe(); code != http.StatusOK {
		t.Errorf("after the read went through: %d %q, want 200", code, body)
	}
}
