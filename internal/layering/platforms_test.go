package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/internal/testutil"
)

// platformNameExempt are the comparisons with a platform's name outside
// the platforms' folders that are about something else of that name:
// file (slash-separated, from the repository root) and literal.
var platformNameExempt = map[[2]string]string{
	{"spec/stream.go", "infiniband"}: "the infiniband block's type, not the platform",
	{"spec/chunk.go", "infiniband"}:  "the infiniband block's type, not the platform",
}

// platformNames are the names code outside a platform's folder could
// switch on: the descriptors' platform names, containerlab kinds and
// emulator kinds.
func platformNames() map[string]string {
	m := map[string]string{}
	for _, p := range builtin.Platforms() {
		m[p.Name] = "platform " + p.Name
		if p.ClabKind != "" {
			m[p.ClabKind] = "containerlab kind of " + p.Name
		}
		if p.Emulator != "" && m[p.Emulator] == "" {
			m[p.Emulator] = "emulator kind of " + p.Name
		}
	}
	return m
}

// platformSwitches are the places in the Go files under root (test
// files, drivers/switch and nested modules aside) that compare a value
// with one of names (== or != a string literal, or a case clause with
// one): "file:line: literal (what)".
func platformSwitches(t *testing.T, root string, names map[string]string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(strings.TrimPrefix(p, root), string(filepath.Separator)))
		if d.IsDir() {
			if rel != "" && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" || rel == "drivers/switch") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); rel != "" && err == nil {
				return filepath.SkipDir // a nested module (testbed/kube)
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		report := func(e ast.Expr) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || names[v] == "" {
				return
			}
			if _, ok := platformNameExempt[[2]string{rel, v}]; ok {
				return
			}
			out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+strconv.Quote(v)+" ("+names[v]+")")
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					report(n.X)
					report(n.Y)
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					report(e)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestNoPlatformSwitchesOutsideDrivers: adding a platform is its folder
// (docs/architecture.md). Code outside drivers/switch learns what it
// needs of a platform from the platform's descriptor (drivers.Platform),
// never by comparing a platform, containerlab kind or emulator name; a
// comparison that is about another thing of the same name is listed in
// platformNameExempt with the reason.
func TestNoPlatformSwitchesOutsideDrivers(t *testing.T) {
	found := platformSwitches(t, testutil.RepoRoot(t), platformNames())
	if len(found) > 0 {
		t.Errorf("%d comparison(s) with a platform's name outside drivers/switch; read the fact from the platform's descriptor (drivers.Platform) instead:\n  %s",
			len(found), strings.Join(found, "\n  "))
	}
}

// TestPlatformSwitchesFound: the check finds each form it looks for, and
// only those.
func TestPlatformSwitchesFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", `package a

func f(p, k string) int {
	if p == "vendorx" || "kindx" != k {
		return 1
	}
	switch p {
	case "other", "vendorx":
		return 2
	}
	m := map[string]int{"vendorx": 3} // a map key is a registry, not a switch
	return m[p]
}
`)
	write("a/a_test.go", "package a\n\nvar _ = \"x\" == \"vendorx\"\n")
	write("drivers/switch/vendorx/x.go", "package vendorx\n\nvar _ = \"x\" == \"vendorx\"\n")
	write("nested/go.mod", "module nested\n")
	write("nested/n.go", "package n\n\nvar _ = \"x\" == \"vendorx\"\n")
	got := platformSwitches(t, dir, map[string]string{"vendorx": "platform vendorx", "kindx": "containerlab kind of vendorx"})
	want := []string{
		`a/a.go:4: "kindx" (containerlab kind of vendorx)`,
		`a/a.go:4: "vendorx" (platform vendorx)`,
		`a/a.go:8: "vendorx" (platform vendorx)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
