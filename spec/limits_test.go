package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// deep builds a spec whose one attribute nests n levels with open/close.
func deep(n int, open, close string) string {
	return "fabric \"t\" {\n  mtu = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n}\n"
}

// Issue 37: a 120 KB spec nested 60,000 deep killed validate, fmt and
// render with a Go stack overflow. Nesting of every kind is refused
// before any parser runs, at the file:line, naming the limit and how to
// raise it.
func TestNestingRefused(t *testing.T) {
	for name, src := range map[string]string{
		"tuples":       deep(60000, "[", "]"),
		"parentheses":  deep(60000, "(", ")"),
		"objects":      deep(60000, "{a=", "}"),
		"not":          "fabric \"t\" {\n  mtu = " + strings.Repeat("!", 60000) + "true\n}\n",
		"minus":        "fabric \"t\" {\n  mtu = " + strings.Repeat("-", 60000) + "1\n}\n",
		"conditionals": "fabric \"t\" {\n  mtu = " + strings.Repeat("true ? 1 : ", 60000) + "1\n}\n",
		"templates":    "fabric \"t\" {\n  name = " + strings.Repeat(`"${`, 60000) + `"x"` + strings.Repeat(`}"`, 60000) + "\n}\n",
		"directives":   "fabric \"t\" {\n  name = \"" + strings.Repeat(`%{if true}`, 60000) + "x" + strings.Repeat(`%{endif}`, 60000) + "\"\n}\n",
		"heredoc":      "fabric \"t\" {\n  name = <<EOT\n" + strings.Repeat(`${[`, 60000) + "1" + strings.Repeat(`]}`, 60000) + "\nEOT\n}\n",
		"blocks":       strings.Repeat("a {\n", 60000) + strings.Repeat("}\n", 60000),
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), "Nesting too deep") || !strings.Contains(diags.Error(), EnvMaxDepth) {
				t.Fatalf("%.300s", diags.Error())
			}
			if d := diags[0]; d.Subject == nil || d.Subject.Filename != "t.fab.hcl" || d.Subject.Start.Line < 1 {
				t.Errorf("no file:line: %+v", d.Subject)
			}
		})
	}
	_, diags := LoadFiles([]File{{Name: "t.fab.hcl.json", Data: []byte(`{"fabric":{"t":{"mtu":` + strings.Repeat("[", 60000) + strings.Repeat("]", 60000) + `}}}`)}}, LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Nesting too deep") {
		t.Errorf("JSON: %.300s", diags.Error())
	}
	// -var values and var files are parsed too.
	src := base + "\nvariable \"x\" {\n  type = list(any)\n  default = []\n}\n"
	_, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Vars: []string{"x=" + strings.Repeat("[", 60000) + strings.Repeat("]", 60000)}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Nesting too deep") {
		t.Errorf("-var: %.300s", diags.Error())
	}
}

// Ordinary nesting loads, and the limit is the environment's.
func TestNestingLimit(t *testing.T) {
	src := base + "\nlocals {\n  x = " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n  s = \"a${\"b${1}\"}%{if true}c%{endif}\"\n  h = <<-EOT\n    ${local.s} }}} ]]] \"\n    EOT\n}\n"
	if _, diags := load(t, src, LoadOptions{Platforms: testPlatforms}); diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxDepth + "=50"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "more than 50 levels") {
		t.Errorf("limit 50: %v", diags)
	}
}

// Issue 37: a 229-byte setproduct spec ran fabctl out of memory; results
// that outgrow their arguments are refused before they are made, with
// the limit and how to raise it, at the call. The cases run with a
// limit of 10,000 elements (FABCTL_SPEC_MAX_ELEMENTS) to stay quick;
// the audit's setproduct runs with the defaults.
func TestEvaluationBounded(t *testing.T) {
	env := []string{EnvMaxElements + "=10000"}
	for name, expr := range map[string]string{
		"setproduct":   `length(setproduct(range(100), range(100), range(100)))`,
		"join":         `length(join("", [for i in range(1000) : "xxxxxxxxxxxxxxxxxxxx"]))`,
		"join sep":     `length(join(join("", [for i in range(5000) : "x"]), [for i in range(5000) : "y"]))`,
		"replace":      `length(replace(join("", [for i in range(1000) : "x"]), "", join("", [for i in range(1000) : "y"])))`,
		"format width": `length(format("%999999999d", 1))`,
		"indent":       `length(indent(999999999, "a\nb"))`,
		"jsondecode":   `length(jsondecode("` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `"))`,
		"concat chain": `length(concat(local.b, local.b))`,
		"range":        `length(range(20000))`,
	} {
		t.Run(name, func(t *testing.T) {
			src := "fabric \"t\" {\n  mtu = " + expr + "\n}\nlocals {\n  a = range(5000)\n  b = concat(local.a, local.a)\n}\n"
			_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: env})
			if !diags.HasErrors() {
				t.Fatal("evaluated")
			}
			msg := diags.Error()
			if !strings.Contains(msg, "FABCTL_SPEC_MAX_") || !strings.Contains(msg, "t.fab.hcl:") {
				t.Errorf("%s", msg)
			}
		})
	}
	// The audit's spec, with the default limits.
	src := "fabric \"t\" {\n  mtu = length(setproduct(range(1000), range(1000), range(1000)))\n}\n"
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "setproduct would make 1000000000 elements") {
		t.Errorf("%v", diags)
	}
	// Below the limits the functions work as before.
	src = base + "\nlocals {\n  p = setproduct([\"a\", \"b\"], [1, 2])\n  j = join(\",\", [\"x\", \"y\"])\n}\n"
	if _, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: env}); diags.HasErrors() {
		t.Error(diags)
	}
}

// The work budget: every element function calls make counts.
func TestEvaluationWorkBounded(t *testing.T) {
	src := "fabric \"t\" {\n  mtu = length(local.c)\n}\nlocals {\n  a = range(5000)\n  b = concat(local.a, local.a, local.a)\n  c = concat(local.b, local.b)\n}\n"
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxWork + "=20000"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), EnvMaxWork) {
		t.Errorf("%v", diags)
	}
}

// For expressions are bounded too: nested ones over a literal tuple of a
// thousand elements would iterate a billion times; the work budget
// stops them at the for expression's line.
func TestForExpressionsBounded(t *testing.T) {
	tuple := "[" + strings.Repeat("0,", 999) + "0]"
	src := "fabric \"t\" {\n  mtu = length(flatten(\n    [for a in local.t : [for b in local.t : [for c in local.t : 1]]]))\n}\nlocals {\n  t = " + tuple + "\n}\n"
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxWork + "=100000"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Evaluation limit") || !strings.Contains(diags.Error(), EnvMaxWork) || !strings.Contains(diags.Error(), "t.fab.hcl:3") {
		t.Errorf("%v", diags)
	}
	// A for expression over a collection above the element limit.
	src = "fabric \"t\" {\n  mtu = length([for a in local.t : a])\n}\nlocals {\n  t = " + tuple + "\n}\n"
	_, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxElements + "=100"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), EnvMaxElements) {
		t.Errorf("%v", diags)
	}
}

// The for expressions' instrumentation keeps their references: a local
// whose for expression iterates another local (by name before it in
// order) is evaluated after it. examples/infiniband's ib_nodes iterates
// local.storage; with the collection hidden from hclsyntax's walk it
// was evaluated first and failed ("does not have an attribute named
// storage").
func TestForExpressionsKeepReferences(t *testing.T) {
	src := base + "\nlocals {\n  a = { for i, h in local.z : h => i }\n  b = [for h in local.z : h]\n  z = [\"x\", \"y\"]\n}\n"
	if _, diags := load(t, src, LoadOptions{Platforms: testPlatforms}); diags.HasErrors() {
		t.Fatal(diags)
	}
}

// What the first bounds missed, found by probing and FuzzEvaluation:
// templates concatenate with no function call ("${local.a}${local.a}"
// doubled a string per local until a Go fatal out-of-memory error; a
// %{for} directive repeats its body), a tuple of the same local twice
// doubles a value at no cost until jsonencode, flatten, a comparison or
// the result's own measurement walks every copy, and a number beyond a
// float64's range (1e600000000) took minutes to write as text
// (tostring, format, jsonencode, a template, upper's conversion). Each
// is an error at its file:line naming the limit. The cases run with a
// work limit of 1,000,000 to stay quick.
func TestEvaluationBoundedMore(t *testing.T) {
	s1k := `"` + strings.Repeat("x", 1000) + `"`
	var strs, tuples strings.Builder
	strs.WriteString("  d0 = " + s1k + "\n")
	tuples.WriteString("  t0 = [" + s1k + "]\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&strs, "  d%d = \"${local.d%d}${local.d%d}\"\n", i, i-1, i-1)
		fmt.Fprintf(&tuples, "  t%d = [local.t%d, local.t%d]\n", i, i-1, i-1)
	}
	big := "  big = range(5000)\n  s = " + s1k + "\n"
	for name, c := range map[string]struct{ locals, want string }{
		"template doubling": {strs.String(), "local.d"},
		"tuple doubling":    {tuples.String(), "local.t"},
		"compared":          {big + "  e = [for i in range(100) : local.big] == [for i in range(100) : local.big]\n", "this comparison"},
		"jsonencode":        {big + "  j = jsonencode([for i in range(100) : [for j in range(100) : local.s]])\n", EnvMaxWork},
		"flatten":           {big + "  f = flatten([for i in range(1000) : local.big])\n", EnvMaxWork},
		"template for":      {"  s = \"" + strings.Repeat("x", 10000) + "\"\n  j = \"%{for i in range(10000)}${local.s}%{endfor}\"\n", "this template"},
		"tostring":          {"  x = tostring(1e600000000)\n", "2^±1024"},
		"format":            {"  x = format(\"%d\", 1e60000000)\n", "2^±1024"},
		"format tiny":       {"  x = format(\"%f\", 1e-60000000)\n", "2^±1024"},
		"jsonencode number": {"  x = jsonencode(1e60000000)\n", "2^±1024"},
		"template number":   {"  x = \"a${1e600000000}\"\n", "2^±1024"},
		"conversion":        {"  x = upper(1e600000000)\n", "2^±1024"},
		"products":          {"  a = 1e300\n  b = local.a * local.a * local.a\n", "2^±1024"},
		"tonumber":          {"  x = tostring(tonumber(\"1e60000000\"))\n", "2^±1024"},
		"jsondecode":        {"  x = jsondecode(\"[1e60000000]\")\n", "2^±1024"},
	} {
		t.Run(name, func(t *testing.T) {
			src := "fabric \"t\" {\n  transport = \"rocev2\"\n}\nlocals {\n" + c.locals + "}\n"
			start := time.Now()
			_, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxWork + "=1000000"}})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) || !strings.Contains(diags.Error(), "t.fab.hcl:") {
				t.Errorf("%.400v", diags)
			}
			// Unbounded, these took minutes; bounded, well under a second
			// idle. The wall-clock bound only tells the two apart: 10 s was
			// passed (12.9 s) on a 2-core host at load 15.
			if d := time.Since(start); d > time.Minute {
				t.Errorf("took %v", d)
			}
		})
	}
	// Below the limits: templates, comparisons and numbers as specs use them.
	src := base + "\nlocals {\n  a = [for i in range(100) : \"leaf${i}:${format(\"Ethernet%d\", i * 4)}\"]\n  b = local.a == local.a\n  c = 1.5e300 * 2\n  d = \"%{for x in local.a}${x},%{endfor}\"\n  e = jsonencode(local.a)\n}\n"
	if _, diags := load(t, src, LoadOptions{Platforms: testPlatforms}); diags.HasErrors() {
		t.Error(diags)
	}
}
