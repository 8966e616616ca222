//go:build cgo && libyang

package libyang

/*
#include "fab_libyang.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ValidateConfigDB validates a whole CONFIG_DB against the sonic-*
// models, as sonic-yang-mgmt does for GCU (`config apply-patch`
// validates the patched running configuration, not the patch): db is
// translated to the RFC 7951 tree of the models (TranslateConfigDB) and
// validated with Options.
func (c *Context) ValidateConfigDB(db ConfigDB, opt Options) error {
	s, end := c.begin(opt)
	defer end()
	doc, errs := s.sl.translate(db)
	for _, e := range errs {
		s.add(e)
	}
	if len(doc) > 0 {
		s.parseDoc(doc, "/")
	}
	s.validate()
	return s.result()
}

// TranslateConfigDB returns the RFC 7951 tree of db under the sonic-*
// models, and the rows and fields that have no place in it.
//
// Each table TABLE is the container TABLE inside the top-level container
// sonic-<m>:sonic-<m> of the module that defines it. A row key is split
// on '|' into the keys of the table's list with that many keys
// (PORT|Ethernet0 -> PORT_LIST[name=Ethernet0], QUEUE|Ethernet0|3 ->
// QUEUE_LIST[ifname=Ethernet0][qindex=3]); a table of containers takes
// the row key as the container's name (DEVICE_METADATA|localhost). A
// field is the entry's leaf or leaf-list of that name ("name@" too); in
// a "map" row (a list whose only other child is a one-key list with one
// value leaf: DSCP_TO_TC_MAP|AZURE {"26": "3"}) every field is an entry
// of the inner list. Values are given the JSON type of their leaf
// (uint8 "3" becomes 3, boolean "true" becomes true) so that libyang
// checks the value, not its CONFIG_DB spelling.
func (c *Context) TranslateConfigDB(db ConfigDB) (map[string]any, Errors) {
	sl := <-c.slots
	defer func() { c.slots <- sl }()
	defer lockThread()()
	return sl.translate(db)
}

type sonicTable struct {
	module, top string
	node        *C.struct_lysc_node
}

func (c *slot) sonicTables() map[string]sonicTable {
	out := map[string]sonicTable{}
	for name, mods := range c.tops {
		for _, m := range mods {
			if m != name || !strings.HasPrefix(m, "sonic-") {
				continue
			}
			top := c.child(nil, m, name)
			if top == nil || top.nodetype&C.LYS_CONTAINER == 0 {
				continue
			}
			for ch := C.lysc_node_child(top); ch != nil; ch = ch.next {
				if ch.nodetype&C.LYS_CONTAINER != 0 {
					out[C.GoString(ch.name)] = sonicTable{module: m, top: name, node: ch}
				}
			}
		}
	}
	return out
}

func (c *slot) children(n *C.struct_lysc_node) map[string]*C.struct_lysc_node {
	if m, ok := c.kids[n]; ok {
		return m
	}
	out := map[string]*C.struct_lysc_node{}
	c.kids[n] = out
	for ch := C.lysc_node_child(n); ch != nil; ch = ch.next {
		for _, d := range flatten(ch) {
			out[C.GoString(d.name)] = d
		}
	}
	return out
}

func listKeys(n *C.struct_lysc_node) []string {
	var keys []string
	for ch := C.lysc_node_child(n); ch != nil; ch = ch.next {
		if ch.flags&C.LYS_KEY != 0 {
			keys = append(keys, C.GoString(ch.name))
		}
	}
	return keys
}

func (c *slot) translate(db ConfigDB) (map[string]any, Errors) {
	if c.tables == nil {
		c.tables = c.sonicTables()
	}
	tables := c.tables
	doc := map[string]any{}
	var errs Errors
	for _, table := range sortedKeys(db) {
		t, ok := tables[table]
		if !ok {
			errs = append(errs, &Error{Path: "/" + table, Kind: KindUnknown, Message: "no SONiC YANG model has this table (GCU refuses tables without models)"})
			continue
		}
		topKey := t.module + ":" + t.top
		top, _ := doc[topKey].(map[string]any)
		if top == nil {
			top = map[string]any{}
			doc[topKey] = top
		}
		cont, _ := top[table].(map[string]any)
		if cont == nil {
			cont = map[string]any{}
			top[table] = cont
		}
		kids := c.children(t.node)
		for _, key := range sortedKeys(db[table]) {
			row := db[table][key]
			where := "/" + table + "|" + key
			parts := strings.Split(key, "|")
			if cn := kids[key]; cn != nil && cn.nodetype&C.LYS_CONTAINER != 0 {
				entry := map[string]any{}
				errs = append(errs, c.fields(entry, cn, nil, row, where)...)
				cont[key] = entry
				continue
			}
			var list *C.struct_lysc_node
			var lists []string
			for name, ch := range kids {
				if ch.nodetype&C.LYS_LIST != 0 && len(listKeys(ch)) == len(parts) {
					lists = append(lists, name)
				}
			}
			sort.Strings(lists)
			if len(lists) > 0 {
				list = kids[lists[0]]
				for _, l := range lists { // TABLE_LIST is the table's main list
					if l == table+"_LIST" {
						list = kids[l]
					}
				}
			}
			if list == nil {
				errs = append(errs, &Error{Path: where, Kind: KindUnknown, Message: fmt.Sprintf("no list of %s has a key of %d part(s)", table, len(parts))})
				continue
			}
			entry := map[string]any{}
			keys := listKeys(list)
			lk := c.children(list)
			for i, k := range keys {
				entry[k] = jsonValue(lk[k], parts[i])
			}
			errs = append(errs, c.fields(entry, list, keys, row, where)...)
			name := C.GoString(list.name)
			arr, _ := cont[name].([]any)
			cont[name] = append(arr, entry)
		}
	}
	return doc, errs
}

// fields fills entry with row's fields as children of schema node n.
func (c *slot) fields(entry map[string]any, n *C.struct_lysc_node, keys []string, row map[string]any, where string) Errors {
	var errs Errors
	kids := c.children(n)
	// the inner list of a map row
	var inner *C.struct_lysc_node
	for _, ch := range kids {
		if ch.nodetype&C.LYS_LIST != 0 && len(listKeys(ch)) == 1 && len(c.children(ch)) == 2 {
			inner = ch
		}
	}
	for _, f := range sortedKeys(row) {
		v := row[f]
		name := strings.TrimSuffix(f, "@")
		if contains(keys, name) {
			continue
		}
		if ch := kids[name]; ch != nil && ch.nodetype&(C.LYS_LEAF|C.LYS_LEAFLIST) != 0 {
			if ch.nodetype&C.LYS_LEAFLIST != 0 {
				var items []any
				switch x := v.(type) {
				case []any:
					items = x
				case string:
					if x != "" {
						for _, p := range strings.Split(x, ",") {
							items = append(items, p)
						}
					}
				default:
					items = []any{x}
				}
				for i := range items {
					items[i] = jsonValue(ch, scalarString(items[i]))
				}
				entry[name] = items
				continue
			}
			entry[name] = jsonValue(ch, scalarString(v))
			continue
		}
		if f == "NULL" && scalarString(v) == "NULL" {
			continue // SONiC's placeholder field of an empty row
		}
		if inner != nil {
			ik := listKeys(inner)[0]
			var vleaf *C.struct_lysc_node
			for nm, ch := range c.children(inner) {
				if nm != ik {
					vleaf = ch
				}
			}
			in := c.children(inner)
			arr, _ := entry[C.GoString(inner.name)].([]any)
			e := map[string]any{ik: jsonValue(in[ik], f)}
			if vleaf != nil {
				e[C.GoString(vleaf.name)] = jsonValue(vleaf, scalarString(v))
			}
			entry[C.GoString(inner.name)] = append(arr, e)
			continue
		}
		errs = append(errs, &Error{Path: where + "/" + f, Kind: KindUnknown, Message: "no such field in the table's model"})
	}
	return errs
}

// jsonValue types CONFIG_DB string s as the JSON value of leaf n.
func jsonValue(n *C.struct_lysc_node, s string) any {
	if n == nil {
		return s
	}
	k := C.fab_json_kind(n)
	if k&1 != 0 {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(s)
		}
	}
	if k&2 != 0 && (s == "true" || s == "false") {
		return s == "true"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
