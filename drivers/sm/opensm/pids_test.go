package opensm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeOpenSMEnv makes this test binary, copied to a file named opensm,
// sleep as a stand-in opensm process: pidof finds it by that name and
// /proc/PID/cmdline holds the arguments it was started with.
const fakeOpenSMEnv = "FABCTL_FAKE_OPENSM"

func fakeOpenSM() {
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestPidScriptSignalsOnlyItsOpenSM: without a pid file, fabctl signals
// the opensm processes that read the opensm.conf it writes, and none
// started on another configuration (another subnet's opensm, a test
// bed's): -F FILE, -FFILE, --config FILE, --config=FILE, a path relative
// to the process's working directory, and no option (the default file).
func TestPidScriptSignalsOnlyItsOpenSM(t *testing.T) {
	if _, err := exec.LookPath("pidof"); err != nil {
		t.Skip("pidof is not installed (Debian: procps)")
	}
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "opensm")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "etc", "opensm.conf")
	theirs := filepath.Join(dir, "other", "opensm.conf")
	def := filepath.Join(dir, "default", "opensm.conf")
	for _, d := range []string{filepath.Dir(ours), filepath.Dir(theirs), filepath.Dir(def)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := func(cwd string, args ...string) int {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = cwd
		c.Env = append(os.Environ(), fakeOpenSMEnv+"=1")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c.Process.Pid
	}
	want := []int{
		start(dir, "-F", ours),
		start(dir, "-F"+ours),
		start(dir, "--config", ours),
		start(dir, "--config="+ours),
		start(filepath.Dir(ours), "-F", "opensm.conf"),
	}
	other := []int{
		start(dir, "-F", theirs),
		start(dir, "--config="+theirs),
		start(dir), // the default file, not ours
	}
	// The processes must have exec'd (their cmdline is the fake's).
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range append(slices.Clone(want), other...) {
		for {
			c, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if strings.HasPrefix(string(c), bin) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	run := func(conf, defConf string) []int {
		t.Helper()
		out, err := exec.CommandContext(context.Background(), "/bin/sh", "-c", pidScript, "fabctl", "", conf, defConf).Output()
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, f := range strings.Fields(string(out)) {
			if n, err := strconv.Atoi(f); err == nil {
				got = append(got, n)
			}
		}
		slices.Sort(got)
		return got
	}
	slices.Sort(want)
	if got := run(ours, def); !slices.Equal(got, want) {
		t.Errorf("pids for %s: %v, want %v (others %v)", ours, got, want, other)
	}
	// The one started without -F reads the default file.
	if got := run(def, def); !slices.Equal(got, []int{other[2]}) {
		t.Errorf("pids for the default file: %v, want [%d]", got, other[2])
	}
}
