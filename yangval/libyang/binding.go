//go:build cgo && libyang

package libyang

/*
#cgo pkg-config: libyang
#include "fab_libyang.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// lyErr is one record of libyang's error list.
type lyErr struct {
	level  int
	code   int // LY_ERR
	vecode int // LY_VECODE
	msg    string
	path   string
	apptag string
}

// takeErrors returns and clears the calling thread's error records for
// ctx. The caller holds the OS thread (runtime.LockOSThread): libyang
// keeps them per thread.
func takeErrors(ctx *C.struct_ly_ctx) []lyErr {
	var out []lyErr
	for e := C.ly_err_first(ctx); e != nil; e = e.next {
		if e.level != C.LY_LLERR {
			continue
		}
		le := lyErr{level: int(e.level), code: int(e.no), vecode: int(e.vecode)}
		if e.msg != nil {
			le.msg = C.GoString(e.msg)
		}
		if e.path != nil {
			le.path = C.GoString(e.path)
		}
		if e.apptag != nil {
			le.apptag = C.GoString(e.apptag)
		}
		out = append(out, le)
	}
	C.ly_err_clean(ctx, nil)
	return out
}

func joinLyErrs(errs []lyErr) error {
	if len(errs) == 0 {
		return errors.New("libyang: unknown error")
	}
	var parts []string
	for _, e := range errs {
		s := e.msg
		if e.path != "" {
			s += " (" + e.path + ")"
		}
		parts = append(parts, s)
	}
	return errors.New(strings.Join(parts, "; "))
}

// logOnce makes libyang store its errors and warnings instead of
// printing them, process-wide (ly_log_options). The thread-local
// ly_temp_log_options is no use: libyang 2.1 resets it to NULL itself
// after its own temporary uses (schema compilation).
var logOnce sync.Once

// lockThread pins the goroutine to its OS thread (libyang keeps errors
// per thread); the returned func unpins it.
func lockThread() func() {
	logOnce.Do(func() { C.ly_log_options(C.LY_LOSTORE) })
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// buildContext creates a libyang context whose search directory is dir
// (and nothing else: not the working directory), serves the modules of
// mem (name -> rewritten YANG text) from memory through the import
// callback instead, implements load in order with the features given
// per module ("*" for all).
//
// Only rewritten modules are served from memory: libyang 2.1.30 crashes
// (NULL dereference in lys_parse) when a main module that was not read
// from a file includes submodules that include each other
// (openconfig-qos), so every other module is read by libyang from dir.
func buildContext(dir string, mem map[string]string, load []string, features map[string][]string, privParsed bool) (*C.struct_ly_ctx, error) {
	defer lockThread()()
	var ctx *C.struct_ly_ctx
	opts := C.uint16_t(C.LY_CTX_DISABLE_SEARCHDIR_CWD)
	if privParsed {
		opts |= C.LY_CTX_SET_PRIV_PARSED
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	if r := C.ly_ctx_new(cdir, opts, &ctx); r != C.LY_SUCCESS {
		errs := takeErrors(nil)
		return nil, fmt.Errorf("libyang: ly_ctx_new(%s): %w", dir, joinLyErrs(errs))
	}
	// module table in C memory for the import callback
	n := len(mem)
	mods := (*C.fab_mods)(C.calloc(1, C.size_t(unsafe.Sizeof(C.fab_mods{}))))
	arr := unsafe.Slice((*C.fab_mod)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(C.fab_mod{})))), max(n, 1))
	i := 0
	for name, text := range mem {
		arr[i].name = C.CString(name)
		arr[i].text = C.CString(text)
		i++
	}
	mods.mods = &arr[0]
	mods.n = C.int(n)
	defer func() {
		if ctx != nil {
			C.fab_set_clb(ctx, nil)
		}
		for j := 0; j < n; j++ {
			C.free(unsafe.Pointer(arr[j].name))
			C.free(unsafe.Pointer(arr[j].text))
		}
		C.free(unsafe.Pointer(&arr[0]))
		C.free(unsafe.Pointer(mods))
	}()
	C.fab_set_clb(ctx, mods)

	for _, name := range load {
		cname := C.CString(name)
		feats := features[name]
		cf := make([]*C.char, 0, len(feats)+1)
		for _, f := range feats {
			cf = append(cf, C.CString(f))
		}
		var cfeats **C.char
		if len(cf) > 0 {
			cfeats = (**C.char)(C.calloc(C.size_t(len(cf)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
			copy(unsafe.Slice(cfeats, len(cf)+1), cf)
		}
		mod := C.ly_ctx_load_module(ctx, cname, nil, cfeats)
		for _, p := range cf {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(cfeats))
		C.free(unsafe.Pointer(cname))
		if mod == nil {
			err := joinLyErrs(takeErrors(ctx))
			C.ly_ctx_destroy(ctx)
			ctx = nil
			return nil, fmt.Errorf("libyang: loading module %s from %s: %w", name, dir, err)
		}
	}
	takeErrors(ctx) // warnings
	return ctx, nil
}
