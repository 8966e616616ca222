package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Issue 21: the set functions are linear (sets iterate sorted, so n log
// n), where the quadratic library took 9-13 s for toset of a 30,000-string
// tuple and 3 minutes for distinct. The verdict is the growth, not a wall
// time (a loaded machine makes any fixed bound flaky): ten times the
// elements may cost at most 60 times the CPU (n log n gives 11-27 here, a
// quadratic function 100), the best of five runs each, each after a
// garbage collection so that no run pays for another's garbage.
func TestSetFunctionsLinear(t *testing.T) {
	fns := Functions()
	inputs := func(n int) map[string][]cty.Value {
		vals := make([]cty.Value, n)
		for i := range vals {
			vals[i] = cty.StringVal(fmt.Sprintf("gpu%05d", i%(n-10)))
		}
		tuple, list, set := cty.TupleVal(vals), cty.ListVal(vals), cty.SetVal(vals)
		return map[string][]cty.Value{
			"toset tuple": {tuple}, "toset list": {list}, "distinct": {list},
			"setunion": {set, set}, "setintersection": {set, set}, "setsubtract": {set, set},
		}
	}
	// The conversions take microseconds per thousand elements: they are
	// measured on five times larger inputs, so that a run is milliseconds
	// and a scheduler tick or a GC assist does not decide the ratio.
	in := map[int]map[string][]cty.Value{}
	for _, n := range []int{1000, 5000, 10000, 50000} {
		in[n] = inputs(n)
	}
	want := map[string]int{"toset tuple": -10, "toset list": -10, "distinct": -10, "setunion": -10, "setintersection": -10, "setsubtract": 0}
	for name, delta := range want {
		fn := fns[strings.Fields(name)[0]]
		small, large := 1000, 10000
		if !strings.HasPrefix(name, "set") {
			small, large = 5000, 50000
		}
		cost := map[int]time.Duration{}
		for _, n := range []int{small, large} {
			best := time.Duration(-1)
			for range 5 {
				runtime.GC()
				start := cpuTime(t)
				v, err := fn.Call(in[n][name])
				d := cpuTime(t) - start
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if w := 0; delta != 0 {
					w = n + delta
					if v.LengthInt() != w {
						t.Errorf("%s of %d: %d elements, want %d", name, n, v.LengthInt(), w)
					}
				} else if v.LengthInt() != 0 {
					t.Errorf("%s of %d: %d elements, want 0", name, n, v.LengthInt())
				}
				if best < 0 || d < best {
					best = d
				}
			}
			cost[n] = max(best, time.Microsecond)
		}
		ratio := float64(cost[large]) / float64(cost[small])
		t.Logf("%s: %d strings %v, %d strings %v: x%.1f", name, small, cost[small], large, cost[large], ratio)
		if ratio > 60 {
			t.Errorf("%s grows x%.1f for x10 elements (%v -> %v): not linear", name, ratio, cost[small], cost[large])
		}
	}
	// Mixed element types still follow Terraform's conversion rules.
	v, err := fns["toset"].Call([]cty.Value{cty.TupleVal([]cty.Value{cty.StringVal("1"), cty.NumberIntVal(1), cty.True})})
	if err != nil || !v.Type().Equals(cty.Set(cty.String)) || v.LengthInt() != 2 {
		t.Errorf("mixed toset: %#v %v", v, err)
	}
	v, err = fns["distinct"].Call([]cty.Value{cty.ListVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a"), cty.StringVal("b")})})
	if err != nil || !v.RawEquals(cty.ListVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a")})) {
		t.Errorf("distinct keeps first occurrences in order: %#v %v", v, err)
	}
}

// Issue 21: control characters in a spec are escaped in diagnostic
// snippets and messages, never written raw to the terminal.
func TestWriteTextEscapesControlCharacters(t *testing.T) {
	src := "fabric \"t\" {\n  mtu = \"\x1b]0;owned\x07\x1b[2J9000\"\n}\n"
	f := &hcl.File{Bytes: []byte(src)}
	start := strings.Index(src, "\"\x1b")
	end := strings.Index(src, "9000\"") + 5
	rng := hcl.Range{Filename: "t.fab.hcl", Start: hcl.Pos{Line: 2, Column: start - 13 + 1, Byte: start}, End: hcl.Pos{Line: 2, Column: end - 13 + 1, Byte: end}}
	d := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad mtu \x1b[31m", Detail: "got \"\x1b]0;owned\x07\"", Subject: &rng}}
	var buf bytes.Buffer
	if err := WriteText(&buf, d, map[string]*hcl.File{"t.fab.hcl": f}, 100, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, c := range out {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("raw control character %q in:\n%s", c, out)
		}
	}
	if !strings.Contains(out, `\x1b]0;owned\x07`) || !strings.Contains(out, "9000") {
		t.Errorf("escaped snippet missing:\n%s", out)
	}
}

// Issue 21: file("relative") secrets resolve against the directory of
// the spec file that names them, like known_hosts and ca_file.
func TestSecretRefPathRelativeToSpec(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(base, `password = env("FAB_PW")`, `password = file("secrets/pw")`, 1)
	if err := os.WriteFile(filepath.Join(dir, "t.fab.hcl"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, diags := Load(filepath.Join(dir, "t.fab.hcl"), LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ref := s.CredentialsByName("sw").Password
	if got, want := ref.Path(), filepath.Join(dir, "secrets", "pw"); got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	if got := (SecretRef{Kind: "file", Name: "/abs/pw", Src: ref.Src}).Path(); got != "/abs/pw" {
		t.Errorf("absolute path changed: %q", got)
	}
}

// Issue 21: a FIFO is refused, not read (reading blocks for ever).
func TestReadFilesRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a.fab.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{fifo, dir} {
		done := make(chan hcl.Diagnostics, 1)
		go func() { _, d := ReadFiles(p); done <- d }()
		select {
		case d := <-done:
			if !d.HasErrors() || !strings.Contains(d.Error(), "not a regular file") {
				t.Errorf("%s: %v", p, d)
			}
		case <-time.After(5 * time.Second):
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("ReadFiles(%s) blocked on a FIFO", p)
		}
	}
}

// Issue 21: --var gpu_nodes=abc for a number variable says the value is
// not a number, not HCL's "Variables not allowed".
func TestVarNotANumber(t *testing.T) {
	src := base + "\nvariable \"gpu_nodes\" {\n  type    = number\n  default = 2\n}\n"
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Vars: []string{"gpu_nodes=abc"}})
	if !diags.HasErrors() {
		t.Fatal("accepted")
	}
	msg := diags.Error()
	if strings.Contains(msg, "Variables not allowed") || !strings.Contains(msg, `"abc" is not a number`) {
		t.Errorf("%s", msg)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Issue 37: a spec directory's file that is a link to a file outside the
// directory is refused (a pull request could point it at
// /proc/self/environ or a key, and a diagnostic would print its lines);
// a link within the directory is read.
func TestReadFilesLinkOutside(t *testing.T) {
	dir := t.TempDir()
	specDir := filepath.Join(dir, "spec")
	if err := os.MkdirAll(filepath.Join(specDir, "parts"), 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("TOKEN=hunter22\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(specDir, "parts", "b.hcl")
	if err := os.WriteFile(inside, []byte("fabric \"f\" {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(specDir, "b.fab.hcl")); err != nil {
		t.Fatal(err)
	}
	files, diags := ReadFiles(specDir)
	if diags.HasErrors() || len(files) != 1 {
		t.Fatalf("a link within the directory: %v %d files", diags, len(files))
	}
	for _, target := range []string{secret, "/proc/self/environ"} {
		link := filepath.Join(specDir, "a.fab.hcl")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		_, diags := ReadFiles(specDir)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "outside") || strings.Contains(diags.Error(), "hunter22") {
			t.Errorf("link to %s: %v", target, diags)
		}
	}
}
