package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Issue 37: a 120 KB spec nested 60,000 deep killed validate, fmt and
// render with a Go stack overflow. Each now exits 1 with an error at
// the file:line naming the limit and how to raise it.
func TestDeepSpecIsAnError(t *testing.T) {
	dir := t.TempDir()
	src := "fabric \"t\" {\n  mtu = " + strings.Repeat("[", 60000) + strings.Repeat("]", 60000) + "\n}\n"
	path := filepath.Join(dir, "deep.fab.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--static", path}, {"fmt", "--check", path}, {"render", path}, {"plan", path}} {
		f, _, stdout, stderr := testFactory()
		code := runCLI(f, args...)
		out := stdout.String() + stderr.String()
		if code != ExitError || !strings.Contains(out, "Nesting too deep") || !strings.Contains(out, "deep.fab.hcl") || !strings.Contains(out, "FABCTL_SPEC_MAX_DEPTH") {
			t.Errorf("%v: exit %d\n%.600s", args, code, out)
		}
	}
}

// The memory guard ends a run that outgrows every bound with the
// documented internal error, exit 70, and says how to raise the limit.
func TestMemoryGuard(t *testing.T) {
	var mu sync.Mutex
	exited := -1
	memGuardExit = func(code int) { mu.Lock(); exited = code; mu.Unlock() }
	t.Cleanup(func() { memGuardExit = os.Exit })
	f, _, _, stderr := testFactory(EnvMaxMemory + "=32M")
	var hold [][]byte
	cmd := &cobra.Command{Use: "grow", RunE: func(*cobra.Command, []string) error {
		for i := 0; i < 16; i++ {
			hold = append(hold, make([]byte, 8<<20))
			for j := range hold[i] {
				hold[i][j] = 1
			}
		}
		time.Sleep(400 * time.Millisecond)
		return nil
	}}
	execCmd(f, cmd, "grow")
	mu.Lock()
	defer mu.Unlock()
	if exited != int(ExitInternal) || !strings.Contains(stderr.String(), "internal error:") || !strings.Contains(stderr.String(), EnvMaxMemory) {
		t.Errorf("exit %d\n%s", exited, stderr)
	}
	_ = hold
	if n, ok := parseBytes("4G"); !ok || n != 4<<30 {
		t.Errorf("parseBytes(4G) = %d", n)
	}
}
