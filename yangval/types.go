package yangval

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/openconfig/goyang/pkg/yang"
)

func levenshteinDistance(a, b string) int { return levenshtein.Distance(a, b, nil) }

// ytype is a compiled YANG type.
type ytype struct {
	yt       *yang.YangType
	kind     yang.TypeKind
	name     string
	rng      yang.YangRange
	length   yang.YangRange
	pats     []*regexp.Regexp
	patSrc   []string
	union    []*ytype
	path     string // leafref path
	optional bool   // leafref require-instance false
}

func (s *Schema) compileType(yt *yang.YangType, where string) *ytype {
	if yt == nil {
		return &ytype{kind: yang.Ynone}
	}
	if t, ok := s.types[yt]; ok {
		return t
	}
	t := &ytype{yt: yt, kind: yt.Kind, name: yt.Name, rng: yt.Range, length: yt.Length,
		path: yt.Path, optional: yt.OptionalInstance}
	s.types[yt] = t
	switch yt.Kind {
	case yang.Ystring:
		if len(yt.POSIXPattern) > 0 {
			// openconfig-extensions:posix-pattern: already anchored POSIX ERE.
			for _, p := range yt.POSIXPattern {
				re, err := regexp.Compile(p)
				if err != nil {
					s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s: posix-pattern %q: %v", where, p, err))
					continue
				}
				t.pats, t.patSrc = append(t.pats, re), append(t.patSrc, p)
			}
		} else {
			for _, p := range yt.Pattern {
				re, err := compileXSD(p)
				if err != nil {
					s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s: pattern %q: %v", where, p, err))
					continue
				}
				t.pats, t.patSrc = append(t.pats, re), append(t.patSrc, p)
			}
		}
	case yang.Yunion:
		for _, m := range yt.Type {
			t.union = append(t.union, s.compileType(m, where))
		}
	}
	return t
}

// compileXSD translates an XML Schema regular expression (the YANG pattern
// dialect, RFC 7950 section 9.4.5) into an anchored Go regular expression.
// XSD patterns are implicitly anchored and treat '^' and '$' as ordinary
// characters outside character classes. Character-class subtraction and
// Unicode block escapes (\p{IsX}) are not supported and return an error.
func compileXSD(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?:`)
	inClass := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			i++
			switch n {
			case 'i':
				b.WriteString(cls(inClass, `_:A-Za-z`))
			case 'I':
				b.WriteString(`[^_:A-Za-z]`)
			case 'c':
				b.WriteString(cls(inClass, `\-._:A-Za-z0-9`))
			case 'C':
				b.WriteString(`[^\-._:A-Za-z0-9]`)
			case 'p', 'P':
				if strings.HasPrefix(p[i+1:], "{Is") {
					return nil, fmt.Errorf("unicode block escapes are not supported")
				}
				b.WriteByte('\\')
				b.WriteByte(n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case c == '[':
			if inClass > 0 {
				return nil, fmt.Errorf("character class subtraction is not supported")
			}
			inClass++
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
		case c == ']' && inClass > 0:
			inClass--
			b.WriteByte(c)
		case (c == '^' || c == '$') && inClass == 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '-' && inClass > 0 && i+1 < len(p) && p[i+1] == '[':
			return nil, fmt.Errorf("character class subtraction is not supported")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(`)$`)
	return regexp.Compile(b.String())
}

func cls(inClass int, body string) string {
	if inClass > 0 {
		return body
	}
	return "[" + body + "]"
}

// scalarString returns the text of a JSON scalar and whether it was a JSON
// string.
func scalarString(v any) (string, bool, bool) {
	switch x := v.(type) {
	case string:
		return x, true, true
	case json.Number:
		return x.String(), false, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), false, true
	case int:
		return strconv.Itoa(x), false, true
	case int64:
		return strconv.FormatInt(x, 10), false, true
	case uint64:
		return strconv.FormatUint(x, 10), false, true
	case bool:
		return strconv.FormatBool(x), false, true
	}
	return "", false, false
}

func inRange(r yang.YangRange, n yang.Number) bool {
	if len(r) == 0 {
		return true
	}
	for _, yr := range r {
		if !n.Less(yr.Min) && !yr.Max.Less(n) {
			return true
		}
	}
	return false
}

var builtinRange = map[yang.TypeKind]yang.YangRange{
	yang.Yint8: yang.Int8Range, yang.Yint16: yang.Int16Range, yang.Yint32: yang.Int32Range, yang.Yint64: yang.Int64Range,
	yang.Yuint8: yang.Uint8Range, yang.Yuint16: yang.Uint16Range, yang.Yuint32: yang.Uint32Range, yang.Yuint64: yang.Uint64Range,
}

// leafrefUse is reported back by check for each leafref value, so the
// caller can verify that the referenced instance exists.
type leafrefUse struct {
	t      *ytype
	target *node
	value  string
}

// check validates one scalar value v against t in the context of leaf n.
// lax accepts every scalar as a string (CONFIG_DB); otherwise RFC 7951
// encodings are required for booleans and integers of up to 32 bits
// (64-bit integers and decimal64 are accepted as strings or numbers). It returns a
// problem description ("" when valid) and, for leafrefs, the use to verify.
func (s *Schema) check(n *node, t *ytype, v any, depth int, lax bool) (string, *leafrefUse) {
	if depth > 16 {
		return "", nil // leafref chain too deep: give up quietly
	}
	str, isStr, ok := scalarString(v)
	switch t.kind {
	case yang.Yempty:
		if arr, isArr := v.([]any); isArr && len(arr) == 1 && arr[0] == nil {
			return "", nil
		}
		if v == nil || (isStr && str == "") {
			return "", nil
		}
		return "type empty expects [null]", nil
	case yang.Ybool:
		if _, b := v.(bool); b {
			return "", nil
		}
		if lax && isStr && (str == "true" || str == "false") {
			return "", nil
		}
		return "not a boolean", nil
	}
	if !ok {
		return fmt.Sprintf("expected a %s value, got %s", t.name, jsonKind(v)), nil
	}
	switch t.kind {
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yint64,
		yang.Yuint8, yang.Yuint16, yang.Yuint32, yang.Yuint64:
		if isStr && !lax && t.kind != yang.Yint64 && t.kind != yang.Yuint64 {
			return fmt.Sprintf("%s must be a JSON number (RFC 7951)", t.kind), nil
		}
		num, err := yang.ParseInt(strings.TrimSpace(str))
		if err != nil {
			return fmt.Sprintf("not an integer (%s)", t.name), nil
		}
		if !inRange(builtinRange[t.kind], num) {
			return fmt.Sprintf("out of range for %s", t.kind), nil
		}
		if !inRange(t.rng, num) {
			return fmt.Sprintf("out of range %s (type %s)", t.rng, t.name), nil
		}
	case yang.Ydecimal64:
		num, err := yang.ParseDecimal(strings.TrimSpace(str), uint8(t.yt.FractionDigits))
		if err != nil {
			return fmt.Sprintf("not a decimal64 with %d fraction digits", t.yt.FractionDigits), nil
		}
		if !inRange(t.rng, num) {
			return fmt.Sprintf("out of range %s (type %s)", t.rng, t.name), nil
		}
	case yang.Ystring:
		if !isStr {
			return "expected a string", nil
		}
		if len(t.length) > 0 && !inRange(t.length, yang.FromInt(int64(len([]rune(str))))) {
			return fmt.Sprintf("length %d outside %s (type %s)", len([]rune(str)), t.length, t.name), nil
		}
		for i, re := range t.pats {
			if !re.MatchString(str) {
				return fmt.Sprintf("does not match pattern %q (type %s)", t.patSrc[i], t.name), nil
			}
		}
	case yang.Yenum:
		if !isStr || t.yt.Enum == nil || !t.yt.Enum.IsDefined(str) {
			return fmt.Sprintf("not a value of enumeration %s%s", t.name, didYouMean(str, enumNames(t))), nil
		}
	case yang.Ybits:
		if t.yt.Bit != nil {
			for _, b := range strings.Fields(str) {
				if !t.yt.Bit.IsDefined(b) {
					return fmt.Sprintf("bit %q not defined in %s", b, t.name), nil
				}
			}
		}
	case yang.Yidentityref:
		if !isStr {
			return "identityref must be a string", nil
		}
		if msg := checkIdentity(t, str); msg != "" {
			return msg, nil
		}
	case yang.Ybinary:
		if _, err := base64.StdEncoding.DecodeString(str); err != nil {
			return "not base64", nil
		}
	case yang.Yunion:
		// The first matching member decides, except that a member that
		// matches without needing a referenced instance (e.g. the string
		// "GLOBAL" next to a leafref) is preferred to a leafref member.
		var msgs []string
		var first *leafrefUse
		matched := false
		for _, m := range t.union {
			msg, use := s.check(n, m, v, depth+1, lax)
			if msg == "" {
				if use == nil {
					return "", nil
				}
				if !matched {
					first, matched = use, true
				}
				continue
			}
			msgs = append(msgs, msg)
		}
		if matched {
			return "", first
		}
		return "matches no member of union " + t.name + " (" + strings.Join(msgs, "; ") + ")", nil
	case yang.Yleafref:
		target := n.refs[t.path]
		if target == nil || target.typ == nil {
			return "", nil // unresolved path: not checked (listed in Schema.Unsupported)
		}
		if msg, _ := s.check(target, target.typ, v, depth+1, lax); msg != "" {
			return "leafref to " + target.spath + ": " + msg, nil
		}
		return "", &leafrefUse{t: t, target: target, value: canon(target.typ, str)}
	}
	return "", nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func enumNames(t *ytype) []string {
	if t.yt.Enum == nil {
		return nil
	}
	return t.yt.Enum.Names()
}

func didYouMean(v string, cands []string) string {
	if s := suggest(v, cands); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

func checkIdentity(t *ytype, str string) string {
	base := t.yt.IdentityBase
	if base == nil {
		return ""
	}
	prefix, name := "", str
	if i := strings.IndexByte(str, ':'); i >= 0 {
		prefix, name = str[:i], str[i+1:]
	}
	var names []string
	for _, id := range base.Values {
		if id.Name == name {
			if prefix == "" {
				return ""
			}
			m := yang.RootNode(id)
			if m != nil && (m.Name == prefix || m.GetPrefix() == prefix ||
				(m.BelongsTo != nil && m.BelongsTo.Name == prefix)) {
				return ""
			}
		}
		names = append(names, id.Name)
	}
	return fmt.Sprintf("not an identity derived from %s%s", base.Name, didYouMean(name, names))
}

// canon returns the comparison form of a value of type t (identity module
// prefixes are dropped).
func canon(t *ytype, s string) string {
	if t != nil && t.kind == yang.Yidentityref {
		if i := strings.IndexByte(s, ':'); i >= 0 {
			return s[i+1:]
		}
	}
	return s
}

// resolveRefs resolves every leafref path used by t (also inside unions)
// relative to leaf n.
func (s *Schema) resolveRefs(n *node, t *ytype) {
	switch t.kind {
	case yang.Yunion:
		for _, m := range t.union {
			s.resolveRefs(n, m)
		}
	case yang.Yleafref:
		if n.refs == nil {
			n.refs = map[string]*node{}
		}
		if _, done := n.refs[t.path]; done {
			return
		}
		target, err := s.resolvePath(n, t.path)
		if err != nil {
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("%s: leafref %q: %v", n.spath, t.path, err))
			n.refs[t.path] = nil
			return
		}
		target.refTarget = true
		n.refs[t.path] = target
	}
}

// resolvePath resolves a leafref path against the schema tree. Predicates
// are dropped: the target schema node is found, not a particular instance.
func (s *Schema) resolvePath(from *node, p string) (*node, error) {
	if strings.Contains(p, "deref(") {
		return nil, fmt.Errorf("deref() not supported")
	}
	p = stripPredicates(strings.TrimSpace(p))
	cur := from
	parts := strings.Split(p, "/")
	if strings.HasPrefix(p, "/") {
		parts = parts[1:]
		if len(parts) == 0 {
			return nil, fmt.Errorf("empty path")
		}
		prefix, name := splitQName(parts[0])
		var root *node
		if prefix != "" {
			m := yang.FindModuleByPrefix(from.e.Node, prefix)
			if m == nil {
				return nil, fmt.Errorf("unknown prefix %q", prefix)
			}
			mod := m.Name
			if m.BelongsTo != nil {
				mod = m.BelongsTo.Name
			}
			root = s.roots[mod+":"+name]
		}
		if root == nil && len(s.byName[name]) == 1 {
			root = s.byName[name][0]
		}
		if root == nil {
			return nil, fmt.Errorf("no top-level node %q", parts[0])
		}
		cur, parts = root, parts[1:]
	}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		switch part {
		case "", ".":
			continue
		case "..":
			cur = cur.parent
			if cur == nil {
				return nil, fmt.Errorf("path leaves the tree")
			}
			continue
		}
		_, name := splitQName(part)
		next := cur.children[name]
		if next == nil {
			return nil, fmt.Errorf("no node %q under %s", name, cur.spath)
		}
		cur = next
	}
	if cur.kind != kLeaf && cur.kind != kLeafList {
		return nil, fmt.Errorf("target %s is not a leaf", cur.spath)
	}
	return cur, nil
}

func splitQName(s string) (prefix, name string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

func stripPredicates(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
