package yangval

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/openconfig/goyang/pkg/yang"
)

// PathElem is one element of a gNMI path: a node name, optionally
// module-qualified ("openconfig-qos:qos"), and the keys of a list element.
type PathElem struct {
	Name string
	Keys map[string]string // nil for a non-list element
}

// ParsePath parses a gNMI path string (/a/b[k=v][k2=v2]/c; a ']' or '\'
// inside a key value is escaped with '\').
func ParsePath(p string) ([]PathElem, error) {
	elems, err := parsePath(p)
	if err != nil {
		return nil, err
	}
	return elems, nil
}

// PathString formats elems as a gNMI path string, keys in name order,
// escaping ']' and '\' in key values: the inverse of ParsePath.
func PathString(elems []PathElem) string {
	if len(elems) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, e := range elems {
		b.WriteByte('/')
		b.WriteString(e.Name)
		for _, k := range sortedKeys(e.Keys) {
			b.WriteString("[" + k + "=")
			b.WriteString(strings.NewReplacer(`\`, `\\`, `]`, `\]`).Replace(e.Keys[k]))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// OpKind is the kind of a SetRequest operation.
type OpKind int

// The three SetRequest operations, in the order a target applies them.
const (
	OpDelete OpKind = iota + 1
	OpReplace
	OpUpdate
)

func (k OpKind) String() string {
	switch k {
	case OpDelete:
		return "delete"
	case OpReplace:
		return "replace"
	case OpUpdate:
		return "update"
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// SetOp is one operation of a gNMI SetRequest, with the prefix already
// joined to its path. Value is the decoded JSON_IETF value (numbers as
// json.Number or float64); it is ignored for deletes.
type SetOp struct {
	Op    OpKind
	Path  []PathElem
	Value any
}

// ValidateSet checks the operations of a gNMI SetRequest against the
// models, each on its own (the device's current data is not known here):
// every path exists in the models and is configuration (not state); list
// elements in a path carry exactly the list's keys, with values of the key
// types, and a key leaf inside a value agrees with the path; replace and
// update values have the right types, ranges, patterns, enums and
// identities; replaced subtrees carry their mandatory leaves. Deletes may
// end at a list without keys (all entries) but cannot remove a list key.
// Leafref existence depends on the whole resulting tree: see ValidateTree.
// Error paths are data paths starting at the operation's path.
func (s *Schema) ValidateSet(ops []SetOp) []Error { return s.validateOps(ops, false) }

// ValidatePayload is ValidateSet for a payload that configures a device
// from nothing (`fabctl render`): in addition, every leafref must find
// its target among the values the operations set (key values in their
// paths included), when the target lies in a top-level node the payload
// touches; a reference into a module the payload leaves alone is assumed
// to exist on the device (an interface list). The operations' values are
// walked once, no tree is built.
func (s *Schema) ValidatePayload(ops []SetOp) []Error { return s.validateOps(ops, true) }

func (s *Schema) validateOps(ops []SetOp, refs bool) []Error {
	r := &run{s: s, values: map[*node]map[string]struct{}{}}
	for _, op := range ops {
		if !refs {
			break
		}
		names := []string{}
		if len(op.Path) > 0 {
			names = append(names, op.Path[0].Name)
		} else if m, ok := op.Value.(map[string]any); ok {
			names = sortedKeys(m)
		}
		for _, name := range names {
			if n, _ := r.lookupRoot(name); n != nil {
				r.addScope(n)
			}
		}
	}
	for _, op := range ops {
		start := len(r.errs)
		r.opt = Options{Mandatory: op.Op == OpReplace, NoRefExistence: !refs}
		switch {
		case op.Op == OpDelete:
			r.deletePath(op.Path)
		case len(op.Path) == 0:
			r.root(op.Value)
		default:
			r.at(op.Path, op.Value)
		}
		for i := start; i < len(r.errs); i++ {
			r.errs[i].Msg = op.Op.String() + ": " + r.errs[i].Msg
		}
	}
	r.finish()
	sort.SliceStable(r.errs, func(i, j int) bool { return r.errs[i].Path < r.errs[j].Path })
	return r.errs
}

// pathValues records the key values of a list element in a path as
// present, for leafrefs that point at the keys.
func (r *run) pathValues(n *node, el pathElem) {
	for k, v := range el.Keys {
		if kn := n.children[k]; kn != nil && kn.refTarget {
			set := r.values[kn]
			if set == nil {
				set = map[string]struct{}{}
				r.values[kn] = set
			}
			set[canon(kn.typ, v)] = struct{}{}
		}
	}
}

// ValidateTree validates v as a device's whole configuration (the root
// JSON_IETF object): ValidateJSON with mandatory leaves, and every leafref
// must find its target in v even when the target's module has no data at
// all (a dangling reference); a list key that is a leafref to a leaf in
// its own entry (OpenConfig name -> ../config/name) needs that leaf.
func (s *Schema) ValidateTree(v any) []Error {
	return s.Validate("/", v, Options{Mandatory: true, Complete: true})
}

// deletePath checks the path of a delete.
func (r *run) deletePath(elems []pathElem) {
	if len(elems) == 0 {
		return // delete of the root: everything
	}
	n, path, ok := r.walkPath(elems, true)
	if !ok {
		return
	}
	if p := n.parent; p != nil && p.kind == kList {
		for _, k := range p.keys {
			if k == n.name {
				r.errf(path, "", "a list key cannot be deleted; delete the list entry instead")
			}
		}
	}
}

// walkPath follows elems through the schema, reporting unknown nodes,
// state nodes and bad list keys, and records key values in the path as
// present (leafref targets). lastMayWildcard lets the last element be a
// list without keys (all entries). path is the data path walked.
func (r *run) walkPath(elems []pathElem, lastMayWildcard bool) (*node, string, bool) {
	n, msg := r.lookupRoot(elems[0].Name)
	if n == nil {
		r.errf("/"+elems[0].Name, "", "%s", msg)
		return nil, "", false
	}
	path := ""
	for i, el := range elems {
		if i > 0 {
			c, _ := n.child(el.Name)
			if c == nil {
				r.errf(path+"/"+el.Name, "", "unknown node%s", didYouMean(el.Name, sortedKeys(n.children)))
				return nil, "", false
			}
			n = c
		}
		if !n.config {
			r.errf(path+"/"+n.name, "", "%s is state (config false) and cannot be written", n.spath)
			return nil, "", false
		}
		if !r.pathKeys(n, el, path, lastMayWildcard && i == len(elems)-1) {
			return nil, "", false
		}
		if n.kind == kList && el.Keys != nil {
			path += "/" + elemString(n.name, n.keys, el.Keys)
			r.pathValues(n, el)
		} else {
			path += "/" + n.name
		}
	}
	return n, path, true
}

// pathKeys checks the keys of path element el at schema node n.
func (r *run) pathKeys(n *node, el pathElem, path string, mayOmit bool) bool {
	if n.kind != kList {
		if el.Keys != nil {
			r.errf(path+"/"+n.name, "", "keys given for a node that is not a list")
			return false
		}
		return true
	}
	if el.Keys == nil {
		if mayOmit {
			return true
		}
		r.errf(path+"/"+n.name, "", "list %s needs its keys %s in the path", n.name, strings.Join(n.keys, ", "))
		return false
	}
	ok := true
	for _, k := range sortedKeys(el.Keys) {
		if !containsStr(n.keys, k) {
			r.errf(path+"/"+elemString(n.name, n.keys, el.Keys), "", "%q is not a key of list %s (keys: %s)", k, n.name, strings.Join(n.keys, ", "))
			ok = false
		}
	}
	for _, k := range n.keys {
		v, present := el.Keys[k]
		if !present {
			r.errf(path+"/"+n.name, "", "list key %q missing in path", k)
			ok = false
			continue
		}
		if kn := n.children[k]; kn != nil && kn.typ != nil {
			if msg, _ := r.s.check(kn, kn.typ, v, 0, true); msg != "" {
				r.errf(path+"/"+elemString(n.name, n.keys, el.Keys), v, "key %s: %s", k, msg)
				ok = false
			}
		}
	}
	return ok
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// NodeKind is the kind of a schema node.
type NodeKind int

// Schema node kinds.
const (
	Container NodeKind = iota
	List
	Leaf
	LeafList
	AnyData
)

// Node is a handle on a schema node, for code that walks data alongside
// the models (a gNMI target merging list entries by key, naming members
// the RFC 7951 way). The zero Node is "no such node".
type Node struct{ n *node }

// RootNode finds a top-level node by JSON member name, module-qualified
// or, when unambiguous, not. The message says why when it is not found.
func (s *Schema) RootNode(name string) (Node, string) {
	r := &run{s: s}
	n, msg := r.lookupRoot(name)
	return Node{n}, msg
}

// RootNodes returns every top-level node whose name is name (local, or
// module-qualified: then at most one), sorted by module: a caller that
// knows which module family it serves (gNMI origin "openconfig") picks
// among same-named roots (openconfig-interfaces:interfaces and
// ietf-interfaces:interfaces).
func (s *Schema) RootNodes(name string) []Node {
	prefix, local := splitQName(name)
	var out []Node
	for _, n := range s.byName[local] {
		if prefix == "" || prefix == n.module {
			out = append(out, Node{n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n.module < out[j].n.module })
	return out
}

// ResolveRoot finds a top-level node by name. When several modules define
// an unqualified name (ietf-interfaces and openconfig-interfaces both
// define "interfaces"), the one whose module name starts with prefer
// ("openconfig-", "srl_nokia-") is chosen, as a device decides by the
// gNMI origin it serves. The zero Node when not found or still ambiguous.
func (s *Schema) ResolveRoot(name, prefer string) Node {
	cands := s.RootNodes(name)
	if len(cands) == 1 {
		return cands[0]
	}
	var found Node
	for _, c := range cands {
		if prefer != "" && strings.HasPrefix(c.n.module, prefer) {
			if found.Valid() {
				return Node{}
			}
			found = c
		}
	}
	return found
}

// QualifySet returns ops with each unqualified top-level name (the first
// path element, or the members of a value set at the root) qualified by
// the module ResolveRoot chooses, so that validation sees no ambiguity.
// Names it cannot resolve are left for validation to report.
func (s *Schema) QualifySet(ops []SetOp, prefer string) []SetOp {
	out := make([]SetOp, len(ops))
	for i, op := range ops {
		out[i] = op
		if len(op.Path) == 0 {
			out[i].Value = s.QualifyTree(op.Value, prefer)
			continue
		}
		if n := s.ResolveRoot(op.Path[0].Name, prefer); n.Valid() {
			out[i].Path = append([]PathElem{{Name: n.JSONName(), Keys: op.Path[0].Keys}}, op.Path[1:]...)
		}
	}
	return out
}

// QualifyTree returns a root object with its members qualified the way
// QualifySet qualifies paths; other values are returned as they are.
func (s *Schema) QualifyTree(v any, prefer string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if n := s.ResolveRoot(k, prefer); n.Valid() {
			k = n.JSONName()
		}
		out[k] = x
	}
	return out
}

// Valid says whether the handle names a node.
func (n Node) Valid() bool { return n.n != nil }

// Child returns the data child named name (with or without module prefix).
func (n Node) Child(name string) Node {
	if n.n == nil {
		return Node{}
	}
	c, qual := n.n.child(name)
	if c == nil || (qual != "" && qual != c.module) {
		return Node{}
	}
	return Node{c}
}

// Name is the node's name; Module the module whose namespace it is in.
func (n Node) Name() string   { return n.n.name }
func (n Node) Module() string { return n.n.module }

// JSONName is the node's RFC 7951 member name: module-qualified at the
// top level and where its module differs from its parent's.
func (n Node) JSONName() string {
	if n.n.parent == nil || n.n.parent.module != n.n.module {
		return n.n.module + ":" + n.n.name
	}
	return n.n.name
}

// Kind is the node's kind.
func (n Node) Kind() NodeKind {
	switch n.n.kind {
	case kList:
		return List
	case kLeaf:
		return Leaf
	case kLeafList:
		return LeafList
	case kAny:
		return AnyData
	}
	return Container
}

// Keys are a list's key leaf names, in order.
func (n Node) Keys() []string { return n.n.keys }

// Config is false for state (config false) nodes.
func (n Node) Config() bool { return n.n.config }

// Presence is true for a presence container (its existence carries
// meaning even when empty).
func (n Node) Presence() bool {
	c, ok := n.n.e.Node.(*yang.Container)
	return ok && c.Presence != nil
}

// SchemaPath is /module:top/child/... .
func (n Node) SchemaPath() string { return n.n.spath }

// Value converts s, a key value from a gNMI path, into the RFC 7951 JSON
// value of leaf n: a json.Number for integers of up to 32 bits (and a
// union member of such a type that s parses as), a bool for booleans, the
// string otherwise.
func (n Node) Value(s string) any {
	if n.n == nil || n.n.typ == nil {
		return s
	}
	return jsonValue(n.n, n.n.typ, s, 0)
}

func jsonValue(n *node, t *ytype, s string, depth int) any {
	if depth > 16 {
		return s
	}
	switch t.kind {
	case yang.Yint8, yang.Yint16, yang.Yint32, yang.Yuint8, yang.Yuint16, yang.Yuint32:
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(s)
		}
	case yang.Ybool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case yang.Yunion:
		for _, m := range t.union {
			if v := jsonValue(n, m, s, depth+1); v != any(s) {
				return v
			}
		}
	case yang.Yleafref:
		if target := n.refs[t.path]; target != nil && target.typ != nil {
			return jsonValue(target, target.typ, s, depth+1)
		}
	}
	return s
}

// Modules lists the loaded modules (not submodules) with their latest
// revision and organization, sorted by name: what a gNMI target
// advertises in its CapabilityResponse.
func (s *Schema) Modules() []ModuleInfo {
	var out []ModuleInfo
	seen := map[string]bool{}
	for name, m := range s.modules.Modules {
		if strings.Contains(name, "@") || seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		mi := ModuleInfo{Name: m.Name}
		if m.Organization != nil {
			mi.Organization = m.Organization.Name
		}
		for _, r := range m.Revision {
			if r.Name > mi.Revision {
				mi.Revision = r.Name
			}
		}
		out = append(out, mi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ModuleInfo describes one loaded module.
type ModuleInfo struct {
	Name, Organization, Revision string
}
