package spec

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// dumpAST renders a syntax tree canonically: every field of every node
// (found by reflection, so a field cannot be forgotten, unexported ones
// included), the dynamic type of every interface, nil and empty slices and
// maps told apart, map keys sorted, ranges with line, column and byte, and
// values through cty's GoString plus the exact bits of numbers.
func dumpAST(n any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(n), 0)
	return b.String()
}

var (
	rangeType = reflect.TypeOf(hcl.Range{})
	ctyType   = reflect.TypeOf(cty.Value{})
	opType    = reflect.TypeOf(&hclsyntax.Operation{})
)

func opName(op *hclsyntax.Operation) string {
	for name, o := range map[string]*hclsyntax.Operation{
		"Negate": hclsyntax.OpNegate, "LogicalNot": hclsyntax.OpLogicalNot, "Add": hclsyntax.OpAdd,
		"Subtract": hclsyntax.OpSubtract, "Multiply": hclsyntax.OpMultiply, "Divide": hclsyntax.OpDivide,
		"Modulo": hclsyntax.OpModulo, "Equal": hclsyntax.OpEqual, "NotEqual": hclsyntax.OpNotEqual,
		"LogicalAnd": hclsyntax.OpLogicalAnd, "LogicalOr": hclsyntax.OpLogicalOr,
		"GreaterThan": hclsyntax.OpGreaterThan, "GreaterThanOrEqual": hclsyntax.OpGreaterThanOrEqual,
		"LessThan": hclsyntax.OpLessThan, "LessThanOrEqual": hclsyntax.OpLessThanOrEqual,
	} {
		if o == op {
			return name
		}
	}
	return fmt.Sprintf("op%p", op)
}

func dumpRange(r hcl.Range) string {
	return fmt.Sprintf("%q %d:%d(%d)-%d:%d(%d)", r.Filename, r.Start.Line, r.Start.Column, r.Start.Byte, r.End.Line, r.End.Column, r.End.Byte)
}

func dumpValue(b *strings.Builder, v reflect.Value, depth int) {
	ind := strings.Repeat("  ", min(depth, 16)) // capped: deep nesting must not make the dump quadratic
	if !v.IsValid() {
		b.WriteString("<invalid>")
		return
	}
	switch {
	case v.Type() == rangeType:
		b.WriteString(dumpRange(v.Interface().(hcl.Range)))
		return
	case v.Type() == ctyType:
		cv := v.Interface().(cty.Value)
		if cv.IsKnown() && !cv.IsNull() && cv.Type() == cty.Number {
			// Exact and cheap: GoString would print 1e7111111 in decimal.
			bf := cv.AsBigFloat()
			fmt.Fprintf(b, "cty.Number[%s prec=%d mode=%v]", bf.Text('p', 0), bf.Prec(), bf.Mode())
			return
		}
		b.WriteString(cv.GoString())
		if cv.IsKnown() && !cv.IsNull() && cv.Type() == cty.String {
			fmt.Fprintf(b, " [%q]", cv.AsString())
		}
		return
	case v.Type() == opType:
		b.WriteString(opName(v.Interface().(*hclsyntax.Operation)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			fmt.Fprintf(b, "(%s)(nil)", v.Type())
			return
		}
		fmt.Fprintf(b, "&")
		dumpValue(b, v.Elem(), depth)
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil-interface")
			return
		}
		fmt.Fprintf(b, "<%s>", v.Elem().Type())
		dumpValue(b, v.Elem(), depth)
	case reflect.Struct:
		fmt.Fprintf(b, "%s{\n", v.Type())
		for i := 0; i < v.NumField(); i++ {
			fmt.Fprintf(b, "%s  %s: ", ind, v.Type().Field(i).Name)
			f := v.Field(i)
			if !f.CanInterface() {
				f = reflectUnexported(f)
			}
			dumpValue(b, f, depth+1)
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%s}", ind)
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil-slice")
			return
		}
		fmt.Fprintf(b, "[%d]{\n", v.Len())
		for i := 0; i < v.Len(); i++ {
			fmt.Fprintf(b, "%s  ", ind)
			dumpValue(b, v.Index(i), depth+1)
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%s}", ind)
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nil-map")
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		fmt.Fprintf(b, "map[%d]{\n", v.Len())
		for _, k := range keys {
			fmt.Fprintf(b, "%s  %q: ", ind, fmt.Sprint(k))
			dumpValue(b, v.MapIndex(k), depth+1)
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%s}", ind)
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

// reflectUnexported makes an unexported field readable: the dump must see
// hclsyntax's hidden fields too (they are nil fresh from the parser).
func reflectUnexported(f reflect.Value) reflect.Value {
	switch f.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
		if f.IsNil() {
			return reflect.Zero(reflect.PointerTo(f.Type())) // prints as a nil pointer of that type
		}
	}
	return reflect.ValueOf(fmt.Sprintf("unexported %s: %v", f.Type(), f))
}

// diffFast parses src with the fast path and with hclsyntax. It returns
// whether the fast path took the input, and an error when it did but the
// trees differ or hclsyntax had something to say about the input.
func diffFast(src []byte, name string, start hcl.Pos) (bool, error) {
	fast, ok := fastParse(src, name, start)
	if !ok {
		return false, nil
	}
	f, diags := hclsyntax.ParseConfig(src, name, start)
	if len(diags) > 0 {
		return true, fmt.Errorf("fast path accepted input on which hclsyntax reports: %v", diags)
	}
	want, got := dumpAST(f.Body), dumpAST(fast)
	if want != got {
		return true, fmt.Errorf("AST differs\n%s", firstDiff(want, got))
	}
	return true, nil
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			lo := max(0, i-8)
			return fmt.Sprintf("line %d:\ncontext (hclsyntax):\n%s\nhclsyntax: %s\nfast:      %s", i+1, strings.Join(wl[lo:min(i, len(wl))], "\n"), w, g)
		}
	}
	return "(equal)"
}

// corpusFiles is every native-syntax spec under the repository's example
// and test-data directories.
func corpusFiles(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, dir := range []string{"../examples", "../testdata", "../validate/lint/testdata", "../internal/cli/testdata", "testdata"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && path == dir {
					return nil
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".fab.hcl") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = b
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkAllWays runs the differential check on src as a whole file, as the
// chunks production would cut, and cut at every top-level line.
func checkAllWays(t *testing.T, name string, src []byte) (whole bool, chunksOK, chunks int) {
	t.Helper()
	ok, err := diffFast(src, name, hcl.InitialPos)
	if err != nil {
		t.Errorf("%s (whole file): %v", name, err)
	}
	whole = ok
	for _, target := range []int{chunkTarget, 1} {
		for _, ch := range splitTopLevelN(src, target) {
			ok, err := diffFast(src[ch.start.Byte:ch.end], name, ch.start)
			if err != nil {
				t.Errorf("%s (chunk at line %d): %v", name, ch.start.Line, err)
			}
			chunks++
			if ok {
				chunksOK++
			}
		}
	}
	return whole, chunksOK, chunks
}

func TestFastParseCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) < 20 {
		t.Fatalf("found only %d spec files: is the corpus glob wrong?", len(files))
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	wholeOK, chunksOK, chunks := 0, 0, 0
	for _, n := range names {
		w, ok, c := checkAllWays(t, n, files[n])
		if w {
			wholeOK++
		}
		chunksOK += ok
		chunks += c
	}
	t.Logf("%d files: fast path took %d whole files and %d of %d chunks", len(files), wholeOK, chunksOK, chunks)
	if chunksOK == 0 {
		t.Error("fast path took no chunk of the corpus")
	}
}

// TestFastParseGenerated: the generated inventory is what the fast path is
// for; every chunk of it must take the fast path, with the same tree.
func TestFastParseGenerated(t *testing.T) {
	for _, p := range []fabgen.Params{fabgen.Pod.Scale(256), fabgen.Pod.Scale(64), {Hosts: 3, Rails: 2, Leaves: 2, Spines: 1, Uplinks: 2}} {
		src := fabgen.Generate(p)
		checkAllWays(t, "gen.fab.hcl", src)
		// Only the credentials block, with its env() call, is outside
		// the subset.
		for _, target := range []int{chunkTarget, 1} {
			for _, ch := range splitTopLevelN(src, target) {
				part := src[ch.start.Byte:ch.end]
				if _, ok := fastParse(part, "gen.fab.hcl", ch.start); !ok && !bytes.Contains(part, []byte("env(")) {
					t.Errorf("%+v: fast path refused the chunk at line %d:\n%s", p, ch.start.Line, part)
				}
			}
		}
		// The for_each form is mostly expressions: whatever the fast path
		// takes of it must still match.
		checkAllWays(t, "gen-foreach.fab.hcl", fabgen.GenerateForEach(p))
	}
}

// fastParseCases are hand-written inputs at the edges of the subset. want
// says whether the fast path should take them (checked so that the subset
// does not silently shrink); the tree must match hclsyntax's either way.
var fastParseCases = []struct {
	src  string
	want bool
}{
	{"", true},
	{"\n", true},
	{"   ", true},
	{"# only a comment", true},
	{"# only a comment\n", true},
	{"// c\n/* d */\n", true},
	{"/* a\nb */ x {\n}\n", true},
	{"a = 1", true},
	{"a = 1\n", true},
	{"a = 1 # trailing\n", true},
	{"a = 1 // trailing", true},
	{"a = 1 /* c */\n", true},
	{"a = /* c */ 1\n", true},
	{"a = 1   \n  \n", true},
	{"a = \"\"\n", true},
	{"a = \"x\"\n", true},
	{"a = \"a\\\"b\\\\c\\nd\\re\\tf\"\n", true},
	{"a = \"\\u00e9\\U0001F600\\u0041BC\"\n", true},
	{"a = \"e\\u0301\"\n", true}, // NFC-normalised by cty.StringVal
	{"a = \"\\ud800\"\n", false},
	{"a = \"\\U00110000\"\n", false},
	{"a = \"\\uFFFFFFFF\"\n", true},
	{"a = \"\\UFFFFFFFF\"\n", false},
	{"a = \"\\u12\"\n", false},
	{"a = \"\\x\"\n", false},
	{"a = \"\\$\"\n", false},
	{"a = \"90%\"\n", true},
	{"a = \"$\"\n", true},
	{"a = \"$$\"\n", true},
	{"a = \"%%\"\n", true},
	{"a = \"a$b%c\"\n", true},
	{"a = \"${x}\"\n", false},
	{"a = \"$${x}\"\n", false},
	{"a = \"%{if x}y%{endif}\"\n", false},
	{"a = \"%%{x}\"\n", false},
	{"a = \"tab\tinside\"\n", true},
	{"a = \"\x01ctl\"\n", true},
	{"a = \"é\"\n", false},
	{"a = \"unterminated\n", false},
	{"a = \"line\nbreak\"\n", false},
	{"a = 1e3\n", true},
	{"a = 1E+3\n", true},
	{"a = 2.5e-3\n", true},
	{"a = 0.5\n", true},
	{"a = 1.e5\n", true},
	{"a = 00012\n", true},
	{"a = 1e400\n", false}, // beyond 2^1024: left to hclsyntax, and the loader refuses it (maxNumberExp)
	{"a = 123456789012345678901234567890\n", true},
	{"A=1E7111111", false},
	{"a = 1e308\n", true},
	{"a = 1.\n", false},
	{"a = 1..2\n", false},
	{"a = 1.5.3\n", false},
	{"a = 1e\n", false},
	{"a = 1x\n", false},
	{"a = 1.x\n", false},
	{"a = -1\n", true},
	{"a = - 1\n", true},
	{"a = -1.5e2\n", true},
	{"a = --1\n", false},
	{"a = -x\n", false},
	{"a = 1 + 2\n", false},
	{"a = -1 + 2\n", false},
	{"a = true\n", true},
	{"a = false\n", true},
	{"a = null\n", true},
	{"a = truex\n", false},
	{"a = true-x\n", false},
	{"a = x\n", false},
	{"a = f(1)\n", false},
	{"a = x.y\n", false},
	{"a = true ? 1 : 2\n", false},
	{"a = []\n", true},
	{"a = [ ]\n", true},
	{"a = [1]\n", true},
	{"a = [1,]\n", true},
	{"a = [1, 2,\n]\n", true},
	{"a = [\n  \"a\",\n  \"b\"\n]\n", true},
	{"a = [\n  \"a\", # first\n  // second\n  \"b\" /* x */,\n]\n", true},
	{"a = [[1, [2]], [], [\"x\"]]\n", true},
	{"a = [-1, -2]\n", true},
	{"a = [1\n, 2]\n", true},
	{"a = [1 2]\n", false},
	{"a = [1,,2]\n", false},
	{"a = [,]\n", false},
	{"a = [for x in y: x]\n", false},
	{"a = [1][0]\n", false},
	{"a = [\"a\"\n[0]]\n", false},
	{"a = [1\n", false},
	{"a = {}\n", false},
	{"a = {x = 1}\n", false},
	{"a = <<EOT\nx\nEOT\n", false},
	{"a = 1, b = 2\n", false},
	{"a = 1\na = 2\n", false},
	{"a == 1\n", false},
	{"a => 1\n", false},
	{"a\n", false},
	{"a = \n1\n", false},
	{"a = 1 b\n", false},
	{"x {\n}\n", true},
	{"x {}\n", true},
	{"x {}", true},
	{"x { }\n", true},
	{"x \"l\" {\n}\n", true},
	{"x \"\" {\n}\n", true},
	{"x \"a\" \"b\" c {\n}\n", true},
	{"x \"a\\\"q\\u0041\" {\n}\n", true},
	{"x \"${a}\" {\n}\n", false},
	{"x \"é\" {\n}\n", false},
	{"x { a = 1 }\n", false},
	{"x {\n a = 1 }\n", false},
	{"x {\n}", true},
	{"x {\n} y {\n}\n", false},
	{"x {\n", false},
	{"x {\n  a = 1", false},
	{"}\n", false},
	{"x\n{\n}\n", false},
	{"x = {\n}\n", false},
	{"x {\n  y {\n    z \"q\" {\n      a = [1]\n    }\n  }\n  b = \"s\"\n}\n", true},
	{"x {\n  a = 1\n  a = 2\n}\n", false},
	{"x {\n  # comment\n  a = 1 # c\n\n  // c\n  b = 2 /* c */\n  /* multi\n  line */\n}\n", true},
	{"x { # c\n  a = 1\n}\n", true},
	{"x { /* c */\n}\n", true},
	{"x { /* c\n */ }\n", true},
	{"x \"l\" /* c */ {\n}\n", true},
	{"x \"l\" # c\n{\n}\n", false},
	{"x {\n} # after\n", true},
	{"x {\n} /* after */\n", true},
	{"x {\r\n  a = \"b\"\r\n  c = [1,\r\n 2]\r\n}\r\n", true},
	{"# crlf comment\r\nx {\r\n}\r\n", true},
	{"a = 1\r", false},
	{"a = 1\rb = 2\n", false},
	{"\ta = 1\n", true},
	{"x {\n\ta = \"tabs\"\n}\n", true},
	{"# ünïcödé — comment\nx {\n  a = 1 # ✓ ok\n}\n", true},
	{"# ünïcödé at EOF", false},
	{"/* ünïcödé */\n", false},
	{"\xef\xbb\xbfx {\n}\n", false},
	{"x {\n  a = 1\n}\n\xff\n", false},
	{"# \xff bad utf8\n", false},
	{"a = 1;\n", false},
	{"a = 'x'\n", false},
	{"_a-b_9 = 1\n", true},
	{"9a = 1\n", false},
	{"a-b {\n  c-d = \"x\"\n}\n", true},
	{"a = \"x\" # c\n" + "b = \"y\"", true},
	{"x {\n  a = 1\n}\n\n\n", true},
}

func TestFastParseCases(t *testing.T) {
	for _, start := range []hcl.Pos{hcl.InitialPos, {Line: 40, Column: 1, Byte: 1234}, {Line: 3, Column: 9, Byte: 20}} {
		for _, c := range fastParseCases {
			ok, err := diffFast([]byte(c.src), "case.fab.hcl", start)
			if err != nil {
				t.Errorf("%q at %v: %v", c.src, start, err)
			}
			if ok != c.want {
				t.Errorf("%q: fast path took it: %v, want %v", c.src, ok, c.want)
			}
		}
	}
}

// FuzzFastParse is the differential fuzz target: whenever the fast path
// takes an input, hclsyntax must parse it without diagnostics into the
// same tree; and the input cut at every top-level line, parsed chunk by
// chunk and merged (parseWholeN), must give what ParseConfig gives, tree
// and diagnostics. Nothing may panic. Seeds: testdata/fuzz/FuzzFastParse,
// the hand-written cases, the corpus and a small generated pod.
func FuzzFastParse(f *testing.F) {
	for _, c := range fastParseCases {
		f.Add([]byte(c.src), uint8(0))
	}
	for _, b := range corpusFiles(f) {
		f.Add(b, uint8(0))
	}
	f.Add(fabgen.Generate(fabgen.Params{Hosts: 2, Rails: 2, Leaves: 1, Spines: 1, Uplinks: 1}), uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, startSel uint8) {
		starts := []hcl.Pos{hcl.InitialPos, {Line: 12, Column: 1, Byte: 345}, {Line: 2, Column: 7, Byte: 30}}
		start := starts[int(startSel)%len(starts)]
		if _, err := diffFast(src, "fuzz.fab.hcl", start); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want, wantDiags := hclsyntax.ParseConfig(src, "fuzz.fab.hcl", hcl.InitialPos)
		got, gotDiags := parseWholeN(src, "fuzz.fab.hcl", 1)
		if fmt.Sprint(gotDiags) != fmt.Sprint(wantDiags) {
			t.Fatalf("%q: chunked diagnostics %v, want %v", src, gotDiags, wantDiags)
		}
		if w, g := dumpAST(want.Body), dumpAST(got.Body); w != g {
			t.Fatalf("%q: chunked tree differs\n%s", src, firstDiff(w, g))
		}
	})
}

// BenchmarkParseChunks parses the chunks of a generated pod (1/8 of the
// benchmark's) one after another, with hclsyntax and with the fast path.
func BenchmarkParseChunks(b *testing.B) {
	src := fabgen.Generate(fabgen.Pod.Scale(8))
	chunks := splitTopLevel(src)
	for _, parser := range []struct {
		name  string
		parse func([]byte, string, hcl.Pos) bool
	}{
		{"hclsyntax", func(src []byte, name string, start hcl.Pos) bool {
			_, diags := hclsyntax.ParseConfig(src, name, start)
			return !diags.HasErrors()
		}},
		{"fast", func(src []byte, name string, start hcl.Pos) bool {
			_, ok := fastParse(src, name, start)
			return ok
		}},
	} {
		b.Run(parser.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				for _, ch := range chunks {
					if !parser.parse(src[ch.start.Byte:ch.end], "pod.fab.hcl", ch.start) && !bytes.Contains(src[ch.start.Byte:ch.end], []byte("env(")) {
						b.Fatal("chunk did not parse")
					}
				}
			}
		})
	}
}

// TestSyntaxNav: a whole file the fast path parses carries syntaxNav, which
// must answer exactly as the Nav hclsyntax.ParseConfig attaches, at every
// offset (it names the block around a diagnostic in snippets).
func TestSyntaxNav(t *testing.T) {
	type nav interface {
		ContextString(int) string
		ContextDefRange(int) hcl.Range
	}
	checked := 0
	for name, src := range corpusFiles(t) {
		fast, _ := parseWhole(src, name)
		if _, ok := fast.Nav.(syntaxNav); !ok {
			continue
		}
		want, _ := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		wn, ok := want.Nav.(nav)
		if !ok {
			t.Fatalf("hclsyntax's Nav is a %T", want.Nav)
		}
		fn := fast.Nav.(nav)
		for off := -1; off <= len(src)+1; off++ {
			if w, g := wn.ContextString(off), fn.ContextString(off); w != g {
				t.Fatalf("%s offset %d: ContextString %q, want %q", name, off, g, w)
			}
			if w, g := wn.ContextDefRange(off), fn.ContextDefRange(off); w != g {
				t.Fatalf("%s offset %d: ContextDefRange %v, want %v", name, off, g, w)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d files took the fast path", checked)
	}
}

// TestParseWholeMatchesParseConfig: parseWhole, chunked or not, returns the
// file hclsyntax.ParseConfig returns: the same tree and diagnostics.
func TestParseWholeMatchesParseConfig(t *testing.T) {
	inputs := map[string][]byte{
		"gen.fab.hcl":     fabgen.Generate(fabgen.Pod.Scale(64)),
		"foreach.fab.hcl": fabgen.GenerateForEach(fabgen.Pod.Scale(64)),
		"crlf.fab.hcl":    bytes.ReplaceAll(fabgen.Generate(fabgen.Params{Hosts: 4, Rails: 2, Leaves: 2, Spines: 1, Uplinks: 1}), []byte("\n"), []byte("\r\n")),
		"lead.fab.hcl":    []byte("\n\n  # lead\n  x {\n  }\ny = 1\nz {\n}\ny = 2\n"),
	}
	for name, b := range corpusFiles(t) {
		inputs[name] = b
	}
	for i, c := range fastParseCases {
		inputs[fmt.Sprintf("case%d.fab.hcl", i)] = []byte(c.src)
	}
	merged := 0
	for name, src := range inputs {
		want, wantDiags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		for _, target := range []int{chunkTarget, 7, 1} {
			got, gotDiags := parseWholeN(src, name, target)
			if fmt.Sprint(gotDiags) != fmt.Sprint(wantDiags) {
				t.Fatalf("%s (target %d): diagnostics %v, want %v", name, target, gotDiags, wantDiags)
			}
			if w, g := dumpAST(want.Body), dumpAST(got.Body); w != g {
				t.Fatalf("%s (target %d): tree differs\n%s", name, target, firstDiff(w, g))
			}
			if !bytes.Equal(got.Bytes, src) {
				t.Fatalf("%s: Bytes differ", name)
			}
			if _, ok := got.Nav.(syntaxNav); ok && target == 1 && len(splitTopLevelN(src, 1)) > 1 {
				merged++
			}
		}
	}
	if merged < 20 {
		t.Fatalf("only %d files were merged from chunks", merged)
	}
}
