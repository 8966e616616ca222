package spec

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Bounded evaluation. A spec is a program: nested 60,000 deep its parser
// (and hcl's, and fmt's) recursed until the Go stack overflowed, and a
// 229-byte setproduct made a billion elements until the process ran out
// of memory: both Go runtime fatal errors, not errors. Three limits stop
// that, each with a clear error naming the file:line, the limit and how
// to raise it:
//
//   - Depth: nesting in the source ({, [, (, template interpolations and
//     heredocs, unary and conditional operators) is scanned before any
//     parser runs (checkNesting, iterative), in spec files, var files,
//     -var values, override files, saved plans' sources and fmt; a value
//     a function makes (jsondecode) may not nest deeper either.
//   - Elements: no function result, no collection a for expression
//     iterates and no string a template builds holds more than Elements
//     elements or characters; the functions whose result can outgrow
//     their arguments (setproduct, join, replace, indent, format's
//     widths) are checked before they allocate.
//   - Work: the elements every function call and for expression of one
//     load makes or iterates, in all (for expressions: instrumentFor).
//
// Defaults fit the largest fabrics with room to spare (fabgen's
// 16,384-host pod written with for_each takes ~17,000,000 of work); the
// environment raises them. What a unit of work may cost is bounded
// too: a for expression's iteration counts 8 (forIterationCost), a
// large element is charged its full size, a template part its
// characters by the 16, a number its digits where it is written.

// Limits bound one spec load. A zero field is its default.
type Limits struct {
	Depth    int   // nesting of the source and of values (default 256)
	Elements int   // elements of one collection or characters of one string (default 1,048,576)
	Work     int64 // elements all function calls and for expressions of one load make or iterate (default 100,000,000)
}

// Limits' defaults and the environment variables that raise them.
const (
	DefaultMaxDepth    = 256
	DefaultMaxElements = 1 << 20
	DefaultMaxWork     = 100_000_000

	EnvMaxDepth    = "FABCTL_SPEC_MAX_DEPTH"
	EnvMaxElements = "FABCTL_SPEC_MAX_ELEMENTS"
	EnvMaxWork     = "FABCTL_SPEC_MAX_WORK"
)

// limits are o's limits: LoadOptions.Limits, else the environment
// (o.Env), else the defaults.
func (o LoadOptions) limits() Limits {
	l := o.Limits
	env := func(k string, def int64) int64 {
		if v, ok := lookupEnvList(o.Env, k); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				return n
			}
		}
		return def
	}
	if l.Depth <= 0 {
		l.Depth = int(env(EnvMaxDepth, DefaultMaxDepth))
	}
	if l.Elements <= 0 {
		l.Elements = int(env(EnvMaxElements, DefaultMaxElements))
	}
	if l.Work <= 0 {
		l.Work = env(EnvMaxWork, DefaultMaxWork)
	}
	return l
}

func lookupEnvList(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

// DepthLimit is the nesting limit for callers that parse HCL themselves
// (fmt): FABCTL_SPEC_MAX_DEPTH in env, else DefaultMaxDepth.
func DepthLimit(env []string) int { return LoadOptions{Env: env}.limits().Depth }

// CheckNesting scans src (HCL native syntax, or JSON when json is set)
// without recursion and returns an error diagnostic at the first place
// its nesting passes max (nil when it does not). Callers run it before
// any parser: hcl's parsers, the fast parser and the formatter recurse
// once per level.
func CheckNesting(src []byte, name string, json bool, max int) *hcl.Diagnostic {
	var at int
	if json {
		at = jsonNesting(src, max)
	} else {
		at = nativeNesting(src, max)
	}
	if at < 0 {
		return nil
	}
	pos := posAt(src, at)
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Nesting too deep",
		Detail:  fmt.Sprintf("The expression here nests more than %d levels deep (brackets, braces, parentheses, templates, unary and conditional operators). Flatten it; if the nesting is intended, raise the limit with the environment variable %s=N.", max, EnvMaxDepth),
		Subject: &hcl.Range{Filename: name, Start: pos, End: posAt(src, min(at+1, len(src)))}}
}

// posAt is the hcl position of byte offset i in src (columns in bytes:
// the diagnostic only needs the line right).
func posAt(src []byte, i int) hcl.Pos {
	line, col := 1, 1
	for j := 0; j < i && j < len(src); j++ {
		if src[j] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return hcl.Pos{Line: line, Column: col, Byte: i}
}

// jsonNesting returns the offset where JSON nesting passes max, or -1.
func jsonNesting(src []byte, max int) int {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

// nativeNesting returns the offset where the nesting of HCL native syntax
// passes max, or -1. It follows the lexer's modes: code, quoted strings
// and heredocs (templates, whose ${ and %{ open code again), comments. In
// code, brackets nest, and so do unary operators and '?' (each is one
// more level of hcl's recursive descent) until the bracket they are in
// closes; a template's %{if} and %{for} nest until their %{end...}. It is
// an upper bound of the parsers' depth, cheap enough for every file: one
// pass, and per mode a table skips the bytes that do not matter (the
// loader runs it over a 16,384-host pod's 40 MB).
func nativeNesting(src []byte, max int) int {
	type frame struct {
		kind  byte // '{', '[', '(' in code; '"' string; 'h' heredoc; '$' template interpolation
		ops   int  // unary and conditional operators (code), %{if}/%{for} (templates) in this frame
		delim []byte
	}
	stack := make([]frame, 1, 64)
	stack[0] = frame{kind: '{'}
	depth := 0 // frames open, plus every frame's ops
	n := len(src)
	push := func(f frame) bool {
		stack = append(stack, f)
		depth++
		return depth > max
	}
	pop := func() {
		depth -= 1 + stack[len(stack)-1].ops
		stack = stack[:len(stack)-1]
	}
	op := func() bool {
		stack[len(stack)-1].ops++
		depth++
		return depth > max
	}
	// template opens a ${ or %{ at i in a string or heredoc; a %{if} or
	// %{for} also nests on that string until its %{end...}.
	template := func(i int) bool {
		if src[i] == '%' {
			j := i + 2
			for j < n && (src[j] == ' ' || src[j] == '\t' || src[j] == '~') {
				j++
			}
			k := j
			for k < n && isIdentCont(src[k]) {
				k++
			}
			top := &stack[len(stack)-1]
			switch string(src[j:k]) {
			case "if", "for":
				top.ops++
				depth++
			case "endif", "endfor":
				if top.ops > 0 {
					top.ops--
					depth--
				}
			}
		}
		return push(frame{kind: '$'}) || depth > max
	}
	for i := 0; i < n; i++ {
		top := &stack[len(stack)-1]
		switch top.kind {
		case '"':
			for i < n && !nestStr[src[i]] {
				i++
			}
			if i == n {
				return -1
			}
			switch c := src[i]; {
			case c == '\\':
				i++
			case c == '"':
				pop()
			case c == '\n':
				pop() // an unterminated string: the parser reports it
			case i+1 < n && src[i+1] == '{':
				if i > 0 && src[i-1] == c {
					i++ // $${ and %%{ are literal
					continue
				}
				if template(i) {
					return i
				}
				i++
			}
			continue
		case 'h':
			for i < n && !nestHeredoc[src[i]] {
				i++
			}
			if i == n {
				return -1
			}
			if c := src[i]; c == '\n' {
				// Does the next line close the heredoc?
				j := i + 1
				for j < n && (src[j] == ' ' || src[j] == '\t') {
					j++
				}
				if k := j + len(top.delim); k <= n && string(src[j:k]) == string(top.delim) && (k == n || src[k] == '\n' || src[k] == '\r') {
					pop()
					i = k - 1
				}
			} else if i+1 < n && src[i+1] == '{' {
				if i > 0 && src[i-1] == c {
					i++
					continue
				}
				if template(i) {
					return i
				}
				i++
			}
			continue
		}
		// Code.
		for i < n && !nestCode[src[i]] {
			i++
		}
		if i == n {
			return -1
		}
		switch c := src[i]; c {
		case '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case '/':
			if i+1 < n && src[i+1] == '/' {
				for i < n && src[i] != '\n' {
					i++
				}
			} else if i+1 < n && src[i+1] == '*' {
				i += 2
				for i+1 < n && !(src[i] == '*' && src[i+1] == '/') {
					i++
				}
				i++
			}
		case '"':
			// Most strings hold no template: skip them without a frame.
			j := i + 1
			for j < n {
				for j < n && !nestStr[src[j]] {
					j++
				}
				if j < n && src[j] == '\\' {
					j += 2
					continue
				}
				break
			}
			if j < n && src[j] == '"' {
				i = j
				continue
			}
			if push(frame{kind: '"'}) {
				return i
			}
			i = j - 1 // at the template, the newline or the end
		case '<':
			if i+1 < n && src[i+1] == '<' {
				j := i + 2
				if j < n && src[j] == '-' {
					j++
				}
				k := j
				for k < n && isIdentCont(src[k]) {
					k++
				}
				if k > j {
					// A heredoc: its body starts on the next line.
					delim := src[j:k]
					for k < n && src[k] != '\n' {
						k++
					}
					if push(frame{kind: 'h', delim: delim}) {
						return i
					}
					i = k - 1
				}
			}
		case '{', '[', '(':
			if push(frame{kind: c}) {
				return i
			}
		case '}':
			if top.kind == '$' || top.kind == '{' && len(stack) > 1 {
				pop()
			}
		case ']':
			if top.kind == '[' {
				pop()
			}
		case ')':
			if top.kind == '(' {
				pop()
			}
		case '!':
			if (i+1 >= n || src[i+1] != '=') && op() {
				return i
			}
		case '?':
			if op() {
				return i
			}
		case '-':
			// Unary unless it follows an operand on the same line.
			k := i - 1
			for k >= 0 && (src[k] == ' ' || src[k] == '\t') {
				k--
			}
			if k < 0 || src[k] == '-' || !(isIdentCont(src[k]) || src[k] == ')' || src[k] == ']' || src[k] == '}' || src[k] == '"' || src[k] == '.') {
				if op() {
					return i
				}
			}
		}
	}
	return -1
}

// The bytes nativeNesting stops at, per mode.
var nestCode, nestStr, nestHeredoc [256]bool

func init() {
	for _, c := range "{}[]()!?-\"<#/" {
		nestCode[c] = true
	}
	for _, c := range "\\\"$%\n" {
		nestStr[c] = true
	}
	for _, c := range "$%\n" {
		nestHeredoc[c] = true
	}
}

// budget is one load's evaluation budget (Limits), shared by the
// bounded functions of that load. Stream workers evaluate concurrently.
type budget struct {
	lim       Limits
	work      atomic.Int64
	exhausted atomic.Bool // the work limit was passed: guarded expressions stop evaluating
}

// exhaustedError is an error when the work limit was passed and no error
// says so (try() and can() swallow errors): a load that stopped
// evaluating must not look complete.
func (b *budget) exhaustedError(diags hcl.Diagnostics) hcl.Diagnostics {
	if b == nil || !b.exhausted.Load() || diags.HasErrors() {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Evaluation limit",
		Detail: fmt.Sprintf("Evaluating this spec takes more than %d elements of work in all (function results and for-expression iterations); raise the limit with the environment variable %s=N if the spec is meant to be this large.", b.lim.Work, EnvMaxWork)}}
}

// charge counts n elements of work; an error once the load's work
// passes the limit. After that, the for expressions' bodies and the
// guarded expressions evaluate to unknown values without a word: the
// first error is reported, and a loop of a million iterations does not
// add a million diagnostics.
func (b *budget) charge(n int, what string) error {
	if b.work.Add(int64(n)) > b.lim.Work {
		b.exhausted.Store(true)
		return fmt.Errorf("%s: evaluating this spec takes more than %d elements of work in all (function results and for-expression iterations); the limit protects fabctl from specs that grow without bound: raise it with the environment variable %s=N if the spec is meant to be this large", what, b.lim.Work, EnvMaxWork)
	}
	return nil
}

// tooMany is the error for a result of n elements (or characters).
func (b *budget) tooMany(what string, n float64) error {
	return fmt.Errorf("%s would make %.0f elements (or characters); the limit is %d per collection or string: raise it with the environment variable %s=N if that is intended", what, n, b.lim.Elements, EnvMaxElements)
}

// boundedFunctions are Functions() checked against b: arguments that
// would make an oversized result are refused before the function runs,
// results are measured (size and depth) and charged.
func boundedFunctions(b *budget) map[string]function.Function {
	fns := Functions()
	for name, f := range fns {
		fns[name] = bounded(name, f, b)
	}
	return fns
}

func bounded(name string, f function.Function, b *budget) function.Function {
	spec := &function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			types := make([]cty.Type, len(args))
			for i, a := range args {
				types[i] = a.Type()
			}
			return f.ReturnType(types)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if err := precheck(name, args, b); err != nil {
				return cty.NilVal, err
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			m := b.measure(v, true)
			switch {
			case m.deep:
				return cty.NilVal, fmt.Errorf("%s made a value nested more than %d levels deep; raise the limit with the environment variable %s=N if that is intended", name, b.lim.Depth, EnvMaxDepth)
			case m.huge:
				return cty.NilVal, hugeNumber(name)
			case m.n > b.lim.Elements:
				return cty.NilVal, b.tooMany(name, float64(m.n))
			}
			if err := b.charge(m.total, name); err != nil {
				return cty.NilVal, err
			}
			return v, nil
		},
	}
	return function.New(spec)
}

// size is what measure finds in a value.
type size struct {
	n     int  // the largest collection (elements) or string (characters) in it
	total int  // every element and character at every level, references counted each time
	deep  bool // nested deeper than the depth limit
	huge  bool // holds a number beyond maxNumberExp
}

// measure walks v without recursion; with numbers, it checks every
// number against maxNumberExp and counts its digits. A value can hold the same large
// value many times ([local.a, local.a] doubles with each local), so
// the walk counts every visit and stops once the total passes what the
// load's work budget has left: measuring costs at most the budget.
func (b *budget) measure(v cty.Value, numbers bool) (m size) {
	type item struct {
		v     cty.Value
		depth int
	}
	limit := int(min(b.lim.Work-b.work.Load(), int64(b.lim.Work))) + 1
	stack := []item{{v, 0}}
	for len(stack) > 0 && m.total <= limit && m.n <= b.lim.Elements {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > b.lim.Depth {
			m.deep = true
			return m
		}
		x, _ := it.v.Unmark()
		if x.IsNull() || !x.IsKnown() {
			continue
		}
		m.total++
		ty := x.Type()
		switch {
		case ty == cty.String:
			l := len(x.AsString())
			m.n = max(m.n, l)
			m.total += l
		case ty == cty.Number && numbers:
			d, ok := numberDigits(x)
			if !ok {
				m.huge = true
				return m
			}
			m.total += d - 1
		case ty.IsListType() || ty.IsSetType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType():
			l := x.LengthInt()
			m.n = max(m.n, l)
			if l > b.lim.Elements || m.total+l > limit {
				m.total += l
				return m
			}
			if ty.IsListType() || ty.IsSetType() || ty.IsTupleType() {
				// No iterator: a list's iterator makes a number per index.
				for _, ev := range x.AsValueSlice() {
					stack = append(stack, item{ev, it.depth + 1})
				}
				continue
			}
			for e := x.ElementIterator(); e.Next(); {
				_, ev := e.Element()
				stack = append(stack, item{ev, it.depth + 1})
			}
		}
	}
	return m
}

// local measures local n's value in full and charges it: a local may
// hold earlier ones many times ([local.a, local.a] doubles with each
// local at no cost to hcl), and whatever then walks it (a comparison,
// jsonencode, a conversion) walks every copy. Bounding each local's
// full size bounds every walk of it.
func (b *budget) local(n string, v cty.Value, rng hcl.Range) hcl.Diagnostics {
	m := b.measure(v, false)
	var err error
	switch {
	case m.deep:
		err = fmt.Errorf("local.%s is nested more than %d levels deep; raise the limit with the environment variable %s=N if that is intended", n, b.lim.Depth, EnvMaxDepth)
	case m.huge:
		err = hugeNumber("local." + n)
	case m.n > b.lim.Elements:
		err = b.tooMany("local."+n, float64(m.n))
	default:
		err = b.charge(m.total, "local."+n)
	}
	if err == nil {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Evaluation limit", Detail: err.Error() + ".", Subject: &rng}}
}

// maxNumberExp bounds the binary exponent of a number a spec may make:
// 2^±1024, a float64's range (about 1.8e308), far beyond any setting.
// Writing a number as text (templates, tostring, format, jsonencode, a
// string attribute) takes time that grows with its exponent, faster
// than linearly for tiny ones: 1e600000000 took minutes, 2^-131072 took
// 2.5 s. Literals, operands, function results and what a function
// writes as text are held to it, so a number written out is at most a
// product of two such (634 digits, a quarter of a millisecond), and the
// functions that write numbers are charged their digits.
const maxNumberExp = 1024

// numberOK reports whether the number v (known, not null) is within
// maxNumberExp; infinities are (they write as a word).
func numberOK(v cty.Value) bool {
	_, ok := numberDigits(v)
	return ok
}

// numberDigits is about how many digits the number v (known, not null)
// takes as text, and whether it is within maxNumberExp.
func numberDigits(v cty.Value) (int, bool) {
	f := v.AsBigFloat()
	if f.IsInf() || f.Sign() == 0 {
		return 1, true
	}
	e := f.MantExp(nil)
	if e < 0 {
		e = -e
	}
	return e*3/10 + 1, e <= maxNumberExp
}

func hugeNumber(what string) error {
	return fmt.Errorf("%s: a number beyond 2^±%d (about 1.8e±308, a float64's range); fabctl refuses numbers this large or this small, which take long to write as text", what, maxNumberExp)
}

// walkers are the functions whose work or result grows with everything
// in their arguments, not only with their length: they serialize
// (jsonencode, format, formatlist, tostring), flatten, or hash and
// compare whole elements (the set functions, distinct, contains,
// index). Their arguments are measured in full and charged.
//
// writers are the walkers that write numbers as text.
var writers = map[string]bool{"jsonencode": true, "format": true, "formatlist": true, "tostring": true}

var walkers = map[string]bool{"jsonencode": true, "format": true, "formatlist": true, "tostring": true, "flatten": true,
	"distinct": true, "toset": true, "tolist": true, "tomap": true, "setunion": true, "setintersection": true, "setsubtract": true,
	"contains": true, "index": true, "coalescelist": true, "sort": true}

var formatWidth = regexp.MustCompile(`%[-+ #0]*(\*|[0-9]+)?(?:\.(\*|[0-9]+))?`)

// precheck refuses the calls whose result would outgrow the limits
// before the function allocates it.
func precheck(name string, args []cty.Value, b *budget) error {
	known := func(v cty.Value) bool { return v.IsKnown() && !v.IsNull() }
	length := func(v cty.Value) float64 {
		v, _ = v.Unmark()
		if !known(v) || !(v.Type().IsCollectionType() || v.Type().IsTupleType() || v.Type().IsObjectType()) {
			return 0
		}
		return float64(v.LengthInt())
	}
	str := func(v cty.Value) (string, bool) {
		v, _ = v.Unmark()
		if !known(v) || v.Type() != cty.String {
			return "", false
		}
		return v.AsString(), true
	}
	limit := float64(b.lim.Elements)
	switch name {
	case "setproduct":
		p := 1.0
		for _, a := range args {
			p *= length(a)
		}
		if p > limit {
			return b.tooMany("setproduct", p)
		}
	case "join":
		if len(args) == 0 {
			return nil
		}
		sep, _ := str(args[0])
		total, count := 0.0, 0.0
		for _, l := range args[1:] {
			l, _ = l.Unmark()
			if !known(l) || !l.CanIterateElements() {
				continue
			}
			for e := l.ElementIterator(); e.Next(); {
				_, ev := e.Element()
				if s, ok := str(ev); ok {
					total += float64(len(s))
				}
				count++
			}
		}
		if total+count*float64(len(sep)) > limit {
			return b.tooMany("join", total+count*float64(len(sep)))
		}
	case "replace":
		if len(args) == 3 {
			s, ok1 := str(args[0])
			old, ok2 := str(args[1])
			rep, ok3 := str(args[2])
			if ok1 && ok2 && ok3 {
				var k float64
				if old == "" {
					k = float64(len(s) + 1)
				} else if !strings.HasPrefix(old, "/") {
					k = float64(strings.Count(s, old))
				} else {
					k = float64(len(s) + 1) // a regular expression: at most one match per position
				}
				if out := float64(len(s)) + k*float64(len(rep)); out > limit {
					return b.tooMany("replace", out)
				}
			}
		}
	case "indent":
		if len(args) == 2 {
			s, ok := str(args[1])
			if sp, _ := args[0].Unmark(); ok && known(sp) {
				w, _ := sp.AsBigFloat().Float64()
				if out := float64(len(s)) + w*float64(strings.Count(s, "\n")+1); out > limit || w > limit {
					return b.tooMany("indent", out)
				}
			}
		}
	case "format", "formatlist":
		if len(args) > 0 {
			if f, ok := str(args[0]); ok {
				for _, m := range formatWidth.FindAllStringSubmatch(f, -1) {
					for _, w := range m[1:] {
						if w == "*" {
							return errors.New(name + ": widths and precisions given by * are not supported")
						}
						if x, err := strconv.ParseFloat(w, 64); err == nil && x > limit {
							return b.tooMany(name, x)
						}
					}
				}
			}
			if name == "formatlist" {
				longest := 0.0
				for _, a := range args[1:] {
					longest = max(longest, length(a))
				}
				if longest > limit {
					return b.tooMany(name, longest)
				}
			}
		}
	}
	for _, a := range args {
		if u, _ := a.Unmark(); walkers[name] && known(u) && !u.Type().IsPrimitiveType() {
			m := b.measure(a, writers[name])
			switch {
			case m.deep:
				return fmt.Errorf("%s: an argument nested more than %d levels deep; raise the limit with the environment variable %s=N if that is intended", name, b.lim.Depth, EnvMaxDepth)
			case m.huge:
				return hugeNumber(name)
			}
			if err := b.charge(m.total, name); err != nil {
				return err
			}
			continue
		}
		if u, _ := a.Unmark(); known(u) && u.Type() == cty.Number && !numberOK(u) {
			return hugeNumber(name)
		}
		if l := length(a); l > 0 {
			if err := b.charge(int(l), name); err != nil {
				return err
			}
		}
	}
	return nil
}

// For expressions, templates and operators. hcl evaluates
// `[for x in C : ...]` by iterating C itself, with no hook; instrument
// wraps the collection expression of every for expression of a
// native-syntax body (forColl), so that its length is checked against
// Elements and charged to the load's work before the iteration starts:
// nested for expressions over large collections stop at the limit, at
// the for expression's file:line. Templates concatenate with no hook
// either ("${local.a}${local.a}" doubles a string per local; a %{for}
// directive repeats its body): each part of a template of several parts
// and each body of a %{for} is measured and charged as it is made
// (guarded). Operands of operators are held to maxNumberExp (1e9999 *
// 1e9999 * ... grows a number's text without bound), and both sides of
// == and != are measured in full (comparing two large values walks
// them). Number literals beyond maxNumberExp are errors. Only bodies
// whose source may hold one of these are walked (instrumentGate; a
// generated inventory of literal blocks never is).
func instrumentFor(src []byte, body *hclsyntax.Body, b *budget) hcl.Diagnostics {
	if body == nil || b == nil || !instrumentGate(src) {
		return nil
	}
	var diags hcl.Diagnostics
	_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		switch e := n.(type) {
		case *hclsyntax.ForExpr:
			if _, done := e.CollExpr.(*forColl); !done {
				e.CollExpr = &forColl{ParenthesesExpr: &hclsyntax.ParenthesesExpr{Expression: e.CollExpr, SrcRange: e.CollExpr.Range()}, b: b, rng: e.SrcRange}
				e.ValExpr = guard(e.ValExpr, guardBody, e.SrcRange, b)
			}
		case *hclsyntax.TemplateExpr:
			if len(e.Parts) > 1 {
				for i, p := range e.Parts {
					e.Parts[i] = guard(p, guardPart, e.SrcRange, b)
				}
			}
		case *hclsyntax.TemplateJoinExpr:
			if fe, ok := e.Tuple.(*hclsyntax.ForExpr); ok {
				fe.ValExpr = guard(fe.ValExpr, guardPart, e.Range(), b)
			}
		case *hclsyntax.BinaryOpExpr:
			kind := guardOperand
			if e.Op == hclsyntax.OpEqual || e.Op == hclsyntax.OpNotEqual {
				kind = guardCompared
			}
			e.LHS, e.RHS = guard(e.LHS, kind, e.SrcRange, b), guard(e.RHS, kind, e.SrcRange, b)
		case *hclsyntax.TupleConsExpr:
			for i, x := range e.Exprs {
				e.Exprs[i] = guard(x, guardElement, x.Range(), b)
			}
		case *hclsyntax.ObjectConsExpr:
			for i := range e.Items {
				e.Items[i].ValueExpr = guard(e.Items[i].ValueExpr, guardElement, e.Items[i].ValueExpr.Range(), b)
			}
		case *hclsyntax.UnaryOpExpr:
			e.Val = guard(e.Val, guardOperand, e.SrcRange, b)
		case *hclsyntax.LiteralValueExpr:
			if v := e.Val; v.Type() == cty.Number && v.IsKnown() && !v.IsNull() && !numberOK(v) {
				rng := e.SrcRange
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation limit", Detail: hugeNumber("this number").Error() + ".", Subject: &rng})
			}
		}
		return nil
	})
	return diags
}

// instrumentGate reports whether src may hold what instrumentFor
// wraps: a for expression, a template, a reference to a local, or a
// number literal with a
// three-digit exponent or of 40 digits and more. A false positive only
// costs a walk of the tree.
func instrumentGate(src []byte) bool {
	if bytes.Contains(src, []byte("${")) || bytes.Contains(src, []byte("%{")) || bytes.Contains(src, []byte("local.")) || hasForExpr(src) {
		return true
	}
	digits := 0
	for i, c := range src {
		if c >= '0' && c <= '9' {
			digits++
			if digits >= 40 {
				return true
			}
			continue
		}
		digits = 0
		if (c == 'e' || c == 'E') && i > 0 && src[i-1] >= '0' && src[i-1] <= '9' {
			j := i + 1
			if j < len(src) && (src[j] == '+' || src[j] == '-') {
				j++
			}
			k := j
			for k < len(src) && src[k] >= '0' && src[k] <= '9' {
				k++
			}
			if k-j >= 3 {
				return true
			}
		}
	}
	return false
}

type guardKind int

const (
	guardPart     guardKind = iota // a template's part: a string is measured and charged, a number held to maxNumberExp
	guardOperand                   // an operator's operand: a number held to maxNumberExp
	guardCompared                  // an operand of == or !=: measured in full and charged
	guardBody                      // a for expression's body: measured, charged when large; not evaluated once the work limit is passed
	guardElement                   // an element of a tuple or object: measured, charged when large
)

// largeElement is the size from which a for expression's value or a
// tuple's or object's element is charged: [local.a, local.a, ...] and
// [for i in range(1000) : local.a] hold a large value many times at no
// cost to hcl, but cty walks every copy (every function call checks its
// arguments for marks in full). Small elements, the names and numbers
// of a generated fabric, cost nothing.
const largeElement = 64

// guarded is an expression checked as it is evaluated. Like forColl it
// embeds a ParenthesesExpr, so hclsyntax's walk still sees the inner
// expression.
type guarded struct {
	*hclsyntax.ParenthesesExpr
	kind guardKind
	b    *budget
	rng  hcl.Range
}

func guard(e hclsyntax.Expression, kind guardKind, rng hcl.Range, b *budget) hclsyntax.Expression {
	if _, done := e.(*guarded); done {
		return e
	}
	return &guarded{ParenthesesExpr: &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}, kind: kind, b: b, rng: rng}
}

func (g *guarded) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if g.b.exhausted.Load() {
		return cty.DynamicVal, nil
	}
	v, diags := g.ParenthesesExpr.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	u, _ := v.Unmark()
	if u.IsNull() || !u.IsKnown() {
		return v, diags
	}
	var err error
	switch {
	case u.Type() == cty.Number:
		if !numberOK(u) {
			err = hugeNumber("this expression")
		}
	case g.kind == guardPart && u.Type() == cty.String:
		// A template part of up to Elements characters, charged by the
		// whole 16 characters: what templates make in all stays within 16
		// times the work limit, and a generated fabric's names
		// ("leaf${i}") cost little.
		if n := len(u.AsString()); n > g.b.lim.Elements {
			err = g.b.tooMany("this template", float64(n))
		} else {
			err = g.b.charge(n/16, "this template")
		}
	case g.kind == guardBody || g.kind == guardElement:
		if m := g.b.measure(u, false); m.deep {
			err = fmt.Errorf("a value nested more than %d levels deep; raise the limit with the environment variable %s=N if that is intended", g.b.lim.Depth, EnvMaxDepth)
		} else if m.total > largeElement {
			err = g.b.charge(m.total, "this expression")
		}
	case g.kind == guardCompared:
		m := g.b.measure(u, false)
		switch {
		case m.deep:
			err = fmt.Errorf("a value nested more than %d levels deep; raise the limit with the environment variable %s=N if that is intended", g.b.lim.Depth, EnvMaxDepth)
		case m.huge:
			err = hugeNumber("this comparison")
		default:
			err = g.b.charge(m.total, "this comparison")
		}
	}
	if err != nil {
		rng := g.rng
		return cty.DynamicVal, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation limit", Detail: err.Error() + ".", Subject: &rng, Expression: g.ParenthesesExpr.Expression, EvalContext: ctx})
	}
	return v, diags
}

// hasForExpr reports whether src may hold a for expression: the word
// "for" right after a '[' or '{' (blanks between). A false positive only
// costs a walk of the tree.
func hasForExpr(src []byte) bool {
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte("for"))
		if j < 0 {
			return false
		}
		j += i
		k := j - 1
		for k >= 0 && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
			k--
		}
		if k >= 0 && (src[k] == '[' || src[k] == '{') && j+3 < len(src) && (src[j+3] == ' ' || src[j+3] == '\t') {
			return true
		}
		i = j + 3
	}
}

// forIterationCost is what one iteration of a for expression counts
// against the work limit: hcl allocates about a kilobyte per iteration
// (a child scope and its variables), eight times what an element a
// function makes costs. A million iterations took 1.1 GB and seconds.
const forIterationCost = 8

// forColl is a for expression's collection, measured before hcl
// iterates it. It embeds the collection in a ParenthesesExpr (which
// evaluates to its inner expression) rather than embedding the inner
// expression itself: hclsyntax's walk (Variables, which orders locals)
// then visits the inner expression as a child. Embedding the inner
// expression would promote its child walk but hide the node itself, and
// a collection that is a plain reference (local.storage) would vanish
// from the references of every expression around it.
type forColl struct {
	*hclsyntax.ParenthesesExpr
	b   *budget
	rng hcl.Range
}

func (c *forColl) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if c.b.exhausted.Load() {
		return cty.DynamicVal, nil
	}
	v, diags := c.ParenthesesExpr.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	u, _ := v.Unmark()
	if u.IsNull() || !u.IsKnown() || !u.CanIterateElements() {
		return v, diags
	}
	n := u.LengthInt()
	err := error(nil)
	if n > c.b.lim.Elements {
		err = c.b.tooMany("this for expression", float64(n))
	} else {
		err = c.b.charge(n*forIterationCost, "this for expression")
	}
	if err != nil {
		rng := c.rng
		return cty.DynamicVal, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation limit", Detail: err.Error() + ".", Subject: &rng, Expression: c.ParenthesesExpr.Expression, EvalContext: ctx})
	}
	return v, diags
}
