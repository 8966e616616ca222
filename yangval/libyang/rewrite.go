//go:build cgo && libyang

package libyang

/*
#include "fab_libyang.h"
*/
import "C"

import (
	"sort"
	"strings"
	"unsafe"
)

// ifFeature reports whether the node name (module mod) under the
// compiled node parent (nil: top level) exists in the models with every
// feature enabled, and returns the if-feature expressions on its way
// ("if-feature" when they cannot be read); "" when the models have no
// such node at all.
func (c *Context) ifFeature(parent *C.struct_lysc_node, top bool, mod, name string) string {
	ref := c.reference()
	if ref == nil {
		return ""
	}
	var rparent *C.struct_lysc_node
	if !top {
		if parent == nil {
			return ""
		}
		p := C.lysc_path(parent, C.LYSC_PATH_LOG, nil, 0)
		if p == nil {
			return ""
		}
		rparent = C.lys_find_path(ref.all[0].ctx, nil, p, 0)
		C.free(unsafe.Pointer(p))
		if rparent == nil {
			return ""
		}
	}
	var rmod *C.struct_lys_module
	if mod != "" {
		cm := C.CString(mod)
		rmod = C.ly_ctx_get_module_implemented(ref.all[0].ctx, cm)
		C.free(unsafe.Pointer(cm))
	}
	if rparent == nil && rmod == nil {
		return ""
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	n := C.lys_find_child(rparent, rmod, cn, 0, 0, 0)
	takeErrors(ref.all[0].ctx)
	if n == nil {
		return ""
	}
	var exprs []string
	for x := n; x != nil && x != rparent; x = x.parent {
		for i := C.uint64_t(0); i < C.fab_iff_count(x); i++ {
			exprs = append(exprs, C.GoString(C.fab_iff_at(x, i)))
		}
	}
	if len(exprs) == 0 {
		return "(on a uses or augment)"
	}
	sort.Strings(exprs)
	return strings.Join(exprs, " and ")
}

// reference returns the same modules compiled with every feature of
// every configured module enabled, built on first use (only when a node
// fails to bind).
func (c *Context) reference() *Context {
	c.refMu.Lock()
	defer c.refMu.Unlock()
	if c.ref != nil || c.refErr != nil {
		return c.ref
	}
	cfg := c.cfg
	cfg.Features = map[string][]string{}
	for m := range c.cfg.Features {
		cfg.Features[m] = []string{"*"}
	}
	for _, m := range c.cfg.Modules {
		cfg.Features[m] = []string{"*"}
	}
	// The caller holds c.mu and its OS thread; building the reference
	// context takes the thread again (LockOSThread nests).
	c.ref, c.refErr = newFromTexts(cfg, c.texts, c.applied, true, c.prefer)
	return c.ref
}
