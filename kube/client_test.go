package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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
