package apply

import (
	"context"
	"time"
)

// Locker is a backend of the fabric lock, which RunFabric holds for a
// whole run (planning included): the lock file in the state directory
// (FileLocker, lock.go), or a coordination.k8s.io Lease that runs on
// different machines share (kube/kubelock). One interface, as
// Terraform's state managers share statemgr.Locker and gnmic's lockers
// share lockers.Locker.
type Locker interface {
	// Lock takes the lock on req.Fabric. A lock another run holds is a
	// *LockedError (with its holder), after waiting up to req.Timeout.
	Lock(ctx context.Context, req LockRequest) (HeldLock, error)
}

// LockRequest is what a run asks a Locker for.
type LockRequest struct {
	Fabric    string
	Operation string // "apply"
	Version   string // the running fabctl's version, recorded with the holder
	// Timeout > 0 waits for a lock another run holds.
	Timeout time.Duration
	// Now is the clock of the holder's record (nil: time.Now).
	Now func() time.Time
}

// HeldLock is a lock a run holds.
type HeldLock interface {
	// Holder is the record the lock carries.
	Holder() LockInfo
	// Lost reports a lock taken over while this run held it (nil: still
	// held). A run starts no new wave once it is lost.
	Lost() error
	// Unlock frees the lock if it is still this run's.
	Unlock(ctx context.Context) error
}

// FileLocker is the fabric lock as a file in a state directory
// (<state-dir>/<fabric>.lock, Acquire): it excludes the runs of one
// machine that share the directory.
type FileLocker struct{ StateDir string }

// Lock takes the lock file.
func (f FileLocker) Lock(ctx context.Context, req LockRequest) (HeldLock, error) {
	l, err := Acquire(ctx, f.StateDir, req.Fabric, LockOptions{Operation: req.Operation, Version: req.Version,
		Timeout: req.Timeout, Now: req.Now})
	if err != nil {
		return nil, err
	}
	return heldFile{l}, nil
}

// heldFile is a held lock file. A file lock is never taken over: only
// force-unlock removes it, which Unlock then reports.
type heldFile struct{ l *Lock }

func (h heldFile) Holder() LockInfo             { return h.l.Info }
func (h heldFile) Lost() error                  { return nil }
func (h heldFile) Unlock(context.Context) error { return h.l.Release() }
