package yangval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Error is one schema violation.
type Error struct {
	Path  string // data path, e.g. /qos/queues/queue[name=Q3]/config/queue-id
	Msg   string // the problem
	Value string // the offending value, if any
}

func (e Error) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s: %s (value %q)", e.Path, e.Msg, e.Value)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// Options tune a validation.
type Options struct {
	// Mandatory checks that every container or list entry present in the
	// payload carries its mandatory leaves (replace semantics). Leave it off
	// for partial updates.
	Mandatory bool
	// NoRefExistence disables the check that a leafref's value exists in the
	// payload when the referenced leaf lies inside the validated subtree.
	NoRefExistence bool
	// Complete says the payload is a device's whole configuration: every
	// leafref must resolve inside it, even into modules that have no data
	// in the payload, and a list key that is a leafref into its own entry
	// needs its target leaf (see ValidateTree).
	Complete bool
	// RefsOnly reports only dangling leafrefs and skips every other check
	// (types, unknown nodes, mandatory leaves): for a tree whose parts
	// were validated already, e.g. the configuration a validated
	// SetRequest creates.
	RefsOnly bool
	// State accepts state (config false) nodes beside configuration: the
	// payload is a device's operational data (a Get of type STATE or ALL),
	// whose leaves are checked against their types like configuration.
	State bool
	// strings: every scalar may be a JSON string (CONFIG_DB).
	stringScalars bool
}

type run struct {
	s      *Schema
	opt    Options
	errs   []Error
	values map[*node]map[string]struct{}
	uses   []pendingRef
	scope  map[*node]bool // validated subtrees: leafref existence checked inside
	buf    []byte         // data path of the node being validated
	// finishing: the walk is over, leafref existence is being checked
	finishing bool
}

type pendingRef struct {
	path  string
	use   *leafrefUse
	value string
}

func (r *run) errf(path, value, format string, a ...any) {
	if r.opt.RefsOnly && !r.finishing {
		return
	}
	r.errs = append(r.errs, Error{Path: path, Msg: fmt.Sprintf(format, a...), Value: value})
}

// ValidateJSON validates an RFC 7951 (JSON_IETF) value at a gNMI-style path
// ("/" or "" for the root, "/openconfig-qos:qos", "/qos/queues/queue[name=Q1]").
// At the root the members are module-qualified top-level nodes
// ("openconfig-qos:qos"); unqualified names are accepted when unambiguous.
func (s *Schema) ValidateJSON(path string, value []byte) []Error {
	return s.ValidateJSONOpts(path, value, Options{Mandatory: true})
}

// ValidateJSONOpts is ValidateJSON with explicit options.
func (s *Schema) ValidateJSONOpts(path string, value []byte, opt Options) []Error {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []Error{{Path: pathOrRoot(path), Msg: "invalid JSON: " + err.Error()}}
	}
	return s.Validate(path, v, opt)
}

// Validate validates a decoded JSON value (numbers as json.Number or
// float64) at path.
func (s *Schema) Validate(path string, v any, opt Options) []Error {
	r := &run{s: s, opt: opt, values: map[*node]map[string]struct{}{}}
	elems, err := parsePath(path)
	if err != nil {
		return []Error{{Path: path, Msg: err.Error()}}
	}
	if len(elems) == 0 {
		r.root(v)
	} else {
		r.at(elems, v)
	}
	r.finish()
	sort.SliceStable(r.errs, func(i, j int) bool { return r.errs[i].Path < r.errs[j].Path })
	return r.errs
}

func pathOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func (r *run) lookupRoot(name string) (*node, string) {
	prefix, local := splitQName(name)
	if prefix != "" {
		if n := r.s.roots[prefix+":"+local]; n != nil {
			return n, ""
		}
		if len(r.s.byName[local]) > 0 {
			return nil, fmt.Sprintf("module %q has no top-level node %q (defined in %s)", prefix, local, r.s.byName[local][0].module)
		}
	} else {
		switch c := r.s.byName[local]; len(c) {
		case 1:
			return c[0], ""
		case 0:
		default:
			var mods []string
			for _, n := range c {
				mods = append(mods, n.module)
			}
			return nil, fmt.Sprintf("ambiguous top-level name, qualify it with one of %s", strings.Join(mods, ", "))
		}
	}
	return nil, "unknown top-level node" + didYouMean(local, sortedKeys(r.s.byName))
}

func (r *run) root(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		r.errf("/", "", "root must be a JSON object, got %s", jsonKind(v))
		return
	}
	keys := sortedKeys(m)
	nodes := make([]*node, len(keys))
	for i, k := range keys {
		n, msg := r.lookupRoot(k)
		if n == nil {
			r.errf("/"+k, "", "%s", msg)
			continue
		}
		nodes[i] = n
		r.addScope(n) // all of them before the walk: leafrefs across modules
	}
	if r.opt.Complete {
		for _, n := range r.s.sortedRoots() { // the whole configuration: absent modules hold no data
			r.addScope(n)
		}
	}
	for i, n := range nodes {
		if n != nil {
			r.buf = append(r.buf[:0], "/"+n.name...)
			r.value(n, m[keys[i]])
		}
	}
}

type pathElem = PathElem

// parsePath parses a gNMI string path: /a/b[k=v][k2=v2]/c.
func parsePath(p string) ([]pathElem, error) {
	p = strings.TrimSpace(p)
	var out []pathElem
	i := 0
	for i < len(p) {
		if p[i] == '/' {
			i++
			continue
		}
		start := i
		for i < len(p) && p[i] != '/' && p[i] != '[' {
			i++
		}
		el := pathElem{Name: p[start:i]}
		for i < len(p) && p[i] == '[' {
			end := i + 1
			for end < len(p) && p[end] != ']' {
				if p[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(p) {
				return nil, fmt.Errorf("unterminated key in path %q", p)
			}
			kv := p[i+1 : end]
			eq := strings.IndexByte(kv, '=')
			if eq < 0 {
				return nil, fmt.Errorf("bad key %q in path %q", kv, p)
			}
			if el.Keys == nil {
				el.Keys = map[string]string{}
			}
			el.Keys[kv[:eq]] = unescapeKey(kv[eq+1:])
			i = end + 1
		}
		out = append(out, el)
	}
	return out, nil
}

// unescapeKey drops the '\' before an escaped character of a key value.
func unescapeKey(v string) string {
	if !strings.ContainsRune(v, '\\') {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func elemString(name string, keys []string, vals map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("[" + k + "=" + vals[k] + "]")
	}
	return b.String()
}

// at walks the schema along a path and validates v as the value at its end.
func (r *run) at(elems []pathElem, v any) {
	n, path, ok := r.walkPath(elems, true)
	if !ok {
		return
	}
	r.addScope(n)
	if el := elems[len(elems)-1]; n.kind == kList && el.Keys != nil {
		m, ok := v.(map[string]any)
		if !ok {
			r.errf(path, "", "list entry must be a JSON object, got %s", jsonKind(v))
			return
		}
		// keys in the path stand for keys absent from the body
		mm := make(map[string]any, len(m)+len(n.keys))
		for k, x := range m {
			mm[k] = x
		}
		for _, k := range n.keys {
			if x, ok := lookupMember(m, k); ok {
				if s, _, _ := scalarString(x); s != el.Keys[k] {
					r.errf(path+"/"+k, s, "key leaf does not match the path key %q", el.Keys[k])
				}
			} else if kn := n.children[k]; kn != nil && kn.typ != nil {
				mm[k] = jsonValue(kn, kn.typ, el.Keys[k], 0) // typed: uint32 keys are numbers
			} else {
				mm[k] = el.Keys[k]
			}
		}
		r.buf = append(r.buf[:0], path...)
		r.entry(n, mm)
		return
	}
	r.buf = append(r.buf[:0], path...)
	r.value(n, v)
}

func lookupMember(m map[string]any, name string) (any, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if _, local := splitQName(k); local == name {
			return v, true
		}
	}
	return nil, false
}

// The walker keeps the data path of the current node in r.buf and only
// turns it into a string for errors and pending leafref checks.

func (r *run) here(suffix string) string { return string(r.buf) + suffix }

func (r *run) push(seg string) int {
	l := len(r.buf)
	r.buf = append(r.buf, '/')
	r.buf = append(r.buf, seg...)
	return l
}

// value validates v as the data of node n located at r.buf.
func (r *run) value(n *node, v any) {
	switch n.kind {
	case kAny:
	case kContainer:
		m, ok := v.(map[string]any)
		if !ok {
			r.errf(r.here(""), "", "container must be a JSON object, got %s", jsonKind(v))
			return
		}
		r.members(n, m)
	case kList:
		arr, ok := v.([]any)
		if !ok {
			r.errf(r.here(""), "", "list must be a JSON array, got %s", jsonKind(v))
			return
		}
		var seen map[string]bool
		if len(arr) > 1 {
			seen = make(map[string]bool, len(arr))
		}
		base := len(r.buf)
		for i, ev := range arr {
			m, ok := ev.(map[string]any)
			if !ok {
				r.errf(fmt.Sprintf("%s[%d]", r.here(""), i), "", "list entry must be a JSON object, got %s", jsonKind(ev))
				continue
			}
			var missing []string
			for _, k := range n.keys {
				r.buf = append(r.buf, '[')
				r.buf = append(r.buf, k...)
				r.buf = append(r.buf, '=')
				x, ok := lookupMember(m, k)
				if !ok {
					missing = append(missing, k)
					r.buf = append(r.buf, '?')
				} else {
					r.buf = appendScalar(r.buf, x)
				}
				r.buf = append(r.buf, ']')
			}
			for _, k := range missing {
				r.errf(r.here(""), "", "list entry has no key leaf %q", k)
			}
			if seen != nil && len(missing) == 0 {
				id := string(r.buf[base:])
				if seen[id] {
					r.errf(r.here(""), "", "duplicate list entry")
				}
				seen[id] = true
			}
			r.entry(n, m)
			r.buf = r.buf[:base]
		}
	case kLeaf:
		r.leaf(n, v)
	case kLeafList:
		arr, ok := v.([]any)
		if !ok {
			if r.opt.stringScalars {
				arr = []any{v}
			} else {
				r.errf(r.here(""), "", "leaf-list must be a JSON array, got %s", jsonKind(v))
				return
			}
		}
		for _, x := range arr {
			r.leaf(n, x)
		}
	}
}

func appendScalar(b []byte, v any) []byte {
	if s, ok := v.(string); ok {
		return append(b, s...)
	}
	s, _, _ := scalarString(v)
	return append(b, s...)
}

// entry validates the members of one list entry and checks that key leaves
// duplicated inside the entry (OpenConfig config/<key>) carry the same value.
func (r *run) entry(n *node, m map[string]any) {
	r.members(n, m)
	for _, k := range n.keys {
		kn := n.children[k]
		if kn == nil || !kn.keySelfRef {
			continue
		}
		kv, ok := lookupMember(m, k)
		if !ok {
			continue
		}
		cur := any(m)
		for _, part := range kn.keyRel {
			cm, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			_, local := splitQName(part)
			if cur, ok = lookupMember(cm, local); !ok {
				cur = nil
				break
			}
		}
		if cur == nil {
			if r.opt.Complete && !kn.typ.optional {
				a, _, _ := scalarString(kv)
				r.errf(r.here("/"+strings.Join(kn.keyRel, "/")), "", "missing: list key %s=%s is a leafref to it", k, a)
			}
			continue
		}
		a, _, _ := scalarString(kv)
		b, _, _ := scalarString(cur)
		if a != b {
			r.errf(r.here("/"+strings.Join(kn.keyRel, "/")), b, "does not match list key %s=%s", k, a)
		}
	}
}

func (r *run) members(n *node, m map[string]any) {
	for k, cv := range m {
		c, qual := n.child(k)
		if c == nil {
			r.errf(r.here("/"+k), "", "unknown node%s", didYouMean(k, sortedKeys(n.children)))
			continue
		}
		l := r.push(c.name)
		switch {
		case qual != "" && qual != c.module:
			r.errf(r.here(""), "", "node belongs to module %s, not %s", c.module, qual)
		case !c.config && !r.opt.State:
			r.errf(r.here(""), "", "state node (config false) cannot be written")
		default:
			r.value(c, cv)
		}
		r.buf = r.buf[:l]
	}
	if r.opt.Mandatory {
		for _, name := range n.mandatory {
			if _, ok := lookupMember(m, name); !ok {
				r.errf(r.here("/"+name), "", "mandatory leaf missing")
			}
		}
	}
}

func (r *run) leaf(n *node, v any) {
	if r.opt.RefsOnly && n.refs == nil && !n.refTarget {
		return // neither a reference nor referenced
	}
	msg, use := r.s.check(n, n.typ, v, 0, r.opt.stringScalars)
	str, _, _ := scalarString(v)
	if msg != "" {
		if str == "" {
			str = jsonKind(v)
		}
		r.errf(r.here(""), str, "%s", msg)
		return
	}
	if n.refTarget {
		set := r.values[n]
		if set == nil {
			set = map[string]struct{}{}
			r.values[n] = set
		}
		set[canon(n.typ, str)] = struct{}{}
	}
	if use != nil && !use.t.optional && !r.opt.NoRefExistence && !n.keySelfRef && r.inScope(use.target) {
		r.uses = append(r.uses, pendingRef{path: r.here(""), use: use, value: str})
	}
}

func (r *run) inScope(n *node) bool {
	for p := n; p != nil; p = p.parent {
		if r.scope[p] {
			return true
		}
	}
	return false
}

func (r *run) addScope(n *node) {
	if r.scope == nil {
		r.scope = map[*node]bool{}
	}
	r.scope[n] = true
}

// finish checks leafref existence for references whose target lies inside
// the validated subtree(s).
func (r *run) finish() {
	r.finishing = true
	for _, p := range r.uses {
		t := p.use.target
		if _, ok := r.values[t][p.use.value]; !ok {
			r.errf(p.path, p.value, "leafref: no %s with this value in the payload", t.spath)
		}
	}
}
