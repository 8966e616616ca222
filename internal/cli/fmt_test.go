package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/fabctl/fabctl/internal/cli/view"
)

func TestFmtFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want FmtOptions // compared: Paths, Check, Diff, Write, List, Recursive, JSON
		code ExitCode
		err  string
	}{
		{name: "defaults", want: FmtOptions{Paths: []string{"."}, Write: true, List: true}},
		{name: "paths", args: []string{"a.fab.hcl", "dir"}, want: FmtOptions{Paths: []string{"a.fab.hcl", "dir"}, Write: true, List: true}},
		{name: "double dash", args: []string{"--check", "--diff", "--recursive", "--write=false", "--list=false"},
			want: FmtOptions{Paths: []string{"."}, Check: true, Diff: true, Recursive: true}},
		{name: "terraform single dash", args: []string{"-check", "-diff", "-recursive", "-write=false", "x"},
			want: FmtOptions{Paths: []string{"x"}, Check: true, Diff: true, Recursive: true, List: true}},
		{name: "json", args: []string{"-json", "-check"}, want: FmtOptions{Paths: []string{"."}, Check: true, Write: true, List: true, JSON: true}},
		{name: "stdin", args: []string{"-"}, want: FmtOptions{Paths: []string{"-"}, Write: true, List: true}},
		{name: "after --", args: []string{"--", "-check"}, want: FmtOptions{Paths: []string{"-check"}, Write: true, List: true}},
		{name: "stdin with paths", args: []string{"-", "a.fab.hcl"}, code: ExitUsage, err: `"-" (stdin) cannot be combined`},
		{name: "unknown single dash", args: []string{"-chek"}, code: ExitUsage, err: "unknown shorthand flag"},
		{name: "unknown flag", args: []string{"--recursiv"}, code: ExitUsage, err: "Did you mean --recursive?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _, stderr := testFactory()
			var got *FmtOptions
			cmd := NewCmdFmt(f, func(o *FmtOptions) error { got = o; return nil })
			code := execCmd(f, cmd, append([]string{"fmt"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.err != "" {
				if !strings.Contains(stderr.String(), tt.err) {
					t.Errorf("stderr %q does not contain %q", stderr, tt.err)
				}
				return
			}
			if got == nil {
				t.Fatal("run function not called")
			}
			g := FmtOptions{Paths: got.Paths, Check: got.Check, Diff: got.Diff, Write: got.Write, List: got.List, Recursive: got.Recursive, JSON: got.JSON}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("options\n got  %+v\n want %+v", g, tt.want)
			}
		})
	}
}

const unformatted = `fabric "t" {
transport = "rocev2"
    mtu = 9000
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
`

const formatted = `fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
`

const syntaxError = `fabric "t" {
  transport = "rocev2"
  mtu = = 9000
}
`

// fmtTree makes a temporary directory of spec files, changes into it and
// returns a reader for the files' current content.
func fmtTree(t *testing.T, files map[string]string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

func TestFmtCanonicalFixture(t *testing.T) {
	if got := string(hclwrite.Format([]byte(unformatted))); got != formatted {
		t.Fatalf("the test's formatted fixture is not hclwrite's output:\n%s", got)
	}
}

func TestFmtCheck(t *testing.T) {
	read := fmtTree(t, map[string]string{"a.fab.hcl": unformatted, "b.fab.hcl": formatted})
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "fmt", "-check"); code != ExitError {
		t.Fatalf("fmt -check on an unformatted file: exit %d, want 1; stderr: %s", code, stderr)
	}
	if stdout.String() != "a.fab.hcl\n" {
		t.Errorf("fmt -check listed %q, want only a.fab.hcl", stdout)
	}
	if read("a.fab.hcl") != unformatted {
		t.Errorf("fmt -check wrote the file")
	}

	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "fmt"); code != ExitOK {
		t.Fatalf("fmt: exit %d", code)
	}
	if stdout.String() != "a.fab.hcl\n" || read("a.fab.hcl") != formatted || read("b.fab.hcl") != formatted {
		t.Errorf("fmt did not format a.fab.hcl (listed %q)", stdout)
	}
	if st, _ := os.Stat("a.fab.hcl"); st.Mode().Perm() != 0o640 {
		t.Errorf("fmt changed the file mode to %v", st.Mode().Perm())
	}

	// Idempotent: a second run changes nothing and -check passes.
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "fmt", "--check"); code != ExitOK || stdout.Len() != 0 {
		t.Errorf("fmt --check after fmt: exit %d, listed %q", code, stdout)
	}
}

func TestFmtIdempotent(t *testing.T) {
	for _, path := range []string{"testdata/validate/ok.fab.hcl", "testdata/validate/errors.fab.hcl", "testdata/validate/multi/hosts.fab.hcl"} {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		once := hclwrite.Format(src)
		if twice := hclwrite.Format(once); string(twice) != string(once) {
			t.Errorf("%s: formatting twice differs from once", path)
		}
		if string(once) != string(src) {
			t.Errorf("%s is not formatted (test fixtures should be)", path)
		}
	}
}

func TestFmtWriteFalseAndDiff(t *testing.T) {
	read := fmtTree(t, map[string]string{"a.fab.hcl": unformatted})
	f, _, stdout, _ := testFactory()
	if code := runCLI(f, "fmt", "-write=false", "-diff"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if read("a.fab.hcl") != unformatted {
		t.Errorf("-write=false wrote the file")
	}
	out := stdout.String()
	for _, want := range []string{"a.fab.hcl\n--- old/a.fab.hcl\n+++ new/a.fab.hcl\n@@ -1,11 +1,11 @@\n", "-transport = \"rocev2\"\n", "+  transport = \"rocev2\"\n", "+    device    = \"mlx5_0\"\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escapes off a TTY")
	}
	f, _, stdout, _ = testFactory()
	f.IOStreams.SetStdoutTTY(true)
	runCLI(f, "fmt", "-write=false", "-diff")
	if !strings.Contains(stdout.String(), "\x1b[") {
		t.Errorf("no color on a TTY:\n%q", stdout)
	}
}

func TestFmtRecursive(t *testing.T) {
	read := fmtTree(t, map[string]string{
		"top.fab.hcl":          unformatted,
		"sub/a.fab.hcl":        unformatted,
		"sub/prod.fabvars":     "leaf_count=8\nname   = \"x\"\n",
		"sub/notes.txt":        "not hcl = = =",
		".hidden/x.fab.hcl":    unformatted,
		"sub/deeper/b.fab.hcl": unformatted,
	})
	f, _, stdout, _ := testFactory()
	if code := runCLI(f, "fmt", "."); code != ExitOK || stdout.String() != "top.fab.hcl\n" {
		t.Fatalf("fmt . (not recursive): exit %d, listed %q", code, stdout)
	}
	f, _, stdout, _ = testFactory()
	if code := runCLI(f, "fmt", "-recursive"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	want := "sub/a.fab.hcl\nsub/deeper/b.fab.hcl\nsub/prod.fabvars\n"
	if stdout.String() != want {
		t.Errorf("listed %q, want %q", stdout, want)
	}
	if read(".hidden/x.fab.hcl") != unformatted {
		t.Errorf("formatted a file in a hidden directory")
	}
	if read("sub/prod.fabvars") != "leaf_count = 8\nname       = \"x\"\n" {
		t.Errorf("var file: %q", read("sub/prod.fabvars"))
	}
}

func TestFmtSyntaxError(t *testing.T) {
	read := fmtTree(t, map[string]string{"bad.fab.hcl": syntaxError, "good.fab.hcl": unformatted})
	f, _, stdout, stderr := testFactory()
	if code := runCLI(f, "fmt"); code != ExitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if read("bad.fab.hcl") != syntaxError {
		t.Errorf("a file with a syntax error was rewritten")
	}
	if read("good.fab.hcl") != formatted {
		t.Errorf("the other file was not formatted")
	}
	if stdout.String() != "good.fab.hcl\n" {
		t.Errorf("stdout %q", stdout)
	}
	for _, want := range []string{"Error: Invalid expression", "on bad.fab.hcl line 3, in fabric \"t\":", "   3:   mtu = = 9000"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	f, _, stdout, _ = testFactory()
	runCLI(f, "fmt", "--json", "--check", "bad.fab.hcl")
	var doc view.FmtJSONDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ErrorCount != 1 || len(doc.Diagnostics) != 1 || doc.Diagnostics[0].Range.Start.Line != 3 || doc.Diagnostics[0].Range.Filename != "bad.fab.hcl" {
		t.Errorf("JSON diagnostics: %s", stdout)
	}
}

func TestFmtPaths(t *testing.T) {
	fmtTree(t, map[string]string{"x.fab.hcl.json": "{}", "x.txt": "a = 1", "v.hcl": "a=1\n"})
	tests := []struct {
		args []string
		code ExitCode
		out  string
		err  string
	}{
		{args: []string{"nope"}, code: ExitError, err: "No file or directory at nope"},
		{args: []string{"x.fab.hcl.json"}, code: ExitError, err: "Not an HCL spec file"},
		{args: []string{"x.txt"}, code: ExitError, err: "Not an HCL spec file"},
		{args: []string{"v.hcl"}, code: ExitOK, out: "v.hcl\n"},
		{args: []string{"."}, code: ExitOK, out: ""},
	}
	for _, tt := range tests {
		f, _, stdout, stderr := testFactory()
		code := runCLI(f, append([]string{"fmt", "-write=false"}, tt.args...)...)
		if code != tt.code || stdout.String() != tt.out || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("fmt %v: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
	}
}

func TestFmtStdin(t *testing.T) {
	f, stdin, stdout, _ := testFactory()
	stdin.WriteString(unformatted)
	if code := runCLI(f, "fmt", "-"); code != ExitOK || stdout.String() != formatted {
		t.Errorf("fmt -: exit %d, output:\n%s", code, stdout)
	}

	f, stdin, stdout, _ = testFactory()
	stdin.WriteString(unformatted)
	if code := runCLI(f, "fmt", "-check", "-"); code != ExitError || stdout.Len() != 0 {
		t.Errorf("fmt -check - on unformatted input: exit %d, output %q", code, stdout)
	}

	f, stdin, stdout, _ = testFactory()
	stdin.WriteString(formatted)
	if code := runCLI(f, "fmt", "-check", "-"); code != ExitOK {
		t.Errorf("fmt -check - on formatted input: exit %d", code)
	}

	f, stdin, _, stderr := testFactory()
	stdin.WriteString(syntaxError)
	if code := runCLI(f, "fmt", "-"); code != ExitError || !strings.Contains(stderr.String(), "on <stdin> line 3") {
		t.Errorf("fmt - on a syntax error: exit %d, stderr:\n%s", code, stderr)
	}
}
