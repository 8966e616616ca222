// Package kubelock is the fabric lock as a coordination.k8s.io Lease
// (fabctl-system/fabctl-lock-<fabric>): an apply.Locker backend, so two
// pipelines on two machines exclude each other under --engine
// kubernetes, where the lock file would only exclude the runs of one
// machine. A held Lease is renewed every LeaseDuration/3 until Unlock; a
// holder that stops renewing it (a crashed CLI) loses it after
// kube.LeaseDuration.
//
// It is apart from package kube because it speaks apply's lock types
// (apply.LockInfo, apply.LockedError): kube holds the host driver, which
// must not import the engine (docs/architecture.md, "Layers").
package kubelock

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/kube"
)

// Locker takes fabric locks as Leases through Clients.
type Locker struct{ Clients *kube.Clients }

var _ apply.Locker = Locker{}

// Lock takes the fabric's Lease. A Lease held and renewed by another run
// gives *apply.LockedError (exit 4); one whose holder stopped renewing it
// for its duration is taken over. req.Timeout > 0 waits for it.
func (k Locker) Lock(ctx context.Context, req apply.LockRequest) (apply.HeldLock, error) {
	now := req.Now
	if now == nil {
		now = time.Now
	}
	info := apply.LockInfo{ID: apply.NewID(), Operation: req.Operation, Who: apply.Holder(), PID: os.Getpid(),
		Version: req.Version, Created: now().UTC()}
	name := kube.LeaseName(req.Fabric)
	deadline := time.Now().Add(req.Timeout)
	for {
		err := try(ctx, k.Clients, name, info)
		if err == nil {
			l := &held{info: info, cl: k.Clients, name: name, done: make(chan struct{})}
			rctx, cancel := context.WithCancel(context.Background())
			l.cancel = cancel
			go l.renew(rctx)
			return l, nil
		}
		if _, locked := err.(*apply.LockedError); !locked || req.Timeout <= 0 || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// identity is the Lease's holderIdentity of a holder.
func identity(info apply.LockInfo) string { return info.Who + "/" + info.ID }

func try(ctx context.Context, cl *kube.Clients, name string, info apply.LockInfo) error {
	b, _ := json.Marshal(info)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(kube.LeaseDuration / time.Second)
	holder := identity(info)
	cur, err := kube.GetLease(ctx, cl, name)
	if apierrors.IsNotFound(err) {
		l := &kube.Lease{Metadata: kube.LeaseMeta{Name: name, Namespace: kube.Namespace, Annotations: map[string]string{kube.LeaseInfoKey: string(b)}},
			Spec: kube.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}
		err = kube.CreateLease(ctx, cl, l)
		if apierrors.IsAlreadyExists(err) {
			return lockedBy(ctx, cl, name)
		}
		return wrap(name, err)
	}
	if err != nil {
		return wrap(name, err)
	}
	if cur.Held(time.Now()) {
		return locked(name, cur)
	}
	cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds, cur.Spec.AcquireTime, cur.Spec.RenewTime = &holder, &secs, &now, &now
	if cur.Metadata.Annotations == nil {
		cur.Metadata.Annotations = map[string]string{}
	}
	cur.Metadata.Annotations[kube.LeaseInfoKey] = string(b)
	err = kube.UpdateLease(ctx, cl, cur)
	if apierrors.IsConflict(err) {
		return lockedBy(ctx, cl, name) // someone else took it between our read and write
	}
	return wrap(name, err)
}

func where(name string) string { return "Lease " + kube.Namespace + "/" + name }

func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("fabric lock (%s): %w", where(name), err)
}

func lockedBy(ctx context.Context, cl *kube.Clients, name string) error {
	cur, err := kube.GetLease(ctx, cl, name)
	if err != nil {
		return &apply.LockedError{Path: where(name), Unreadable: err}
	}
	return locked(name, cur)
}

func locked(name string, l *kube.Lease) error {
	var info apply.LockInfo
	if err := json.Unmarshal([]byte(l.Metadata.Annotations[kube.LeaseInfoKey]), &info); err != nil {
		return &apply.LockedError{Path: where(name), Unreadable: fmt.Errorf("holder %v: %v", l.Spec.HolderIdentity, err)}
	}
	return &apply.LockedError{Path: where(name), Info: info}
}

// held is a Lease this run holds.
type held struct {
	info   apply.LockInfo
	cl     *kube.Clients
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	lost   error
}

func (l *held) Holder() apply.LockInfo { return l.info }

func (l *held) renew(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(kube.LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, err := kube.GetLease(ctx, l.cl, l.name)
		if err != nil {
			continue // a missed renewal is retried; the lease lasts LeaseDuration
		}
		if cur.Holder() != identity(l.info) {
			l.mu.Lock()
			l.lost = fmt.Errorf("the fabric lock (%s) was taken by %q", where(l.name), cur.Holder())
			l.mu.Unlock()
			return
		}
		now := metav1.NewMicroTime(time.Now())
		cur.Spec.RenewTime = &now
		_ = kube.UpdateLease(ctx, l.cl, cur) // a conflict is seen at the next renewal
	}
}

// Lost says the Lease was taken over while held (nil: still ours).
func (l *held) Lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// Unlock stops renewing and frees the Lease (if still ours).
func (l *held) Unlock(ctx context.Context) error {
	l.cancel()
	<-l.done
	cur, err := kube.GetLease(ctx, l.cl, l.name)
	if err != nil {
		return wrap(l.name, err)
	}
	if cur.Holder() != identity(l.info) {
		return fmt.Errorf("the fabric lock (%s) was taken over by %q while this run held it", where(l.name), cur.Holder())
	}
	empty := ""
	cur.Spec.HolderIdentity = &empty
	delete(cur.Metadata.Annotations, kube.LeaseInfoKey)
	return wrap(l.name, kube.UpdateLease(ctx, l.cl, cur))
}
