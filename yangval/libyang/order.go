//go:build cgo && libyang

package libyang

/*
#include "fab_libyang.h"
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unsafe"
)

// ordered re-encodes a decoded RFC 7951 document with every list
// entry's key members first, in the list's key order. libyang 2.1.30,
// parsing with LYD_PARSE_OPAQ, turns a list entry whose keys are not its
// first members into an opaque node (RFC 7951 allows any member order;
// encoding/json sorts them), so documents are normalized before parsing.
func (c *slot) ordered(doc map[string]any) []byte {
	var b bytes.Buffer
	c.writeMembers(&b, doc, nil, "")
	return b.Bytes()
}

func (c *slot) writeMembers(b *bytes.Buffer, m map[string]any, parent *C.struct_lysc_node, mod string) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		cmod, name := mod, k
		if j := strings.IndexByte(k, ':'); j >= 0 {
			cmod, name = k[:j], k[j+1:]
		}
		c.writeValue(b, m[k], c.child(parent, cmod, name), cmod)
	}
	b.WriteByte('}')
}

func (c *slot) writeValue(b *bytes.Buffer, v any, sn *C.struct_lysc_node, mod string) {
	switch x := v.(type) {
	case map[string]any:
		c.writeMembers(b, x, sn, mod)
	case []any:
		var keys []string
		if sn != nil && sn.nodetype&C.LYS_LIST != 0 {
			for ch := C.lysc_node_child(sn); ch != nil; ch = ch.next {
				if ch.flags&C.LYS_KEY != 0 {
					keys = append(keys, C.GoString(ch.name))
				}
			}
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			m, ok := e.(map[string]any)
			if !ok || len(keys) == 0 {
				c.writeValue(b, e, sn, mod)
				continue
			}
			b.WriteByte('{')
			n := 0
			for _, k := range keys {
				kv, ok := m[k]
				if !ok {
					continue
				}
				if n > 0 {
					b.WriteByte(',')
				}
				n++
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				c.writeValue(b, kv, nil, mod)
			}
			rest := map[string]any{}
			for k, v := range m {
				rest[k] = v
			}
			for _, k := range keys {
				if _, ok := m[k]; ok {
					delete(rest, k)
				}
			}
			if len(rest) > 0 {
				var inner bytes.Buffer
				c.writeMembers(&inner, rest, sn, mod)
				if n > 0 {
					b.WriteByte(',')
				}
				b.Write(inner.Bytes()[1 : inner.Len()-1])
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
	default:
		vb, err := json.Marshal(x)
		if err != nil {
			vb = []byte("null")
		}
		b.Write(vb)
	}
}

// child finds the data child name (of module mod) of schema node parent
// (nil: top level), through choices and cases; nil when there is none.
func (c *slot) child(parent *C.struct_lysc_node, mod, name string) *C.struct_lysc_node {
	key := childKey{parent, mod, name}
	if n, ok := c.cache[key]; ok {
		return n
	}
	n := c.lookupChild(parent, mod, name)
	c.cache[key] = n
	return n
}

func (c *slot) lookupChild(parent *C.struct_lysc_node, mod, name string) *C.struct_lysc_node {
	var cmod *C.struct_lys_module
	if mod != "" {
		cm := C.CString(mod)
		cmod = C.ly_ctx_get_module_implemented(c.ctx, cm)
		C.free(unsafe.Pointer(cm))
	}
	if parent == nil && cmod == nil {
		return nil
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.lys_find_child(parent, cmod, cn, 0, 0, 0)
}
