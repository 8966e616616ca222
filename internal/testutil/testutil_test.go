package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records what a helper does to its test; Fatal and Skip end the
// helper's goroutine as they do a test's.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Name() string        { return "TestX/sub" }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
}
func (f *fakeTB) Fatal(args ...any)                 { f.failed, f.msg = true, fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Skip(args ...any)                  { f.skipped, f.msg = true, fmt.Sprint(args...); runtime.Goexit() }

// run runs fn against a fake test and returns what it recorded.
func run(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	if f := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\n")) }); !f.failed || !strings.Contains(f.msg, "-run '^TestX$' -update") {
		t.Errorf("absent golden: %+v", f)
	}
	*update = true
	f := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nb\n")) })
	*update = false
	if got, err := os.ReadFile(path); f.failed || err != nil || string(got) != "a\nb\n" {
		t.Fatalf("-update: %+v, wrote %q (%v)", f, got, err)
	}
	if f := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nb\n")) }); f.failed {
		t.Errorf("equal: %+v", f)
	}
	f = run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\nc\n")) })
	if !f.failed || !strings.Contains(f.msg, "-b\n+c\n") || !strings.Contains(f.msg, path+" differs") {
		t.Errorf("differs: want a diff, got %+v", f)
	}
}

func TestSkipOrFail(t *testing.T) {
	t.Setenv("CI", "")
	if f := run(t, func(tb testing.TB) { SkipOrFail(tb, "no widget") }); !f.skipped || f.failed || f.msg != "no widget" {
		t.Errorf("outside CI: want a skip, got %+v", f)
	}
	t.Setenv("CI", "true")
	if f := run(t, func(tb testing.TB) { SkipOrFail(tb, "no widget") }); f.skipped || !f.failed || !strings.HasPrefix(f.msg, "no widget; ") {
		t.Errorf("CI=true: want a failure, got %+v", f)
	}
}

func TestRequireRoot(t *testing.T) {
	t.Setenv("CI", "")
	f := run(t, func(tb testing.TB) { RequireRoot(tb, "makes namespaces") })
	if os.Geteuid() == 0 {
		if f.skipped || f.failed {
			t.Errorf("root: %+v", f)
		}
		return
	}
	if !f.skipped || f.msg != "needs root: makes namespaces" {
		t.Errorf("not root: %+v", f)
	}
}

func TestShared(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if p := SharedPath(t, "yang"); p != filepath.Join(filepath.Dir(root), "shared", "yang") {
		t.Errorf("SharedPath: %s", p)
	}
	t.Setenv("CI", "")
	if f := run(t, func(tb testing.TB) { Shared(tb, "no-such-dir") }); !f.skipped || !strings.Contains(f.msg, "no-such-dir not found") {
		t.Errorf("absent: want a skip, got %+v", f)
	}
	if f := run(t, func(tb testing.TB) {
		if p := SharedIfPresent(tb, "no-such-dir"); p != "" {
			tb.Fatal(p)
		}
	}); f.skipped || f.failed {
		t.Errorf("absent, optional: %+v", f)
	}
	t.Setenv("CI", "true")
	if f := run(t, func(tb testing.TB) { Shared(tb, "no-such-dir") }); !f.failed {
		t.Errorf("absent, CI=true: want a failure, got %+v", f)
	}
	if f := run(t, func(tb testing.TB) { SharedIfPresent(tb, "no-such-dir") }); !f.failed {
		t.Errorf("absent, optional, CI=true: want a failure, got %+v", f)
	}
}

func TestLoadSrc(t *testing.T) {
	if s := LoadSrc(t, `fabric "f" {
  transport = "rocev2"
  mtu       = 9000
}
`); s == nil || s.Fabric == nil {
		t.Fatal("no fabric")
	}
	f := run(t, func(tb testing.TB) { LoadSrc(tb, `fabric "f" {`) })
	if !f.failed || !strings.Contains(f.msg, "t.fab.hcl does not load") {
		t.Errorf("broken spec: %+v", f)
	}
}

func TestJoinErrs(t *testing.T) {
	errs := make([]error, 25)
	for i := range errs {
		errs[i] = fmt.Errorf("e%d", i)
	}
	got := JoinErrs(errs)
	if !strings.HasPrefix(got, "  e0\n  e1\n") || !strings.HasSuffix(got, "  e19\n...\n") {
		t.Errorf("%q", got)
	}
}
