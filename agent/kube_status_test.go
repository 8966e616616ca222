package agent

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/kube"
)

// TestStatusWriteForbiddenAfterOutage: the apiserver is down longer than
// the 403 window, then refuses once with 403 (restarted, its authorizer
// not caught up), then takes the write. The window counts from the first
// 403: counted from the start of the write, the report was dropped after
// an outage that long and the publisher waited for it until its host
// timeout.
func TestStatusWriteForbiddenAfterOutage(t *testing.T) {
	defer func(w time.Duration) { statusForbiddenWindow = w }(statusForbiddenWindow)
	statusForbiddenWindow = 300 * time.Millisecond
	// 503 twice (200 ms and 400 ms of backoff, past the window), then 403.
	srv, calls := testutil.RestartingAPIServer(t, `{"apiVersion":"fabctl.io/v1alpha1","kind":"FabricHostConfig","metadata":{"name":"n1","generation":2}}`,
		func(r *http.Request) bool {
			return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/fabrichostconfigs/n1/status")
		})
	cl, err := kube.NewClients(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	a := &KubeAgent{Node: "n1", Clients: cl}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.writeStatus(ctx, &kube.HostStatus{ObservedGeneration: 2})
	if calls.Load() != 4 {
		t.Fatalf("the status write made %d requests, want 4: given up at the 403 after an outage", calls.Load())
	}
	if ok, reason, _ := a.Ready(); reason != "" && strings.Contains(reason, "cannot write the status") {
		t.Fatalf("still failing after the write went through: %v %s", ok, reason)
	}
}
