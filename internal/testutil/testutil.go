// Package testutil holds the helpers the tests of several packages share:
// the -update flag and golden files, the root and CI rules for tests that
// need privileges or reference material, ../shared lookups, spec loading,
// command and namespace helpers, CPU time for benchmarks. It is a normal
// package so that it compiles once, but only _test.go files (and test rig
// packages such as internal/switchtest) import it.
//
// It imports spec but not intent, so every package's tests may use it
// except spec's own internal (package spec) tests, which would make a
// cycle; those can use an external package spec_test file.
//
// The rule for tests that cannot run here: they skip and say why, except
// under CI=true, where nothing may skip for want of root or reference
// material (CI runs as root with ../shared checked out), so there they
// fail.
package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/pmezard/go-difflib/difflib"

	"github.com/fabctl/fabctl/spec"
)

// update is the -update flag of every test binary that imports testutil:
// `go test ./PKG -update` rewrites PKG's golden files.
var update = flag.Bool("update", false, "rewrite golden files")

// Update reports whether the test binary runs with -update.
func Update() bool { return *update }

// Golden compares got with the golden file at path. With -update it
// writes got there instead (creating the directory). A difference fails
// the test with a unified diff, want against got.
func Golden(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -run '%s' -update to create it)", err, rootName(tb))
	}
	if !bytes.Equal(want, got) {
		diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(want)), B: difflib.SplitLines(string(got)),
			FromFile: "want " + path, ToFile: "got", Context: 3,
		})
		tb.Errorf("%s differs (run go test -run '%s' -update and review the diff):\n%s", path, rootName(tb), diff)
	}
}

// rootName is the name of tb's top-level test.
func rootName(tb testing.TB) string {
	name, _, _ := strings.Cut(tb.Name(), "/")
	return "^" + name + "$"
}

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips tb with msg, or under CI=true fails it: there nothing
// may skip for want of what CI provides.
func SkipOrFail(tb testing.TB, msg string) {
	tb.Helper()
	if CI() {
		tb.Fatal(msg + "; CI=true provides it, so this must not skip")
	}
	tb.Skip(msg)
}

// RequireRoot skips tb unless the process runs as root, with why (what
// the test does that needs root) as the reason; under CI=true, which runs
// as root, that is a failure.
func RequireRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() == 0 {
		return
	}
	SkipOrFail(tb, "needs root: "+why)
}

// RepoRoot is the absolute directory holding the module's go.mod, found
// by walking up from the working directory (the package's directory).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod above %s", wd)
		}
		dir = parent
	}
}

// SharedPath is elem under the shared reference material, ../shared
// next to the repository root (YANG models, schemas, vendor references),
// whether it is there or not.
func SharedPath(tb testing.TB, elem ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{filepath.Dir(RepoRoot(tb)), "shared"}, elem...)...)
}

// Shared is the path of elem under ../shared (see SharedPath). When it is
// absent the test skips, or fails under CI=true (CI checks ../shared out).
func Shared(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := SharedPath(tb, elem...)
	if _, err := os.Stat(p); err != nil {
		SkipOrFail(tb, fmt.Sprintf("%s not found (%v): put the shared reference material in ../shared next to the repository to run (README.md, \"Reference material beside the clone\", says where each part comes from)", p, err))
	}
	return p
}

// SharedIfPresent is Shared for tests that can run without it: the path
// when present; when absent, "" (logged), or a failure under CI=true.
func SharedIfPresent(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := SharedPath(tb, elem...)
	if _, err := os.Stat(p); err != nil {
		if CI() {
			tb.Fatalf("%s not found (%v): required when CI=true", p, err)
		}
		tb.Logf("%s not found (%v): running without it", p, err)
		return ""
	}
	return p
}

// CPUTime is the process's user + system CPU time so far: with other
// work on the machine, CPU seconds per op are steadier than wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadSrc loads src as a spec of the one file t.fab.hcl, with default
// options and the built-in platforms; diagnostics fail the test.
func LoadSrc(tb testing.TB, src string) *spec.Spec {
	tb.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{Platforms: Platforms()})
	if diags.HasErrors() {
		tb.Fatalf("t.fab.hcl does not load:\n%s", diagText(s, diags))
	}
	return s
}

// Load loads the spec at path (a directory or a file) with opts (the
// built-in platforms when opts names none); diagnostics fail the test.
func Load(tb testing.TB, path string, opts spec.LoadOptions) *spec.Spec {
	tb.Helper()
	if opts.Platforms == nil {
		opts.Platforms = Platforms()
	}
	s, diags := spec.Load(path, opts)
	if diags.HasErrors() {
		tb.Fatalf("%s does not load:\n%s", path, diagText(s, diags))
	}
	return s
}

// diagText renders diagnostics with their source lines when the files
// are there.
func diagText(s *spec.Spec, diags hcl.Diagnostics) string {
	if s == nil {
		return diags.Error()
	}
	var b strings.Builder
	if err := spec.WriteText(&b, diags, s.Files, 120, false); err != nil {
		return diags.Error()
	}
	return b.String()
}

// Run runs a command, failing the test with its output when it fails,
// and returns its combined output.
func Run(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Netns creates the network namespace name (removing a stale one left by
// an earlier run first) and removes it at cleanup. It needs root.
func Netns(tb testing.TB, name string) {
	tb.Helper()
	_ = exec.Command("ip", "netns", "del", name).Run()
	Run(tb, "ip", "netns", "add", name)
	tb.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
}

// FabdcbDevs is the first n devices of the fabdcb kernel module
// (testbed/vm/kmod/fabdcb) named by FABCTL_FABDCB, which the VM testbed's
// dcb section sets; anywhere else the test skips (no software netdev in
// Linux implements dcbnl).
func FabdcbDevs(tb testing.TB, n int) []string {
	tb.Helper()
	v := os.Getenv("FABCTL_FABDCB")
	if v == "" {
		tb.Skip("needs the fabdcb kernel module: run in the VM testbed (make e2e-vm FABTB_SECTIONS=dcb)")
	}
	devs := strings.Fields(v)
	if len(devs) < n {
		tb.Fatalf("FABCTL_FABDCB=%q: need %d devices", v, n)
	}
	return devs[:n]
}

// DCBSet runs an iproute2 dcb set/add/del command. iproute2 6.1's dcb
// sets NLM_F_ACK but stops reading at the reply, so the SET that follows
// its GET reads the GET's ACK: within the same second it takes it for
// success (and never sees the driver's status), across a second boundary
// (the sequence number is time(NULL)) it fails with "Attribute write:
// Protocol error". The commands are idempotent: that one is retried once.
func DCBSet(tb testing.TB, args ...string) {
	tb.Helper()
	out, err := exec.Command("dcb", args...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "Protocol error") {
		tb.Logf("dcb %s: %s: retrying once (iproute2 6.1 dcb ACK bug)", strings.Join(args, " "), strings.TrimSpace(string(out)))
		out, err = exec.Command("dcb", args...).CombinedOutput()
	}
	if err != nil {
		tb.Fatalf("dcb %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// JoinErrs lists errs one a line, indented, at most 20 of them.
func JoinErrs[E error](errs []E) string {
	var b strings.Builder
	for i, e := range errs {
		if i == 20 {
			b.WriteString("...\n")
			break
		}
		b.WriteString("  " + e.Error() + "\n")
	}
	return b.String()
}

// NetnsHostSpec is a one-host RoCEv2 spec whose host is reached as
// `ssh+netns:fabctl-agent-t` with sudo: the fixture of the agent's and its
// protocol's tests (intent.Compile(LoadSrc(t, NetnsHostSpec)).Hosts[0]).
const NetnsHostSpec = `
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
credentials "h" {
  username    = "root"
  private_key = file("/nonexistent/key")
}
host "h1" {
  address     = "127.0.0.1:2222"
  connect     = "ssh+netns:fabctl-agent-t"
  credentials = "h"
  sudo        = true
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["198.18.0.1/31"]
  }
}
`
