package spec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Issue 21: the set functions are linear (sets iterate sorted, so n log
// n): 30,000 strings each in under 5 s on a loaded 2-core machine, where
// the quadratic library took 9-13 s (toset of a tuple) and 3 minutes
// (distinct).
func TestSetFunctionsLinear(t *testing.T) {
	const n = 30000
	vals := make([]cty.Value, n)
	for i := range vals {
		vals[i] = cty.StringVal(fmt.Sprintf("gpu%05d", i%(n-10)))
	}
	tuple, list := cty.TupleVal(vals), cty.ListVal(vals)
	set := cty.SetVal(vals)
	fns := Functions()
	for _, c := range []struct {
		name string
		args []cty.Value
		want int
	}{
		{"toset", []cty.Value{tuple}, n - 10},
		{"toset", []cty.Value{list}, n - 10},
		{"distinct", []cty.Value{list}, n - 10},
		{"setunion", []cty.Value{set, set}, n - 10},
		{"setintersection", []cty.Value{set, set}, n - 10},
		{"setsubtract", []cty.Value{set, set}, 0},
	} {
		start := time.Now()
		v, err := fns[c.name].Call(c.args)
		d := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.LengthInt() != c.want {
			t.Errorf("%s: %d elements, want %d", c.name, v.LengthInt(), c.want)
		}
		if d > 5*time.Second {
			t.Errorf("%s of %d strings took %v", c.name, n, d)
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
