package spec

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// FuzzEvaluation is bounded evaluation's fuzz target (issue 37 item 5).
// Random bytes are rare to parse as an expression that grows, so the
// fuzzer's bytes drive a small grammar instead (evalGen): locals that
// reference earlier locals, tuples, for expressions, templates and
// template for directives, numbers with large exponents and calls of
// the spec functions that can grow a value. With small limits (10,000
// elements, 100,000 elements of work), every load must end within 10 s
// (a hang is a failure) having allocated less than 256 MiB: what grows
// past the limits must be refused before it is made.
func FuzzEvaluation(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		[]byte("setproduct range"),
		{2, 5, 5, 2, 5, 5, 2, 5, 5, 9, 9, 9},
		{0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87, 0x98, 0xa9},
		[]byte(strings.Repeat("\x07\x03", 40)),
		[]byte(strings.Repeat("\x01\x08\x02", 40)),
	} {
		f.Add(seed)
	}
	opts := LoadOptions{Platforms: testPlatforms, Env: []string{EnvMaxElements + "=10000", EnvMaxWork + "=100000"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := evalGen(data)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(src)}}, opts)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the load did not end in 10 s:\n%s", src)
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Fatalf("the load allocated %d MiB:\n%s", grew>>20, src)
		}
	})
}

// evalGen turns fuzz bytes into a spec: eight locals, each an expression
// of at most four levels drawn from the bytes, and a fabric that uses the
// last one.
func evalGen(data []byte) string {
	g := &evalGenerator{data: data}
	var b strings.Builder
	b.WriteString("locals {\n")
	for i := 0; i < 8; i++ {
		g.locals = i
		fmt.Fprintf(&b, "  l%d = %s\n", i, g.expr(4))
	}
	b.WriteString("}\nfabric \"t\" {\n  transport = \"rocev2\"\n  mtu = length(jsonencode(local.l7)) > 0 ? 9000 : 9000\n}\n")
	return b.String()
}

type evalGenerator struct {
	data   []byte
	pos    int
	locals int // locals defined before the one being generated
}

func (g *evalGenerator) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

// The functions that make values (two arguments each unless named below).
var evalFuncs = []string{"setproduct", "join", "replace", "indent", "format", "formatlist", "flatten", "jsonencode",
	"jsondecode", "concat", "range", "merge", "distinct", "toset", "tolist", "split", "chunklist", "values", "keys",
	"zipmap", "strrev", "upper", "length", "contains", "tostring", "setunion", "sort", "reverse", "coalescelist", "slice"}

func (g *evalGenerator) expr(depth int) string {
	c := g.next()
	if depth == 0 {
		c %= 4
	}
	switch c % 12 {
	case 0: // a reference to an earlier local, else a number
		if g.locals > 0 {
			return fmt.Sprintf("local.l%d", g.next()%g.locals)
		}
		return fmt.Sprint(g.next())
	case 1: // a number, sometimes huge or tiny
		switch n := g.next(); n % 4 {
		case 0:
			return fmt.Sprint(n)
		case 1:
			return fmt.Sprintf("1e%d", n*g.next()*g.next()*37)
		case 2:
			return fmt.Sprintf("1e-%d", n*g.next()*g.next()*37)
		default:
			return fmt.Sprintf("%d", n*1000)
		}
	case 2: // a string
		return `"` + strings.Repeat("ab", g.next()%64) + `"`
	case 3: // range of a number
		return fmt.Sprintf("range(%d)", g.next()*g.next()%20000)
	case 4: // a tuple of the same expression twice (a DAG when it is a reference)
		e := g.expr(depth - 1)
		return "[" + e + ", " + e + "]"
	case 5:
		return "[for x in " + g.expr(depth-1) + " : " + g.expr(depth-1) + "]"
	case 6:
		return "{for i, x in " + g.expr(depth-1) + " : tostring(i) => " + g.expr(depth-1) + "}"
	case 7:
		e := g.expr(depth - 1)
		return `"${` + e + `}${` + e + `}"`
	case 8:
		return `"%{for x in ` + g.expr(depth-1) + `}${` + g.expr(depth-1) + `}%{endfor}"`
	case 9:
		return g.expr(depth-1) + " == " + g.expr(depth-1)
	default:
		fn := evalFuncs[g.next()%len(evalFuncs)]
		switch fn {
		case "range", "strrev", "upper", "length", "flatten", "jsonencode", "jsondecode", "distinct", "toset", "tolist",
			"values", "keys", "tostring", "sort", "reverse":
			return fn + "(" + g.expr(depth-1) + ")"
		case "replace", "slice":
			return fn + "(" + g.expr(depth-1) + ", " + g.expr(depth-1) + ", " + g.expr(depth-1) + ")"
		case "format", "formatlist":
			formats := []string{`"%v"`, `"%s%s"`, `"%d"`, `"%999999d"`, `"%.9999f"`, `"%#v"`}
			return fn + "(" + formats[g.next()%len(formats)] + ", " + g.expr(depth-1) + ", " + g.expr(depth-1) + ")"
		default:
			return fn + "(" + g.expr(depth-1) + ", " + g.expr(depth-1) + ")"
		}
	}
}
