package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Issue 37: whatever is planted at the lock file's path (a dangling or
// live link, a FIFO, a directory, a link to /dev/zero), Acquire neither
// follows it, blocks on it, nor spins: it reports the lock as held and
// unreadable, names what is there, returns by --lock-timeout and at once
// on cancellation, and uses little CPU while it waits.
func TestLockPlantedPaths(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(path, dir string) error
		says  string
	}{
		{"dangling link", func(p, dir string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) }, "symbolic link"},
		{"link to a lock", func(p, dir string) error {
			other := filepath.Join(dir, "other.json")
			if err := os.WriteFile(other, []byte(`{"id":"x","operation":"apply"}`), 0o600); err != nil {
				return err
			}
			return os.Symlink(other, p)
		}, "symbolic link"},
		{"link to /dev/zero", func(p, _ string) error { return os.Symlink("/dev/zero", p) }, "symbolic link"},
		{"FIFO", func(p, _ string) error { return syscall.Mkfifo(p, 0o600) }, "FIFO"},
		{"directory", func(p, _ string) error { return os.Mkdir(p, 0o700) }, "directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := LockPath(dir, "f")
			if err := c.plant(path, dir); err != nil {
				t.Skip(err)
			}
			for _, mode := range []string{"timeout", "cancel"} {
				ctx, cancel := context.WithCancel(context.Background())
				timeout := 400 * time.Millisecond
				if mode == "cancel" {
					timeout = time.Hour
					time.AfterFunc(150*time.Millisecond, cancel)
				}
				var ru0, ru1 syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
				start := time.Now()
				done := make(chan error, 1)
				go func() {
					_, err := Acquire(ctx, dir, "f", LockOptions{Operation: "apply", Timeout: timeout, Poll: 20 * time.Millisecond})
					done <- err
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					cancel()
					t.Fatalf("%s: Acquire did not return (past --lock-timeout / cancellation)", mode)
				}
				cancel()
				took := time.Since(start)
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
				cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime)-syscall.TimevalToNsec(ru0.Utime)) +
					time.Duration(syscall.TimevalToNsec(ru1.Stime)-syscall.TimevalToNsec(ru0.Stime))
				var le *LockedError
				if !errors.As(err, &le) || le.Unreadable == nil || !strings.Contains(err.Error(), c.says) {
					t.Errorf("%s: %v, want a held, unreadable lock that says %q", mode, err, c.says)
				}
				if took > 2*time.Second {
					t.Errorf("%s: returned after %v", mode, took)
				}
				// A busy loop would burn about as much CPU as the wait took.
				if cpu > took/2 {
					t.Errorf("%s: %v of CPU in a %v wait: the lock loop spins", mode, cpu, took)
				}
			}
			if st, err := os.Lstat(path); err != nil || (c.name != "directory" && st.Mode().IsRegular()) {
				t.Errorf("the planted %s was replaced: %v", c.name, err)
			}
		})
	}
}
