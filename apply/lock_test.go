package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	now := fixedClock()
	l, err := Acquire(ctx, dir, "pod 1", LockOptions{Operation: "apply", Version: "v1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if l.Info.Path != LockPath(dir, "pod 1") || !strings.HasSuffix(l.Info.Path, "pod_1.lock") {
		t.Errorf("path %s", l.Info.Path)
	}
	st, err := os.Stat(l.Info.Path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file %v %v", st, err)
	}

	// A second run is refused, with the holder.
	_, err = Acquire(ctx, dir, "pod 1", LockOptions{Operation: "apply", Now: now})
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("error %v, want *LockedError", err)
	}
	if le.Info.ID != l.Info.ID || le.Info.Operation != "apply" || le.Info.PID != os.Getpid() || !le.Info.Created.Equal(now()) {
		t.Errorf("holder %+v", le.Info)
	}
	for _, s := range []string{l.Info.ID, "held by", "for apply since 2026-08-05T10:00:00Z"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}

	// force-unlock with the wrong ID removes nothing.
	_, err = ForceUnlock(dir, "pod 1", "not-the-id")
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("error %v", err)
	}
	if _, err := ReadLock(dir, "pod 1"); err != nil {
		t.Errorf("lock gone after a wrong ID: %v", err)
	}
	// With the right ID it is removed; the holder's Release then says so.
	info, err := ForceUnlock(dir, "pod 1", l.Info.ID)
	if err != nil || info.ID != l.Info.ID {
		t.Fatalf("%v %+v", err, info)
	}
	if _, err := ReadLock(dir, "pod 1"); !errors.Is(err, ErrNoLock) {
		t.Errorf("lock still held: %v", err)
	}
	if _, err := ForceUnlock(dir, "pod 1", l.Info.ID); !errors.Is(err, ErrNoLock) {
		t.Errorf("second force-unlock: %v", err)
	}

	// Another run takes the lock; the old holder's Release leaves it alone.
	l2, err := Acquire(ctx, dir, "pod 1", LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err == nil {
		t.Error("release of a replaced lock succeeded")
	}
	if cur, _ := ReadLock(dir, "pod 1"); cur.ID != l2.Info.ID {
		t.Errorf("lock now %+v", cur)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLock(dir, "pod 1"); !errors.Is(err, ErrNoLock) {
		t.Errorf("lock after release: %v", err)
	}
}

func TestLockWait(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l, err := Acquire(ctx, dir, "f", LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		l.Release()
	}()
	start := time.Now()
	l2, err := Acquire(ctx, dir, "f", LockOptions{Operation: "apply", Timeout: 5 * time.Second, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("waiting for the lock: %v", err)
	}
	if time.Since(start) < 40*time.Millisecond {
		t.Errorf("acquired without waiting")
	}
	// A timeout that expires reports the holder.
	start = time.Now()
	_, err = Acquire(ctx, dir, "f", LockOptions{Operation: "apply", Timeout: 60 * time.Millisecond, Poll: 10 * time.Millisecond})
	var le *LockedError
	if !errors.As(err, &le) || le.Info.ID != l2.Info.ID || time.Since(start) < 50*time.Millisecond {
		t.Errorf("%v after %v", err, time.Since(start))
	}
}

func TestLockUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(LockPath(dir, "f"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(context.Background(), dir, "f", LockOptions{})
	var le *LockedError
	if !errors.As(err, &le) || le.Unreadable == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("%v", err)
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"pod-1": "pod-1", "a/b": "a_b", "": "fabric", "..": "fabric", "x y": "x_y"} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}
