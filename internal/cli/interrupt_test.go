package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
)

// TestInterruptHelper is the child process of TestSecondInterruptExits.
func TestInterruptHelper(t *testing.T) {
	if os.Getenv("FABCTL_INTERRUPT_HELPER") != "1" {
		t.Skip("helper process of TestSecondInterruptExits")
	}
	ctx, release := interruptContext(func() { fmt.Println("FIRST") })
	defer release()
	fmt.Println("READY")
	<-ctx.Done()
	wait := 20 * time.Second // devices in flight finishing
	if d, err := time.ParseDuration(os.Getenv("FABCTL_INTERRUPT_HELPER_WAIT")); err == nil {
		wait = d
	}
	time.Sleep(wait)
	fmt.Println("DONE")
	os.Exit(0)
}

// Issue 21: the first interrupt cancels (no new device); the second ends
// the process at once, exit 130, saying that the lock stays and how the
// next run explains it.
func TestSecondInterruptExits(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptHelper$")
	cmd.Env = append(os.Environ(), "FABCTL_INTERRUPT_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
	}()
	wait := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("helper ended before %s", want)
				}
				if l == want {
					return
				}
			case <-deadline:
				t.Fatalf("no %s from the helper", want)
			}
		}
	}
	wait("READY")
	_ = cmd.Process.Signal(syscall.SIGINT)
	wait("FIRST")
	time.Sleep(sameInterrupt + 200*time.Millisecond)
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		// Exit 130 (not a death by signal, not 0), saying what it left.
		if code := cmd.ProcessState.ExitCode(); code != 130 || err == nil {
			t.Errorf("exit %d (%v) after a second interrupt, want 130", code, err)
		}
		if !strings.Contains(stderr.String(), "Second interrupt") || !strings.Contains(stderr.String(), "force-unlock") {
			t.Errorf("stderr does not explain the lock and journal left:\n%s", stderr.String())
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the second interrupt took %v to end the process", d)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("the second interrupt did not end the process")
	}
}

// Issue 37: one signal is one interrupt. GNU timeout delivers its
// SIGTERM to fabctl and again to the process group; the repeat (and any
// SIGPIPE) is the same interrupt, so the run finishes as after one
// Ctrl-C instead of exiting 130 with the lock held.
func TestRepeatedSignalIsOneInterrupt(t *testing.T) {
	for _, second := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		t.Run(second.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptHelper$")
			cmd.Env = append(os.Environ(), "FABCTL_INTERRUPT_HELPER=1", "FABCTL_INTERRUPT_HELPER_WAIT=1s")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(out)
			if !sc.Scan() || sc.Text() != "READY" {
				t.Fatalf("helper: %q", sc.Text())
			}
			// Apart enough that the kernel does not merge them into one
			// pending signal: timeout's two deliveries race like this.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			time.Sleep(50 * time.Millisecond)
			_ = cmd.Process.Signal(second)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 0 || err != nil || strings.Join(lines, ",") != "FIRST,DONE" {
				t.Errorf("SIGTERM then %v: exit %d (%v), output %q; want one interrupt: FIRST, DONE, exit 0", second, code, err, lines)
			}
		})
	}
}

// TestApplySignalHelper is the child process of TestApplySignalsEndLikeInterrupt:
// an apply whose devices take a while, reporting how it ended.
func TestApplySignalHelper(t *testing.T) {
	if os.Getenv("FABCTL_APPLY_SIGNAL_HELPER") != "1" {
		t.Skip("helper process of TestApplySignalsEndLikeInterrupt")
	}
	e := newApplyEnv(t)
	e.converge()
	var once sync.Once
	e.wrap = func(d drivers.Driver) drivers.Driver {
		return slowApply{Driver: d, started: func() { once.Do(func() { fmt.Println("APPLYING") }) }}
	}
	f, _, _, stderr := e.factory()
	code := runCLI(f, "apply", "--auto-approve", "--on-failure", "continue", e.spec)
	fmt.Printf("EXIT %d\n", code)
	if _, err := os.Stat(apply.LockPath(e.stateDir(), "ten")); errors.Is(err, os.ErrNotExist) {
		fmt.Println("LOCK released")
	} else {
		fmt.Printf("LOCK held (%v)\n", err)
	}
	journals, _ := filepath.Glob(filepath.Join(e.stateDir(), "journal", "*.jsonl"))
	for _, j := range journals {
		fh, err := os.Open(j)
		if err != nil {
			continue
		}
		entries, _ := apply.ParseJournal(fh)
		fh.Close()
		for _, en := range entries {
			if en.Event == apply.EventRunEnd {
				fmt.Printf("RUN_END %s\n", en.Status)
			}
		}
	}
	fmt.Printf("STDERR %q\n", stderr.String())
	if strings.Contains(stderr.String(), "Second interrupt") {
		fmt.Println("SECOND")
	}
}

type slowApply struct {
	drivers.Driver
	started func()
}

func (d slowApply) Apply(ctx context.Context, t drivers.Target, ch []drivers.Change, o drivers.ApplyOptions) (drivers.Result, error) {
	d.started()
	time.Sleep(time.Second) // a device in flight finishes its transaction
	return d.Driver.Apply(ctx, t, ch, o)
}

// Issue 37: SIGHUP (the terminal or SSH session closed), SIGPIPE (the
// reader of the output went away) and SIGTERM end an apply the way the
// first Ctrl-C does: devices in flight finish, the journal gets its
// run_end, the lock is released, exit 1 ("interrupted"). A repeated
// SIGTERM (GNU timeout signals the process and its group) is one
// interrupt, not the second one that exits 130 and leaves the lock.
func TestApplySignalsEndLikeInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
	}{
		{"SIGINT", []syscall.Signal{syscall.SIGINT}},
		{"SIGHUP", []syscall.Signal{syscall.SIGHUP}},
		{"SIGPIPE", []syscall.Signal{syscall.SIGPIPE}},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}},
		{"timeout", []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestApplySignalHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "FABCTL_APPLY_SIGNAL_HELPER=1")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var closedErr *os.File
			if tc.name == "SIGPIPE" {
				// The reader of the output went away: stderr is a pipe
				// nobody reads any more (a SIGPIPE otherwise is a network
				// peer's, TestSocketSIGPIPEIsNoInterrupt).
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				cmd.Stderr, closedErr = w, w
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if closedErr != nil {
				closedErr.Close()
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(out)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if sc.Text() == "APPLYING" {
					for i, s := range tc.sigs {
						if i > 0 {
							time.Sleep(50 * time.Millisecond) // not merged by the kernel
						}
						_ = cmd.Process.Signal(s)
					}
				}
			}
			_ = cmd.Wait()
			got := strings.Join(lines, "\n")
			for _, want := range []string{"EXIT 1", "LOCK released", "RUN_END ", "Interrupt received", "not attempted (interrupted)"} {
				if !strings.Contains(got, want) {
					t.Errorf("%s: no %q; the helper printed:\n%s", tc.name, want, got)
				}
			}
			if strings.Contains(got, "SECOND") {
				t.Errorf("%s: counted as a second interrupt:\n%s", tc.name, got)
			}
		})
	}
}

// TestSocketSIGPIPEHelper is the child process of
// TestSocketSIGPIPEIsNoInterrupt: it writes to a TCP connection its peer
// reset, as client-go does to a kube-apiserver that was killed.
func TestSocketSIGPIPEHelper(t *testing.T) {
	if os.Getenv("FABCTL_SOCKET_SIGPIPE_HELPER") != "1" {
		t.Skip("helper process of TestSocketSIGPIPEIsNoInterrupt")
	}
	ctx, release := interruptContext(func() { fmt.Println("INTERRUPTED") })
	defer release()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	peer, err := l.Accept()
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	_ = peer.(*net.TCPConn).SetLinger(0) // close with RST, as a killed process's socket
	peer.Close()
	l.Close()
	epipe := false
	for i := 0; i < 100 && !epipe; i++ {
		_, err := c.Write([]byte("x"))
		epipe = errors.Is(err, syscall.EPIPE)
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("EPIPE", epipe)
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		fmt.Println("RUNNING")
	}
}

// A write to a TCP connection whose peer is gone raises SIGPIPE, which
// Go delivers to a process that asked for SIGPIPE: that is no interrupt
// (make e2e-kube's apiserver restart stopped apply --engine kubernetes
// mid-rollout, "Interrupt received", and ended agent --kube, whose host
// then never reported). Only a reader of the output going away is
// (TestApplySignalsEndLikeInterrupt/SIGPIPE).
func TestSocketSIGPIPEIsNoInterrupt(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSocketSIGPIPEHelper$")
	cmd.Env = append(os.Environ(), "FABCTL_SOCKET_SIGPIPE_HELPER=1")
	out, err := cmd.CombinedOutput()
	got := string(out)
	if err != nil || !strings.Contains(got, "EPIPE true") || !strings.Contains(got, "RUNNING") || strings.Contains(got, "INTERRUPTED") {
		t.Fatalf("a SIGPIPE from a socket write: %v\n%s\nwant EPIPE true and RUNNING (no interrupt)", err, got)
	}
}
