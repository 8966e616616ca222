package ibfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// localExec runs a command line with /bin/sh on this machine.
func localExec(ctx context.Context, cmdline string, stdin []byte) ([]byte, []byte, int, error) {
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmdline)
	var so, se bytes.Buffer
	c.Stdout, c.Stderr, c.Stdin = &so, &se, bytes.NewReader(stdin)
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return so.Bytes(), se.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return nil, nil, -1, err
	}
	return so.Bytes(), se.Bytes(), 0, nil
}

// TestShellBatch runs the batch script with /bin/sh and xargs on a
// stand-in program that prints its arguments (several lines, none for
// "empty"), fails for "bad", and sleeps a little so the calls overlap:
// every result comes back in order with its own output or error.
func TestShellBatch(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "fake smpquery")
	script := "#!/bin/sh\nsleep 0.0$(($$ % 5))\ncase \"$1\" in\nbad) echo \"ibwarn: bad port $2\" >&2; echo partial; exit 3;;\nempty) exit 0;;\nesac\necho \"# $*\"\necho \"line two of $2\"\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var args [][]string
	for i := 0; i < 40; i++ {
		op := "portinfo"
		switch i {
		case 7:
			op = "bad"
		case 11:
			op = "empty"
		}
		args = append(args, []string{op, fmt.Sprint(i + 1), "1"})
	}
	res, err := ShellBatch(context.Background(), localExec, "", prog, args, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(args) {
		t.Fatalf("%d results for %d calls", len(res), len(args))
	}
	for i, r := range res {
		switch i {
		case 7:
			if r.Err == nil || !strings.Contains(r.Err.Error(), "exit 3: ibwarn: bad port 8") || string(r.Out) != "partial\n" {
				t.Errorf("call 7: %q, %v", r.Out, r.Err)
			}
		case 11:
			if r.Err != nil || len(r.Out) != 0 {
				t.Errorf("call 11: %q, %v", r.Out, r.Err)
			}
		default:
			want := fmt.Sprintf("# portinfo %d 1\nline two of %d\n", i+1, i+1)
			if r.Err != nil || string(r.Out) != want {
				t.Errorf("call %d: %q, %v; want %q", i, r.Out, r.Err, want)
			}
		}
	}
	if _, err := ShellBatch(context.Background(), localExec, "", prog, [][]string{{"portinfo", "1;reboot"}}, 2); err == nil || !strings.Contains(err.Error(), "cannot be batched") {
		t.Errorf("a shell metacharacter: %v", err)
	}
	if res, err := ShellBatch(context.Background(), localExec, "", prog, nil, 2); err != nil || len(res) != 0 {
		t.Errorf("no calls: %v, %v", res, err)
	}
}

func FuzzParseBatch(f *testing.F) {
	f.Add([]byte("#fabctl-batch 0 0 3 0\nabc#fabctl-batch 1 2 0 4\nerr\n"), 2)
	f.Add([]byte("#fabctl-batch 0 0 99 0\nabc"), 1)
	f.Fuzz(func(t *testing.T, out []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		args := make([][]string, n)
		res, err := parseBatch("smpquery", args, out)
		if err == nil && len(res) != n {
			t.Fatalf("%d results for %d calls", len(res), n)
		}
	})
}
