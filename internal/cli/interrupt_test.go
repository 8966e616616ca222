package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
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
	time.Sleep(20 * time.Second) // devices in flight finishing
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
	time.Sleep(100 * time.Millisecond)
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
