package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/fabctl/fabctl/apply"
)

// LeaseName is the fabric lock's Lease in Namespace: fabctl-lock-<fabric>.
func LeaseName(fabric string) string {
	return "fabctl-lock-" + strings.ToLower(strings.ReplaceAll(apply.SafeName(fabric), "_", "-"))
}

// leaseInfoKey is the annotation holding the holder's apply.LockInfo.
const leaseInfoKey = "fabctl.io/lock"

// LeaseGVR is coordination.k8s.io/v1 Lease. fabctl reads and writes it
// with the dynamic client and the few fields below (coordination/v1
// LeaseSpec's JSON names), not the typed client: that client would link
// every API group's types into the binary the agent ships to each host.
var LeaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

type leaseMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

type leaseSpec struct {
	HolderIdentity       *string           `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *metav1.MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *metav1.MicroTime `json:"renewTime,omitempty"`
}

type leaseObj struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   leaseMeta `json:"metadata"`
	Spec       leaseSpec `json:"spec"`
}

func leases(cl *Clients) dynamic.ResourceInterface {
	return cl.Dyn.Resource(LeaseGVR).Namespace(Namespace)
}

func getLease(ctx context.Context, cl *Clients, name string) (*leaseObj, error) {
	u, err := leases(cl).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var l leaseObj
	return &l, json.Unmarshal(b, &l)
}

func (l *leaseObj) unstructured() (*unstructured.Unstructured, error) {
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}

func createLease(ctx context.Context, cl *Clients, l *leaseObj) error {
	u, err := l.unstructured()
	if err == nil {
		_, err = leases(cl).Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
	}
	return err
}

// updateLease writes l with its resourceVersion: a conflict says someone
// else wrote it since it was read.
func updateLease(ctx context.Context, cl *Clients, l *leaseObj) error {
	u, err := l.unstructured()
	if err == nil {
		_, err = leases(cl).Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	}
	return err
}

// LeaseHolder is the holder of a fabric's Lease ("" when free or absent).
func LeaseHolder(ctx context.Context, cl *Clients, fabric string) (string, error) {
	l, err := getLease(ctx, cl, LeaseName(fabric))
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil || l.Spec.HolderIdentity == nil {
		return "", err
	}
	return *l.Spec.HolderIdentity, nil
}

// LeaseDuration is how long a lock outlives a holder that stopped
// renewing it (a crashed CLI): the next run may take it after that.
const LeaseDuration = 30 * time.Second

// Lease is a held fabric lock.
type Lease struct {
	Info   apply.LockInfo
	cl     *Clients
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	lost   error
}

// AcquireLease takes the fabric's lock as a coordination.k8s.io Lease, so
// two pipelines on different machines exclude each other (the SSH
// engine's lock is a local file). A Lease held and renewed by another
// run gives *apply.LockedError (exit 4); one whose holder stopped
// renewing it for LeaseDuration is taken over. timeout > 0 waits for it.
// The lease is renewed until Release.
func AcquireLease(ctx context.Context, cl *Clients, fabric, operation, version string, timeout time.Duration) (*Lease, error) {
	info := apply.LockInfo{ID: apply.NewID(), Operation: operation, Who: apply.Holder(), PID: os.Getpid(), Version: version, Created: time.Now().UTC()}
	name := LeaseName(fabric)
	deadline := time.Now().Add(timeout)
	for {
		err := tryLease(ctx, cl, name, info)
		if err == nil {
			l := &Lease{Info: info, cl: cl, name: name, done: make(chan struct{})}
			rctx, cancel := context.WithCancel(context.Background())
			l.cancel = cancel
			go l.renew(rctx)
			return l, nil
		}
		if _, locked := err.(*apply.LockedError); !locked || timeout <= 0 || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func tryLease(ctx context.Context, cl *Clients, name string, info apply.LockInfo) error {
	b, _ := json.Marshal(info)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(LeaseDuration / time.Second)
	holder := info.Who + "/" + info.ID
	cur, err := getLease(ctx, cl, name)
	if apierrors.IsNotFound(err) {
		l := &leaseObj{Metadata: leaseMeta{Name: name, Namespace: Namespace, Annotations: map[string]string{leaseInfoKey: string(b)}},
			Spec: leaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}
		err = createLease(ctx, cl, l)
		if apierrors.IsAlreadyExists(err) {
			return lockedBy(ctx, cl, name)
		}
		return wrapLeaseErr(name, err)
	}
	if err != nil {
		return wrapLeaseErr(name, err)
	}
	if held(cur) {
		return locked(name, cur)
	}
	cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds, cur.Spec.AcquireTime, cur.Spec.RenewTime = &holder, &secs, &now, &now
	if cur.Metadata.Annotations == nil {
		cur.Metadata.Annotations = map[string]string{}
	}
	cur.Metadata.Annotations[leaseInfoKey] = string(b)
	err = updateLease(ctx, cl, cur)
	if apierrors.IsConflict(err) {
		return lockedBy(ctx, cl, name) // someone else took it between our read and write
	}
	return wrapLeaseErr(name, err)
}

func wrapLeaseErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("fabric lock (Lease %s/%s): %w", Namespace, name, err)
}

// held reports a Lease with a holder that renewed it within its duration.
func held(l *leaseObj) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return false
	}
	d := LeaseDuration
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return time.Since(l.Spec.RenewTime.Time) < d
}

func lockedBy(ctx context.Context, cl *Clients, name string) error {
	cur, err := getLease(ctx, cl, name)
	if err != nil {
		return &apply.LockedError{Path: "Lease " + Namespace + "/" + name, Unreadable: err}
	}
	return locked(name, cur)
}

func locked(name string, l *leaseObj) error {
	var info apply.LockInfo
	if err := json.Unmarshal([]byte(l.Metadata.Annotations[leaseInfoKey]), &info); err != nil {
		return &apply.LockedError{Path: "Lease " + Namespace + "/" + name, Unreadable: fmt.Errorf("holder %v: %v", l.Spec.HolderIdentity, err)}
	}
	return &apply.LockedError{Path: "Lease " + Namespace + "/" + name, Info: info}
}

func (l *Lease) renew(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, err := getLease(ctx, l.cl, l.name)
		if err == nil {
			if cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity != l.Info.Who+"/"+l.Info.ID {
				l.mu.Lock()
				l.lost = fmt.Errorf("the fabric lock (Lease %s/%s) was taken by %v", Namespace, l.name, cur.Spec.HolderIdentity)
				l.mu.Unlock()
				return
			}
			now := metav1.NewMicroTime(time.Now())
			cur.Spec.RenewTime = &now
			err = updateLease(ctx, l.cl, cur)
		}
		_ = err // a missed renewal is retried; the lease lasts LeaseDuration
	}
}

// Lost says the lock was taken over while held (nil: still ours).
func (l *Lease) Lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Release stops renewing and frees the Lease (if still ours).
func (l *Lease) Release(ctx context.Context) error {
	l.cancel()
	<-l.done
	cur, err := getLease(ctx, l.cl, l.name)
	if err != nil {
		return wrapLeaseErr(l.name, err)
	}
	if cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity != l.Info.Who+"/"+l.Info.ID {
		return fmt.Errorf("the fabric lock (Lease %s/%s) was taken over by %v while this run held it", Namespace, l.name, cur.Spec.HolderIdentity)
	}
	empty := ""
	cur.Spec.HolderIdentity = &empty
	delete(cur.Metadata.Annotations, leaseInfoKey)
	err = updateLease(ctx, l.cl, cur)
	return wrapLeaseErr(l.name, err)
}
