package gnmicore

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/jsontree"
	"github.com/fabctl/fabctl/yangval"
)

// Node is a read-only view of a decoded JSON_IETF value that finds members
// by their local name, so a driver reads "openconfig-if-ethernet:ethernet"
// and "ethernet" alike: targets differ in where they qualify names. A
// missing member gives the zero Node; every accessor is safe on it, so
// readers of arbitrary device output never panic.
type Node struct{ v any }

// N wraps a decoded value.
func N(v any) Node { return Node{v} }

// Raw is the wrapped value.
func (n Node) Raw() any { return n.v }

// Exists is true when the node holds a value.
func (n Node) Exists() bool { return n.v != nil }

// Get returns the member with the given local name.
func (n Node) Get(name string) Node {
	m, ok := n.v.(map[string]any)
	if !ok {
		return Node{}
	}
	if v, ok := m[name]; ok {
		return Node{v}
	}
	for k, v := range m {
		if jsontree.LocalName(k) == name {
			return Node{v}
		}
	}
	return Node{}
}

// At follows a chain of member names.
func (n Node) At(names ...string) Node {
	for _, name := range names {
		n = n.Get(name)
	}
	return n
}

// List returns the entries of a list member (a JSON array of objects);
// non-object entries are skipped.
func (n Node) List(name string) []Node {
	a, ok := n.Get(name).v.([]any)
	if !ok {
		return nil
	}
	out := make([]Node, 0, len(a))
	for _, e := range a {
		if _, ok := e.(map[string]any); ok {
			out = append(out, Node{e})
		}
	}
	return out
}

// Entry returns the entry of list name whose key leaf has the value.
func (n Node) Entry(name, key, value string) Node {
	for _, e := range n.List(name) {
		if s, ok := e.Get(key).String(); ok && s == value {
			return e
		}
	}
	return Node{}
}

// String returns a scalar as text: strings as they are, numbers as
// written, booleans as true/false; identities without their module
// prefix are not touched (see Ident).
func (n Node) String() (string, bool) {
	switch x := n.v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// Ident returns an identityref or enum value without a module prefix.
func (n Node) Ident() (string, bool) {
	s, ok := n.String()
	return jsontree.LocalName(s), ok
}

// Int returns an integer scalar (number or RFC 7951 string for 64-bit
// types).
func (n Node) Int() (int64, bool) {
	s, ok := n.String()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}

// Bool returns a boolean scalar (JSON true/false, or "true"/"false").
func (n Node) Bool() (bool, bool) {
	switch x := n.v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(x)
		return b, err == nil
	}
	return false, false
}

// Ints returns a leaf-list of integers (or a single integer leaf).
func (n Node) Ints() []int64 {
	a, ok := n.v.([]any)
	if !ok {
		if v, ok := n.Int(); ok {
			return []int64{v}
		}
		return nil
	}
	var out []int64
	for _, e := range a {
		if v, ok := (Node{e}).Int(); ok {
			out = append(out, v)
		}
	}
	return out
}

// Strings returns a leaf-list of scalars as text (or a single leaf).
func (n Node) Strings() []string {
	a, ok := n.v.([]any)
	if !ok {
		if s, ok := n.String(); ok {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, e := range a {
		if s, ok := (Node{e}).String(); ok {
			out = append(out, s)
		}
	}
	return out
}

// lookup finds the value at elems below root (a root object whose members
// are top-level nodes, qualified or not).
func lookup(root any, elems []yangval.PathElem) (any, bool) {
	cur := root
	for _, e := range elems {
		next := N(cur).Get(jsontree.LocalName(e.Name))
		if !next.Exists() {
			return nil, false
		}
		cur = next.v
		if len(e.Keys) == 0 {
			continue
		}
		a, ok := cur.([]any)
		if !ok {
			return nil, false
		}
		var found any
		for _, entry := range a {
			if matches(entry, e.Keys) {
				found = entry
				break
			}
		}
		if found == nil {
			return nil, false
		}
		cur = found
	}
	return cur, true
}

func matches(entry any, keys map[string]string) bool {
	if _, ok := entry.(map[string]any); !ok {
		return false
	}
	for k, want := range keys {
		got, ok := N(entry).Get(jsontree.LocalName(k)).String()
		if !ok || got != want {
			return false
		}
	}
	return true
}

// ApplyOps applies ops to a configuration tree the way a gNMI target
// does (deletes, replaces, updates; a missing list entry on the way is
// created with its keys from the path) and returns the new tree; root is
// not modified. It knows no schema: an update merges containers member by
// member but replaces a list inside its value wholesale (fabctl's drivers
// put lists only in replaced subtrees). Tests and offline validation use
// it to build the configuration a SetRequest leaves on an empty device.
func ApplyOps(root map[string]any, ops []Op) (map[string]any, error) {
	out, _ := jsontree.DeepCopy(root).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for _, o := range Sorted(ops) {
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			return nil, err
		}
		var val any
		if o.Op != OpDelete {
			if val, err = Decode(o.Val); err != nil {
				return nil, err
			}
		}
		if len(elems) == 0 {
			switch o.Op {
			case OpDelete:
				out = map[string]any{}
			case OpReplace:
				m, _ := val.(map[string]any)
				out = m
			case OpUpdate:
				merged, _ := merge(out, val).(map[string]any)
				out = merged
			}
			if out == nil {
				out = map[string]any{}
			}
			continue
		}
		setAt(out, elems, o.Op, val)
	}
	return out, nil
}

// setAt walks parent containers (creating them unless deleting) and
// applies one op to the last element.
func setAt(m map[string]any, elems []yangval.PathElem, op string, val any) {
	e := elems[0]
	name := memberName(m, e.Name)
	last := len(elems) == 1
	if len(e.Keys) == 0 {
		if last {
			switch op {
			case OpDelete:
				delete(m, name)
			case OpReplace:
				m[name] = val
			case OpUpdate:
				m[name] = merge(m[name], val)
			}
			return
		}
		child, ok := m[name].(map[string]any)
		if !ok {
			if op == OpDelete {
				return
			}
			child = map[string]any{}
			m[name] = child
		}
		setAt(child, elems[1:], op, val)
		if op == OpDelete && len(child) == 0 {
			delete(m, name) // an emptied container is no data (as on a target)
		}
		return
	}
	list, _ := m[name].([]any)
	idx := -1
	for i, entry := range list {
		if matches(entry, e.Keys) {
			idx = i
			break
		}
	}
	if op == OpDelete && idx < 0 {
		return
	}
	if last && op == OpDelete {
		m[name] = append(list[:idx:idx], list[idx+1:]...)
		if len(m[name].([]any)) == 0 {
			delete(m, name)
		}
		return
	}
	if idx < 0 {
		entry := map[string]any{}
		for k, v := range e.Keys {
			entry[jsontree.LocalName(k)] = v
		}
		list = append(list, entry)
		idx = len(list) - 1
		m[name] = list
	}
	if last {
		switch op {
		case OpReplace:
			list[idx] = val
		case OpUpdate:
			list[idx] = merge(list[idx], val)
		}
		return
	}
	setAt(list[idx].(map[string]any), elems[1:], op, val)
}

// memberName is the existing member of m with name's local name, or name.
func memberName(m map[string]any, name string) string {
	if _, ok := m[name]; ok {
		return name
	}
	for k := range m {
		if jsontree.LocalName(k) == jsontree.LocalName(name) {
			return k
		}
	}
	return name
}

func merge(dst, src any) any {
	dm, ok1 := dst.(map[string]any)
	sm, ok2 := src.(map[string]any)
	if !ok1 || !ok2 {
		return jsontree.DeepCopy(src)
	}
	out := jsontree.DeepCopy(dm).(map[string]any)
	for k, v := range sm {
		name := memberName(out, k)
		out[name] = merge(out[name], v)
	}
	return out
}
