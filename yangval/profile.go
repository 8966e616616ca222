package yangval

import (
	"regexp"
	"strings"
)

// Profile is how libyang (package yangval/libyang) loads a platform's
// model set: which model set (a sub-directory of the YANG root, as for
// `fabctl render --yang-dir`), which modules are implemented, which
// features are enabled, which load-time rewrites apply, and the sources
// for each choice. The platform's descriptor carries it
// (drivers.YANGModels), as the device's own facts.
type Profile struct {
	Name string
	// Set is the sub-directory of the YANG root holding the modules.
	Set string
	// Modules are implemented in this order; nil means every module of
	// the set (submodules excluded), First ones first.
	Modules []string
	First   []string
	// Features enabled per module; every other feature is disabled.
	Features map[string][]string
	Rewrites []Rewrite
	// Prefer picks among top-level nodes of the same name when a gNMI
	// path is not module-qualified (a device serving that origin does).
	Prefer string
	Source string
}

// Rewrite is a change to a module's text made in memory before the
// module is loaded: the models on disk are never edited. Either Old/New
// (an exact text, found exactly Count times) or Func (a computed
// rewrite that must change exactly Count expressions).
type Rewrite struct {
	Name   string // short identifier, for reports and tests
	Module string
	Reason string
	Old    string
	New    string
	Func   func(text string) (string, []Change)
	Count  int
}

// Change is one rewritten expression.
type Change struct {
	Line     int // 1-based line in the module file
	Old, New string
}

var reXPathArg = regexp.MustCompile(`\b(must|when)\s+("(?:[^"\\]|\\.)*"|'[^']*')`)

// NodeSetBoolean rewrites, inside must and when expressions, every
// equality between a location path (a node-set: a boolean leaf) and
// true() or false(), in either order, to a comparison of the leaf's
// value: `P = true()` and `true() = P` become `P = 'true'`, `P = false()`
// and `false() = P` become `P = 'false'`. A comparison whose other
// operand is not a location path (boolean(P) = false()) is left alone.
func NodeSetBoolean(text string) (string, []Change) {
	var b strings.Builder
	var changes []Change
	last := 0
	for _, m := range reXPathArg.FindAllStringSubmatchIndex(text, -1) {
		as, ae := m[4]+1, m[5]-1 // inside the quotes
		arg := text[as:ae]
		out, n := rewriteNodeSetBoolean(arg, text[m[4]])
		if n == 0 {
			continue
		}
		b.WriteString(text[last:as])
		b.WriteString(out)
		last = ae
		line := 1 + strings.Count(text[:as], "\n")
		for i := 0; i < n; i++ {
			changes = append(changes, Change{Line: line, Old: arg, New: out})
		}
	}
	b.WriteString(text[last:])
	return b.String(), changes
}

func rewriteNodeSetBoolean(expr string, quote byte) (string, int) {
	q := "'"
	if quote == '\'' {
		q = `"`
	}
	n := 0
	from := 0
	for {
		// the next true() or false() not preceded by a name character
		i, val := -1, ""
		for _, v := range []string{"true()", "false()"} {
			for k := from; ; {
				j := strings.Index(expr[k:], v)
				if j < 0 {
					break
				}
				j += k
				if j > 0 && isNameChar(expr[j-1]) {
					k = j + 1
					continue
				}
				if i < 0 || j < i {
					i, val = j, v
				}
				break
			}
		}
		if i < 0 {
			return expr, n
		}
		lit := q + strings.TrimSuffix(val, "()") + q
		end := i + len(val)
		// P = v
		if l := strings.TrimRight(expr[:i], " "); strings.HasSuffix(l, "=") && !strings.HasSuffix(l, "!=") &&
			!strings.HasSuffix(l, "<=") && !strings.HasSuffix(l, ">=") {
			eq := len(l) - 1
			if start, ok := operandStart(expr, eq); ok {
				op := strings.TrimSpace(expr[start:eq])
				repl := op + " = " + lit
				expr = expr[:start] + repl + expr[end:]
				n++
				from = start + len(repl)
				continue
			}
		}
		// v = P
		if r := strings.TrimLeft(expr[end:], " "); strings.HasPrefix(r, "=") {
			os := len(expr) - len(r) + 1
			for os < len(expr) && expr[os] == ' ' {
				os++
			}
			if oe, ok := operandEnd(expr, os); ok {
				op := expr[os:oe]
				repl := op + " = " + lit
				expr = expr[:i] + repl + expr[oe:]
				n++
				from = i + len(repl)
				continue
			}
		}
		from = end
	}
}

// operandEnd finds the end of the location path starting at start.
func operandEnd(expr string, start int) (int, bool) {
	i := start
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '[':
			depth := 0
			for i < len(expr) {
				if expr[i] == '[' {
					depth++
				} else if expr[i] == ']' {
					depth--
					if depth == 0 {
						break
					}
				}
				i++
			}
			i++
		case strings.HasPrefix(expr[i:], "current()"):
			i += len("current()")
		case isNameChar(c) || c == '/' || c == '.' || c == ':' || c == '*':
			i++
		default:
			goto done
		}
	}
done:
	if i == start || expr[start] >= '0' && expr[start] <= '9' || expr[start] == '\'' || expr[start] == '"' {
		return 0, false
	}
	if strings.HasSuffix(expr[start:i], "(") {
		return 0, false
	}
	// a function call other than current() is not a location path
	if i < len(expr) && expr[i] == '(' {
		return 0, false
	}
	return i, true
}

// operandStart finds the start of the location path that ends just
// before the "=" at eq; ok is false when the operand is not a location
// path (a boolean() call, a literal, a number).
func operandStart(expr string, eq int) (int, bool) {
	e := eq
	for e > 0 && expr[e-1] == ' ' {
		e--
	}
	i := e
	for i > 0 {
		c := expr[i-1]
		switch {
		case c == ']' || c == ')':
			open := map[byte]byte{']': '[', ')': '('}[c]
			depth := 0
			for i > 0 {
				i--
				if expr[i] == c {
					depth++
				} else if expr[i] == open {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if c == ')' {
				// a function call: its name precedes the parenthesis
				f := i
				for f > 0 && (isNameChar(expr[f-1])) {
					f--
				}
				if name := expr[f:i]; name != "current" {
					return 0, false // boolean(...), string(...), count(...): not a bare node-set
				}
				i = f
			}
		case isNameChar(c) || c == '/' || c == '.' || c == ':' || c == '*':
			i--
		default:
			goto done
		}
	}
done:
	if i == e {
		return 0, false
	}
	if op := expr[i:e]; op[0] >= '0' && op[0] <= '9' {
		return 0, false
	}
	return i, true
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

var reSubifType = regexp.MustCompile(`^(\S+/srl_nokia-if:subinterface\[[^ ]*\]/srl_nokia-if:type) != ('srl_nokia-if:[a-z-]+')(\s*)$`)

// SubinterfaceTypeNotEqual rewrites must expressions that are exactly
// `P/srl_nokia-if:type != 'srl_nokia-if:X'` (P a subinterface) to
// `not(P/srl_nokia-if:type = 'srl_nokia-if:X')`, true when the type is
// absent.
func SubinterfaceTypeNotEqual(text string) (string, []Change) {
	var b strings.Builder
	var changes []Change
	last := 0
	for _, m := range reXPathArg.FindAllStringSubmatchIndex(text, -1) {
		as, ae := m[4]+1, m[5]-1
		arg := text[as:ae]
		sm := reSubifType.FindStringSubmatch(arg)
		if sm == nil {
			continue
		}
		out := "not(" + sm[1] + " = " + sm[2] + ")" + sm[3]
		b.WriteString(text[last:as])
		b.WriteString(out)
		last = ae
		changes = append(changes, Change{Line: 1 + strings.Count(text[:as], "\n"), Old: arg, New: out})
	}
	b.WriteString(text[last:])
	return b.String(), changes
}
