package kubelock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/fake"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/kube"
)

// fakeClients serve Leases from client-go's fake dynamic client (an
// object tracker with resource versions and update conflicts).
func fakeClients() *kube.Clients {
	return &kube.Clients{Dyn: fake.NewSimpleDynamicClient(runtime.NewScheme())}
}

// TestLeaseLock: the Lease excludes a second holder (with the first's
// record, as a lock file does), is freed by Unlock, and is taken over
// once its holder stopped renewing it for its duration; the run that
// lost it is told so (Lost, Unlock).
func TestLeaseLock(t *testing.T) {
	ctx := context.Background()
	cl := fakeClients()
	l := Locker{Clients: cl}
	a, err := l.Lock(ctx, apply.LockRequest{Fabric: "Pod_1", Operation: "apply", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := kube.LeaseHolder(ctx, cl, "Pod_1"); err != nil || !strings.HasSuffix(h, "/"+a.Holder().ID) {
		t.Fatalf("Lease holder %q %v, want this run (%s)", h, err, a.Holder().ID)
	}
	_, err = l.Lock(ctx, apply.LockRequest{Fabric: "Pod_1", Operation: "apply"})
	var le *apply.LockedError
	if !errors.As(err, &le) || le.Info.ID != a.Holder().ID || le.Info.Version != "v1" || le.Path != "Lease fabctl-system/fabctl-lock-pod-1" {
		t.Fatalf("second lock: %v (%+v)", err, le)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err := kube.LeaseHolder(ctx, cl, "Pod_1"); err != nil || h != "" {
		t.Fatalf("after Unlock: holder %q %v", h, err)
	}

	// A holder that stopped renewing: its Lease expired, the next run
	// takes it over; the old holder finds it lost when it unlocks.
	b, err := l.Lock(ctx, apply.LockRequest{Fabric: "Pod_1", Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	name := kube.LeaseName("Pod_1")
	cur, err := kube.GetLease(ctx, cl, name)
	if err != nil {
		t.Fatal(err)
	}
	old := metav1.NewMicroTime(time.Now().Add(-2 * kube.LeaseDuration))
	cur.Spec.RenewTime = &old
	if err := kube.UpdateLease(ctx, cl, cur); err != nil {
		t.Fatal(err)
	}
	c, err := l.Lock(ctx, apply.LockRequest{Fabric: "Pod_1", Operation: "apply"})
	if err != nil {
		t.Fatalf("taking over an expired Lease: %v", err)
	}
	if err := b.Unlock(ctx); err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("unlocking a Lease taken over: %v", err)
	}
	if h, _ := kube.LeaseHolder(ctx, cl, "Pod_1"); !strings.HasSuffix(h, "/"+c.Holder().ID) {
		t.Fatalf("holder %q after the old holder's Unlock, want the new one", h)
	}
	if err := c.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseLockWaits: with a timeout, a run waits for the Lease and
// takes it once freed.
func TestLeaseLockWaits(t *testing.T) {
	ctx := context.Background()
	l := Locker{Clients: fakeClients()}
	a, err := l.Lock(ctx, apply.LockRequest{Fabric: "f", Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = a.Unlock(ctx)
	}()
	b, err := l.Lock(ctx, apply.LockRequest{Fabric: "f", Operation: "apply", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("waiting for the Lease: %v", err)
	}
	_ = b.Unlock(ctx)
}
