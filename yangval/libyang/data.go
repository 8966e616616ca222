//go:build cgo && libyang

package libyang

/*
#include "fab_libyang.h"
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fabctl/fabctl/yangval"
)

// ValidateJSON validates a whole RFC 7951 (JSON_IETF) data tree: a JSON
// object of module-qualified top-level members. It returns nil or
// Errors (every problem found, up to opt.MaxErrors).
func (c *Context) ValidateJSON(data []byte, opt Options) error {
	s, end := c.begin(opt)
	defer end()
	if !s.checkJSON(data, "/") {
		return s.result()
	}
	s.parse(data, "/")
	s.validate()
	return s.result()
}

// checkJSON reports data that is not one JSON object (libyang's JSON
// parser is given only well-formed objects).
func (s *session) checkJSON(data []byte, where string) bool {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: "not JSON: " + err.Error()})
		return false
	}
	if dec.More() {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: "not JSON: data after the value"})
		return false
	}
	if _, ok := v.(map[string]any); !ok {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: "not a JSON object"})
		return false
	}
	return true
}

// ValidateSet validates the configuration req leaves on a device whose
// configuration was base (an RFC 7951 tree, e.g. the factory defaults;
// nil for none): deletes, then replaces, then updates, as a gNMI target
// applies them, then the whole resulting tree is validated. A leafref,
// must or when of the payload that points at data neither the payload
// nor base has is therefore refused, as the device would refuse it.
// Paths may leave their first element unqualified; it is qualified with
// the module implementing it (the profile's preferred one when several).
func (c *Context) ValidateSet(base []byte, req SetRequest, opt Options) error {
	s, end := c.begin(opt)
	defer end()
	if len(base) > 0 && s.checkJSON(base, "base") {
		s.parse(base, "base")
	}
	for _, p := range req.Delete {
		xp, _, err := s.sl.xpath(p)
		if err != nil {
			s.add(&Error{Path: p, Kind: KindSyntax, Message: "delete: " + err.Error()})
			continue
		}
		if n := s.find(xp); n != nil {
			s.free(n)
		}
	}
	for _, u := range req.Replace {
		s.apply(u, true)
	}
	for _, u := range req.Update {
		s.apply(u, false)
	}
	s.validate()
	return s.result()
}

// xpath turns a gNMI path string into a libyang data path (module-
// qualified first element, quoted key values) and returns the last
// element's keys.
func (c *slot) xpath(p string) (string, map[string]string, error) {
	elems, err := yangval.ParsePath(p)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var keys map[string]string
	for i, e := range elems {
		name := e.Name
		if i == 0 && !strings.Contains(name, ":") {
			mod, err := c.qualify(name, c.prefer)
			if err != nil {
				return "", nil, err
			}
			name = mod + ":" + name
		}
		b.WriteString("/" + name)
		ks := make([]string, 0, len(e.Keys))
		for k := range e.Keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			q, err := quote(e.Keys[k])
			if err != nil {
				return "", nil, err
			}
			b.WriteString("[" + k + "=" + q + "]")
		}
		keys = e.Keys
	}
	if b.Len() == 0 {
		return "/", nil, nil
	}
	return b.String(), keys, nil
}

func quote(v string) (string, error) {
	switch {
	case !strings.Contains(v, "'"):
		return "'" + v + "'", nil
	case !strings.Contains(v, `"`):
		return `"` + v + `"`, nil
	}
	return "", fmt.Errorf("key value %q has both quote characters", v)
}

// apply performs one replace or update on the session's tree.
func (s *session) apply(u Update, replace bool) {
	op := "update"
	if replace {
		op = "replace"
	}
	where := u.Path
	var val any
	dec := json.NewDecoder(bytes.NewReader(u.Val))
	dec.UseNumber()
	if err := dec.Decode(&val); err != nil {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: op + ": value is not JSON: " + err.Error()})
		return
	}
	xp, keys, err := s.sl.xpath(u.Path)
	if err != nil {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: op + ": " + err.Error()})
		return
	}
	if xp == "/" {
		m, ok := val.(map[string]any)
		if !ok {
			s.add(&Error{Path: where, Kind: KindSyntax, Message: op + " at the root: value is not a JSON object"})
			return
		}
		if replace {
			// replacing the root replaces every top-level node the value names
			for k := range m {
				if n := s.find("/" + k); n != nil {
					s.free(n)
				}
			}
		}
		s.parse(u.Val, where)
		return
	}
	if replace {
		if n := s.find(xp); n != nil {
			s.free(n)
		}
	}
	if v, ok := val.(map[string]any); ok {
		for k, kv := range keys {
			got, ok := lookupMember(v, k)
			if !ok {
				continue
			}
			if str := scalarString(got); str != kv {
				s.add(&Error{Path: xp, Kind: KindSyntax, Message: fmt.Sprintf("%s: key %s is %q in the path but %q in the value", op, k, kv, str)})
				return
			}
			deleteMember(v, k)
		}
	}
	doc, err := s.sl.wrap(u.Path, val)
	if err != nil {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: op + ": " + err.Error()})
		return
	}
	s.parseDoc(doc, xp)
}

// wrap nests val under the elements of gNMI path p, as an RFC 7951
// document from the root: list elements become one-entry arrays holding
// the path's keys, typed as their leaves are (a uint32 key is a JSON
// number). libyang 2.1.30 turns list entries into opaque nodes when a
// value is parsed under an existing parent, so every value is parsed
// from the root and merged.
func (c *slot) wrap(p string, val any) (map[string]any, error) {
	elems, err := yangval.ParsePath(p)
	if err != nil {
		return nil, err
	}
	root := map[string]any{}
	cur := root
	spath := ""
	for i, e := range elems {
		name := e.Name
		if i == 0 && !strings.Contains(name, ":") {
			mod, err := c.qualify(name, c.prefer)
			if err != nil {
				return nil, err
			}
			name = mod + ":" + name
		}
		spath += "/" + name
		last := i == len(elems)-1
		var child map[string]any
		if last {
			if m, ok := val.(map[string]any); ok {
				child = m
			} else {
				if len(e.Keys) > 0 {
					return nil, fmt.Errorf("a list entry's value must be a JSON object")
				}
				cur[name] = val
				return root, nil
			}
		} else {
			child = map[string]any{}
		}
		if len(e.Keys) > 0 {
			for k, v := range e.Keys {
				child[k] = c.typed(spath+"/"+k, v)
			}
			cur[name] = []any{child}
		} else {
			cur[name] = child
		}
		cur = child
	}
	return root, nil
}

// typed returns key value v as the JSON value of the leaf at schema
// path sp.
func (c *slot) typed(sp, v string) any {
	cp := C.CString(sp)
	defer C.free(unsafe.Pointer(cp))
	n := C.lys_find_path(c.ctx, nil, cp, 0)
	takeErrors(c.ctx)
	if n == nil {
		return v
	}
	k := C.fab_json_kind(n)
	if k&1 != 0 {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return json.Number(v)
		}
	}
	if k&2 != 0 && (v == "true" || v == "false") {
		return v == "true"
	}
	return v
}

func lookupMember(m map[string]any, name string) (any, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if i := strings.IndexByte(k, ':'); i >= 0 && k[i+1:] == name {
			return v, true
		}
	}
	return nil, false
}

func deleteMember(m map[string]any, name string) {
	delete(m, name)
	for k := range m {
		if i := strings.IndexByte(k, ':'); i >= 0 && k[i+1:] == name {
			delete(m, k)
		}
	}
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// newPath creates (or finds) the node at data path xp, with value for a
// leaf or leaf-list, and returns it; nil after reporting an error.
func (s *session) newPath(xp string, value *string, where string) *C.struct_lyd_node {
	cp := C.CString(xp)
	defer C.free(unsafe.Pointer(cp))
	var cv *C.char
	if value != nil {
		cv = C.CString(*value)
		defer C.free(unsafe.Pointer(cv))
	}
	s.first()
	var created *C.struct_lyd_node
	r := C.lyd_new_path(s.tree, s.sl.ctx, cp, cv, C.LYD_NEW_PATH_UPDATE, &created)
	errs := takeErrors(s.sl.ctx)
	if r != C.LY_SUCCESS && r != C.LY_EEXIST {
		for _, e := range errs {
			ve := s.classify(e, where)
			if ve.Path == "" || ve.Path == "/" {
				ve.Path = xp
			}
			s.add(ve)
		}
		if len(errs) == 0 {
			s.add(&Error{Path: xp, Kind: KindSyntax, Message: fmt.Sprintf("cannot create this node (libyang error %d)", int(r))})
		}
		return nil
	}
	if s.tree == nil {
		s.tree = created
	}
	s.first()
	if value != nil && created != nil {
		return created
	}
	return s.find(xp)
}
