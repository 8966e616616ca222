package gnmitarget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/yangval"
)

// The configuration is kept as decoded RFC 7951 JSON: objects are
// map[string]any, lists and leaf-lists []any, numbers json.Number. The
// walkers below carry the schema node beside the data when the target has
// models (a zero yangval.Node otherwise), so list entries merge by their
// model keys. The target deliberately does not share the drivers' tree
// code (gnmicore.ApplyOps): it is the device the drivers are tested
// against, and a bug shared by both sides would hide. It shares only
// internal/jsontree's generic helpers (deep copy, local names).

// decodeJSON decodes exactly one JSON value, numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// marshalTree is the canonical form: indented, members sorted.
func marshalTree(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// member finds the member of m that name denotes: the exact name, else
// the one with the same local name (RFC 7951 qualifies a member only
// where the module changes; clients may or may not).
func member(m map[string]any, name string) (string, bool) {
	if _, ok := m[name]; ok {
		return name, true
	}
	ln := jsontree.LocalName(name)
	for k := range m {
		if jsontree.LocalName(k) == ln {
			return k, true
		}
	}
	return "", false
}

// scalarText is the text of a JSON scalar as it appears in a path key.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// keyCandidates guess a list entry's key without models: the first of
// these member names the entry has (the key leaves of the OpenConfig and
// SR Linux QoS and interface lists), else every top-level scalar member
// (OpenConfig lists hold only their keys and containers at the top).
var keyCandidates = []string{"name", "interface-id", "id", "sequence", "sequence-id", "index",
	"queue-name", "pfc-queue-name", "value", "type", "slot"}

// entryKeys returns the key leaf names of entry in list node n.
func entryKeys(n yangval.Node, entry map[string]any) []string {
	if n.Valid() && n.Kind() == yangval.List {
		return n.Keys()
	}
	for _, k := range keyCandidates {
		if v, ok := entry[k]; ok {
			if _, scalar := scalarText(v); scalar {
				return []string{k}
			}
		}
	}
	var ks []string
	for k, v := range entry {
		if _, scalar := scalarText(v); scalar {
			ks = append(ks, k)
		}
	}
	return ks
}

// matches says whether entry has every key=value of keys ("*" matches any).
func matches(entry map[string]any, keys map[string]string) bool {
	for k, want := range keys {
		name, ok := member(entry, k)
		if !ok {
			return false
		}
		got, _ := scalarText(entry[name])
		if want != "*" && got != want {
			return false
		}
	}
	return true
}

func findEntry(arr []any, keys map[string]string) int {
	for i, e := range arr {
		if m, ok := e.(map[string]any); ok && matches(m, keys) {
			return i
		}
	}
	return -1
}

// child returns the schema child of n named name (the root node at the
// top); a zero Node without models or when unknown.
func (t *Target) child(n yangval.Node, isRoot bool, name string) yangval.Node {
	if t.schema == nil {
		return yangval.Node{}
	}
	if isRoot {
		return t.rootNode(name)
	}
	return n.Child(name)
}

// modulePrefix is the module name prefix of a flavor's own models.
var modulePrefix = map[string]string{FlavorOpenConfig: "openconfig-", FlavorSRLinux: "srl_nokia-"}

// rootNode resolves a top-level name; an unqualified name that several
// modules define (interfaces: openconfig-interfaces and ietf-interfaces)
// is the flavor's own, as a device resolves it by its origin.
func (t *Target) rootNode(name string) yangval.Node {
	return t.schema.ResolveRoot(name, modulePrefix[t.cfg.Flavor])
}

// rootModules qualify top-level names without models, per flavor.
var rootModules = map[string]map[string]string{
	FlavorOpenConfig: {"qos": "openconfig-qos", "interfaces": "openconfig-interfaces"},
	FlavorSRLinux:    {"qos": "srl_nokia-qos", "interface": "srl_nokia-interfaces"},
}

// newName is the member name to create for path element or value member
// name under a parent: RFC 7951 qualified where the models say so.
func (t *Target) newName(n yangval.Node, isRoot bool, name string) string {
	if n.Valid() {
		return n.JSONName()
	}
	if isRoot && !strings.Contains(name, ":") {
		if mod := rootModules[t.cfg.Flavor][name]; mod != "" {
			return mod + ":" + name
		}
	}
	return name
}

// canon renames the members of v to their RFC 7951 names (with models).
func (t *Target) canon(v any, n yangval.Node, isRoot bool) any {
	if t.schema == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c := t.child(n, isRoot, k)
			if !c.Valid() {
				out[k] = e // unknown: validation reports it
				continue
			}
			out[c.JSONName()] = t.canon(e, c, false)
		}
		return out
	case []any:
		if n.Valid() && n.Kind() == yangval.List {
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = t.canon(e, n, false)
			}
			return out
		}
	}
	return v
}

// merge merges src into dst (gNMI update): containers recursively, list
// entries by key, leaves and leaf-lists replaced.
func (t *Target) merge(dst, src map[string]any, n yangval.Node, isRoot bool) {
	for k, sv := range src {
		c := t.child(n, isRoot, k)
		name, exists := member(dst, k)
		if !exists {
			dst[t.newName(c, isRoot, k)] = t.canon(sv, c, false)
			continue
		}
		dv := dst[name]
		switch s := sv.(type) {
		case map[string]any:
			if d, ok := dv.(map[string]any); ok {
				t.merge(d, s, c, false)
				continue
			}
		case []any:
			if d, ok := dv.([]any); ok && isList(c, s) {
				dst[name] = t.mergeList(d, s, c)
				continue
			}
		}
		dst[name] = t.canon(sv, c, false)
	}
}

// isList: a list (entries are objects), not a leaf-list.
func isList(n yangval.Node, arr []any) bool {
	if n.Valid() {
		return n.Kind() == yangval.List
	}
	for _, e := range arr {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return len(arr) > 0
}

func (t *Target) mergeList(dst, src []any, n yangval.Node) []any {
	for _, se := range src {
		sm, ok := se.(map[string]any)
		if !ok {
			dst = append(dst, se) // validation reports it
			continue
		}
		keys := map[string]string{}
		for _, k := range entryKeys(n, sm) {
			if name, ok := member(sm, k); ok {
				keys[k], _ = scalarText(sm[name])
			}
		}
		if i := findEntry(dst, keys); i >= 0 && len(keys) > 0 {
			t.merge(dst[i].(map[string]any), sm, n, false)
			continue
		}
		dst = append(dst, t.canon(sm, n, false))
	}
	return dst
}

// newEntry is a list entry holding only the keys of a path element,
// typed by the models.
func (t *Target) newEntry(n yangval.Node, keys map[string]string) map[string]any {
	e := make(map[string]any, len(keys))
	for k, v := range keys {
		if kn := n.Child(k); kn.Valid() {
			e[k] = kn.Value(v)
		} else {
			e[k] = v
		}
	}
	return e
}

// pathError is a Set path that does not fit the data (InvalidArgument).
type pathError struct{ path, msg string }

func (e *pathError) Error() string { return e.path + ": " + e.msg }

// apply performs one operation on tree (modified in place) and returns
// the possibly new root.
func (t *Target) apply(tree map[string]any, op yangval.SetOp) (map[string]any, error) {
	if len(op.Path) == 0 {
		switch op.Op {
		case yangval.OpDelete:
			return map[string]any{}, nil
		case yangval.OpReplace:
			m, ok := op.Value.(map[string]any)
			if !ok {
				return nil, &pathError{"/", "the root must be replaced with a JSON object"}
			}
			out := map[string]any{}
			t.merge(out, m, yangval.Node{}, true)
			return out, nil
		default:
			m, ok := op.Value.(map[string]any)
			if !ok {
				return nil, &pathError{"/", "the root must be updated with a JSON object"}
			}
			t.merge(tree, m, yangval.Node{}, true)
			return tree, nil
		}
	}
	return tree, t.applyAt(tree, yangval.Node{}, true, op.Path, "", op)
}

func (t *Target) applyAt(obj map[string]any, parent yangval.Node, isRoot bool, elems []yangval.PathElem, at string, op yangval.SetOp) error {
	el, rest := elems[0], elems[1:]
	cn := t.child(parent, isRoot, el.Name)
	name, exists := member(obj, el.Name)
	if !exists {
		name = t.newName(cn, isRoot, el.Name)
	}
	here := at + "/" + jsontree.LocalName(el.Name)
	del := op.Op == yangval.OpDelete
	if el.Keys != nil {
		here = at + "/" + yangval.PathString([]yangval.PathElem{{Name: jsontree.LocalName(el.Name), Keys: el.Keys}})[1:]
		var arr []any
		if exists {
			a, ok := obj[name].([]any)
			if !ok {
				return &pathError{here, "keys given for a node that is not a list"}
			}
			arr = a
		}
		i := findEntry(arr, el.Keys)
		if len(rest) == 0 {
			switch {
			case del:
				if i >= 0 {
					arr = append(arr[:i], arr[i+1:]...)
				}
			case op.Op == yangval.OpReplace || i < 0:
				m, ok := op.Value.(map[string]any)
				if !ok {
					return &pathError{here, "a list entry must be a JSON object"}
				}
				entry := t.newEntry(cn, el.Keys)
				for k, v := range m {
					if kn, isKey := member(entry, k); isKey {
						got, _ := scalarText(v)
						if got != el.Keys[kn] {
							return &pathError{here + "/" + k, fmt.Sprintf("key leaf value %q does not match the path key %q", got, el.Keys[kn])}
						}
						continue
					}
				}
				t.merge(entry, m, cn, false)
				if i >= 0 {
					arr[i] = entry
				} else {
					arr = append(arr, entry)
				}
			default:
				m, ok := op.Value.(map[string]any)
				if !ok {
					return &pathError{here, "a list entry must be a JSON object"}
				}
				t.merge(arr[i].(map[string]any), m, cn, false)
			}
			if len(arr) == 0 {
				delete(obj, name)
			} else {
				obj[name] = arr
			}
			return nil
		}
		if i < 0 {
			if del {
				return nil // deleting what does not exist is not an error (gNMI 3.4.6)
			}
			arr = append(arr, t.newEntry(cn, el.Keys))
			i = len(arr) - 1
			obj[name] = arr
		}
		entry := arr[i].(map[string]any)
		return t.applyAt(entry, cn, false, rest, here, op)
	}
	if len(rest) == 0 {
		switch {
		case del:
			delete(obj, name)
		case op.Op == yangval.OpReplace || !exists:
			obj[name] = t.canon(op.Value, cn, false)
		default:
			d, dok := obj[name].(map[string]any)
			s, sok := op.Value.(map[string]any)
			switch {
			case dok && sok:
				t.merge(d, s, cn, false)
			case sok:
				obj[name] = t.canon(op.Value, cn, false)
			default:
				if da, ok := obj[name].([]any); ok {
					if sa, ok := op.Value.([]any); ok && isList(cn, sa) {
						obj[name] = t.mergeList(da, sa, cn)
						return nil
					}
				}
				obj[name] = t.canon(op.Value, cn, false)
			}
		}
		return nil
	}
	if !exists {
		if del {
			return nil
		}
		obj[name] = map[string]any{}
	}
	cm, ok := obj[name].(map[string]any)
	if !ok {
		if _, isArr := obj[name].([]any); isArr {
			return &pathError{here, "a list element in the middle of a path needs its keys"}
		}
		return &pathError{here, "the path continues below a leaf"}
	}
	err := t.applyAt(cm, cn, false, rest, here, op)
	if del && len(cm) == 0 && !(cn.Valid() && cn.Presence()) {
		delete(obj, name) // an emptied non-presence container is no data
	}
	return err
}

// match is one data node a read path selects, with its concrete path.
type match struct {
	path []yangval.PathElem
	val  any
}

// collect finds the data at elems below v. A list element without keys in
// the middle of the path, or a key value "*", selects every entry; a list
// element without keys at the end selects the whole list.
func (t *Target) collect(v any, n yangval.Node, isRoot bool, elems, prefix []yangval.PathElem, out *[]match) {
	if len(elems) == 0 {
		*out = append(*out, match{path: append([]yangval.PathElem(nil), prefix...), val: v})
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	el, rest := elems[0], elems[1:]
	cn := t.child(n, isRoot, el.Name)
	name, ok := member(obj, el.Name)
	if !ok {
		return
	}
	arr, isArr := obj[name].([]any)
	if !isArr || (el.Keys == nil && len(rest) == 0) || (isArr && !isList(cn, arr)) {
		if el.Keys != nil {
			return
		}
		t.collect(obj[name], cn, false, rest, append(prefix, yangval.PathElem{Name: el.Name}), out)
		return
	}
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok || !matches(m, el.Keys) {
			continue
		}
		keys := map[string]string{}
		names := entryKeys(cn, m)
		if !cn.Valid() && len(el.Keys) > 0 {
			names = names[:0]
			for k := range el.Keys {
				names = append(names, k)
			}
		}
		for _, k := range names {
			if kn, ok := member(m, k); ok {
				keys[k], _ = scalarText(m[kn])
			}
		}
		t.collect(m, cn, false, rest, append(prefix, yangval.PathElem{Name: el.Name, Keys: keys}), out)
	}
}

// mergeTrees deep-merges b into a copy of a (config plus state).
func (t *Target) mergeTrees(a, b map[string]any) map[string]any {
	out := jsontree.DeepCopy(a).(map[string]any)
	t.merge(out, jsontree.DeepCopy(b).(map[string]any), yangval.Node{}, true)
	return out
}
