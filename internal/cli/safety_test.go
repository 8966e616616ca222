package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
)

// Issue 21: a saved plan whose native steps were edited and re-sealed
// (the seal is only a checksum) is refused: apply re-derives every
// device's steps from the embedded spec and the live state.
func TestApplySavedPlanForgedSteps(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	sp := e.savePlan(f, planFile)
	dp := sp.Plan.Device("leaf1")
	dp.Steps = append(dp.Steps, drivers.Change{Paths: []string{"hostname"}, Summary: "set hostname", Payload: []string{`set hostname "pwned"`}})
	if err := sp.Write(planFile); err != nil { // re-sealed, as anyone who can write the file can
		t.Fatal(err)
	}
	code := runCLI(f, "apply", planFile)
	if code != ExitError {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 || e.store.Get("leaf1")["hostname"] != "" {
		t.Errorf("forged plan applied: %v", e.store.Applied)
	}
	if !strings.Contains(stderr.String(), "switch.leaf1") || !strings.Contains(stderr.String(), "do not follow from the plan's spec") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// Issue 21: a journal that cannot be written fails the run before any
// device is touched.
func TestApplyJournalUnwritable(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	code := runCLI(f, "apply", "--auto-approve", "--journal", "/dev/full", e.spec)
	if code != ExitError {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("applied without a journal: %v", e.store.Applied)
	}
	if !strings.Contains(stderr.String(), "journal") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// Issue 21: a saved plan applied from another directory uses the lock
// and applied record of the fabric it was made for, not ./.fabctl.
func TestApplySavedPlanElsewhereUsesItsLock(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, stdout, stderr := e.factory()
	t.Chdir(e.spec)
	if code := runCLI(f, "plan", "-out", "../plan.fab"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	held, err := apply.Acquire(context.Background(), e.stateDir(), "t", apply.LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	other := filepath.Join(e.dir, "elsewhere")
	writeFile(t, filepath.Join(other, "README"), "another directory\n")
	t.Chdir(other)
	f, _, stdout, stderr = e.factory()
	code := runCLI(f, "apply", "../plan.fab")
	if code != ExitLocked {
		t.Errorf("exit %d, want 4 (the fabric's lock is held)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("applied beside a run holding the lock: %v", e.store.Applied)
	}
	if _, err := os.Stat(filepath.Join(other, ".fabctl")); err == nil {
		t.Errorf("a new state directory was created in the current directory")
	}
	// A plan whose state directory is gone is refused, never given a new lock.
	held.Release()
	if err := os.RemoveAll(e.stateDir()); err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "apply", "../plan.fab"); code != ExitError || !strings.Contains(stderr.String(), "--state-dir") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("applied with a new lock: %v", e.store.Applied)
	}
}

// Issue 21: force-unlock never shows the real lock ID for a wrong one,
// and refuses to remove the lock of a run alive on this machine unless
// --force is given as well.
func TestForceUnlockSafety(t *testing.T) {
	e := newApplyEnv(t)
	held, err := apply.Acquire(context.Background(), e.stateDir(), "t", apply.LockOptions{Operation: "apply"})
	if err != nil {
		t.Fatal(err)
	}
	for _, json := range []bool{false, true} {
		f, _, stdout, stderr := e.factory()
		args := []string{"force-unlock", "0000", e.spec}
		if json {
			args = append(args, "--json")
		}
		if code := runCLI(f, args...); code != ExitError {
			t.Errorf("wrong ID: exit %d", code)
		}
		if out := stdout.String() + stderr.String(); strings.Contains(out, held.Info.ID) || !strings.Contains(out, "does not match") {
			t.Errorf("wrong ID (json %v): the output reveals the lock ID or says nothing:\n%s", json, out)
		}
	}
	// The holder (this test process) is alive: refused.
	f, _, stdout, stderr := e.factory()
	if code := runCLI(f, "force-unlock", held.Info.ID, e.spec); code != ExitError || !strings.Contains(stderr.String(), "still running") {
		t.Errorf("live holder: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := apply.ReadLock(e.stateDir(), "t"); err != nil {
		t.Fatalf("a live run's lock was removed: %v", err)
	}
	f, _, stdout, stderr = e.factory()
	if code := runCLI(f, "force-unlock", "--force", held.Info.ID, e.spec); code != ExitOK {
		t.Errorf("--force: exit %d\n%s%s", code, stdout, stderr)
	}
}

// Issue 21: a FIFO (or any non-regular file) as the spec is refused at
// once instead of blocking for ever.
func TestSpecFIFORefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "spec.fab.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, cmd := range [][]string{{"plan", fifo}, {"apply", "--auto-approve", fifo}, {"plan", dir}} {
		done := make(chan ExitCode, 1)
		f, _, _, stderr := testFactory()
		go func() { done <- runCLI(f, cmd...) }()
		select {
		case code := <-done:
			if code != ExitError || !strings.Contains(stderr.String(), "not a regular file") {
				t.Errorf("%v: exit %d\n%s", cmd, code, stderr)
			}
		case <-time.After(5 * time.Second):
			// Unblock the reader so the goroutine ends.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("%v blocked on a FIFO", cmd)
		}
	}
}
