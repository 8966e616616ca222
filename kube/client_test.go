package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// TestWatchOutlivesRequestTimeout: a watch lasts as long as the server
// keeps it, whatever request timeout the configuration carried.
// client-go puts Config.Timeout on the http.Client, which cut every
// watch at that age (the agents re-listed and re-watched every minute).
// The server here sends one event, waits past the configured timeout,
// then sends a second.
func TestWatchOutlivesRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.Error(w, "watch only", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fl := w.(http.Flusher)
		for i := 1; i <= 2; i++ {
			fmt.Fprintf(w, `{"type":"ADDED","object":{"apiVersion":"fabctl.io/v1alpha1","kind":"FabricHostConfig","metadata":{"name":"n%d","resourceVersion":"%d"}}}`+"\n", i, i)
			fl.Flush()
			if i == 1 {
				time.Sleep(600 * time.Millisecond)
			}
		}
	}))
	defer srv.Close()
	cl, err := NewClients(&rest.Config{Host: srv.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := cl.Dyn.Resource(GVR).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for ev := range w.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			got = append(got, u.GetName())
		}
	}
	if len(got) != 2 {
		t.Fatalf("watch delivered %v, want n1 and n2 (the second 600 ms after a 200 ms request timeout)", got)
	}
}

// TestTrackerReportsAPIFailure: a tracker whose watch the server refuses
// (503, as an apiserver without etcd answers) says so through
// FailedSince, and a host timing out then is told the API server failed,
// not that the DaemonSet may be missing; a tracker that works says
// nothing.
func TestTrackerReportsAPIFailure(t *testing.T) {
	for _, c := range []struct {
		name     string
		watchOK  bool
		wantFail bool
	}{
		{name: "watch refused", watchOK: false, wantFail: true},
		{name: "watch works", watchOK: true, wantFail: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.URL.Query().Get("watch") != "true":
					fmt.Fprint(w, `{"metadata":{"resourceVersion":"7"},"items":[]}`)
				case c.watchOK:
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				default:
					http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcdserver: request timed out","code":503}`, http.StatusServiceUnavailable)
				}
			}))
			defer srv.Close()
			cl, err := NewClients(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			tr, err := Track(context.Background(), cl, "f")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			apiErr := tr.FailedSince(start)
			tr.Stop()
			if (apiErr != nil) != c.wantFail {
				t.Fatalf("FailedSince: %v, want a failure: %v", apiErr, c.wantFail)
			}
			msg := timeoutMessage(time.Minute, "n1", apiErr)
			if got := strings.Contains(msg, "API server failed"); got != c.wantFail {
				t.Errorf("timeout message %q", msg)
			}
			if !c.wantFail && !strings.Contains(msg, "DaemonSet running on node n1") {
				t.Errorf("timeout message %q", msg)
			}
			if c.wantFail && tr.FailedSince(time.Now().Add(time.Hour)) != nil {
				t.Error("a failure before since was reported")
			}
		})
	}
}
