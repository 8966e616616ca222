package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabctl/fabctl/apply"
)

// LeaseName is the fabric lock's Lease in Namespace: fabctl-lock-<fabric>.
func LeaseName(fabric string) string {
	return "fabctl-lock-" + strings.ToLower(strings.ReplaceAll(apply.SafeName(fabric), "_", "-"))
}

// leaseInfoKey is the annotation holding the holder's apply.LockInfo.
const leaseInfoKey = "fabctl.io/lock"

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
	leases := cl.Coord.Leases(Namespace)
	b, _ := json.Marshal(info)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(LeaseDuration / time.Second)
	holder := info.Who + "/" + info.ID
	cur, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Annotations: map[string]string{leaseInfoKey: string(b)}},
			Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{FieldManager: FieldManager})
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
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[leaseInfoKey] = string(b)
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
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
func held(l *coordv1.Lease) bool {
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
	cur, err := cl.Coord.Leases(Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return &apply.LockedError{Path: "Lease " + Namespace + "/" + name, Unreadable: err}
	}
	return locked(name, cur)
}

func locked(name string, l *coordv1.Lease) error {
	var info apply.LockInfo
	if err := json.Unmarshal([]byte(l.Annotations[leaseInfoKey]), &info); err != nil {
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
		leases := l.cl.Coord.Leases(Namespace)
		cur, err := leases.Get(ctx, l.name, metav1.GetOptions{})
		if err == nil {
			if cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity != l.Info.Who+"/"+l.Info.ID {
				l.mu.Lock()
				l.lost = fmt.Errorf("the fabric lock (Lease %s/%s) was taken by %v", Namespace, l.name, cur.Spec.HolderIdentity)
				l.mu.Unlock()
				return
			}
			now := metav1.NewMicroTime(time.Now())
			cur.Spec.RenewTime = &now
			_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
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
	leases := l.cl.Coord.Leases(Namespace)
	cur, err := leases.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return wrapLeaseErr(l.name, err)
	}
	if cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity != l.Info.Who+"/"+l.Info.ID {
		return fmt.Errorf("the fabric lock (Lease %s/%s) was taken over by %v while this run held it", Namespace, l.name, cur.Spec.HolderIdentity)
	}
	empty := ""
	cur.Spec.HolderIdentity = &empty
	delete(cur.Annotations, leaseInfoKey)
	_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
	return wrapLeaseErr(l.name, err)
}
