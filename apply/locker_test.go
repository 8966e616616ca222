package apply

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// testLocker is a Locker backend other than the file: it records what
// RunFabric asked for and what it released.
type testLocker struct {
	holder   *LockInfo // another run's lock: Lock refuses with it
	req      LockRequest
	unlocked int
	lost     error
}

func (l *testLocker) Lock(_ context.Context, req LockRequest) (HeldLock, error) {
	l.req = req
	if l.holder != nil {
		return nil, &LockedError{Path: "test lock", Info: *l.holder}
	}
	return testHeld{l}, nil
}

type testHeld struct{ l *testLocker }

func (h testHeld) Holder() LockInfo { return LockInfo{ID: "mine"} }
func (h testHeld) Lost() error      { return h.l.lost }
func (h testHeld) Unlock(context.Context) error {
	h.l.unlocked++
	return nil
}

// TestRunFabricLocker: RunFabric holds the lock of the backend it is
// given (not the state directory's file) for the whole run, releases it
// at the end, and a lock that backend says another run holds ends the
// run locked, with the holder.
func TestRunFabricLocker(t *testing.T) {
	ctx := context.Background()
	store, o := runFixture(t)
	lk := &testLocker{}
	o.Locker = lk
	// A lock file in the state directory is not this run's lock.
	file, err := Acquire(ctx, o.StateDir, "t", LockOptions{Operation: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Release()
	out, err := RunFabric(ctx, o)
	if err != nil || out.Status != RunApplied || store.Get("h1")["nic/eth1/mtu"] != "9000" {
		t.Fatalf("run with a Lease-like locker: %+v %v", out, err)
	}
	if lk.req.Fabric != "t" || lk.req.Operation != "apply" || lk.req.Version != "test" || lk.unlocked != 1 {
		t.Fatalf("lock request %+v, unlocked %d times: want fabric t, operation apply, version test, unlocked once", lk.req, lk.unlocked)
	}

	lk.holder = &LockInfo{ID: "theirs", Operation: "apply", Who: "ci@runner2"}
	out, err = RunFabric(ctx, o)
	var le *LockedError
	if out.Status != RunLocked || !errors.As(err, &le) || out.Lock == nil || out.Lock.Who != "ci@runner2" || !strings.Contains(err.Error(), "theirs") {
		t.Fatalf("locked by another run: %+v %v", out, err)
	}
	if lk.unlocked != 1 {
		t.Fatalf("a lock this run never held was unlocked")
	}
}

// TestFileLocker: the lock file backend is Acquire and Release behind
// the interface.
func TestFileLocker(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := FileLocker{StateDir: dir}
	h, err := l.Lock(ctx, LockRequest{Fabric: "f", Operation: "apply", Version: "v", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := ReadLock(dir, "f"); err != nil || info.ID != h.Holder().ID || info.Version != "v" {
		t.Fatalf("lock file %+v %v, holder %+v", info, err, h.Holder())
	}
	var le *LockedError
	if _, err := l.Lock(ctx, LockRequest{Fabric: "f", Operation: "apply"}); !errors.As(err, &le) || le.Info.ID != h.Holder().ID {
		t.Fatalf("second lock: %v", err)
	}
	if h.Lost() != nil {
		t.Fatal("a lock file is never lost")
	}
	if err := h.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLock(dir, "f"); !errors.Is(err, ErrNoLock) {
		t.Fatalf("after Unlock: %v", err)
	}
}
