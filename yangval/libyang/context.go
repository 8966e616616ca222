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
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/fabctl/fabctl/internal/safefile"
)

// Context is a compiled set of YANG modules: a pool of identical libyang
// contexts (one per CPU by default), each used by one validation at a
// time. It is safe for concurrent use: see the package documentation.
type Context struct {
	cfg     Config
	applied []Applied
	prefer  string // module prefix preferred for unqualified gNMI paths
	texts   map[string]string
	slots   chan *slot
	all     []*slot
	closeMu sync.Mutex
	closed  bool
	refMu   sync.Mutex
	ref     *Context // the same modules with every feature enabled (if-feature classification)
	refErr  error
}

// slot is one libyang context of the pool, with caches of its
// (immutable) compiled schema.
type slot struct {
	ctx    *C.struct_ly_ctx
	prefer string
	tops   map[string][]string // top-level data node name -> implementing modules
	cache  map[childKey]*C.struct_lysc_node
	kids   map[*C.struct_lysc_node]map[string]*C.struct_lysc_node
	tables map[string]sonicTable
}

type childKey struct {
	parent    *C.struct_lysc_node
	mod, name string
}

// New loads cfg.Modules from cfg.Dir with the features and rewrites of
// cfg. Close frees it.
func New(cfg Config) (*Context, error) {
	texts, err := readDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	applied, err := applyRewrites(texts, cfg.Rewrites)
	if err != nil {
		return nil, err
	}
	return newFromTexts(cfg, texts, applied, false, "")
}

func newFromTexts(cfg Config, texts map[string]string, applied []Applied, privParsed bool, prefer string) (*Context, error) {
	mem := map[string]string{}
	for _, a := range applied {
		mem[a.Module] = texts[a.Module]
	}
	n := cfg.Contexts
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if privParsed {
		n = 1
	}
	c := &Context{cfg: cfg, applied: applied, texts: texts, prefer: prefer, slots: make(chan *slot, n)}
	for i := 0; i < n; i++ {
		ctx, err := buildContext(cfg.Dir, mem, cfg.Modules, cfg.Features, privParsed)
		if err != nil {
			c.Close()
			return nil, err
		}
		sl := &slot{ctx: ctx, prefer: prefer, cache: map[childKey]*C.struct_lysc_node{},
			kids: map[*C.struct_lysc_node]map[string]*C.struct_lysc_node{}}
		sl.tops = sl.topLevel()
		c.all = append(c.all, sl)
		c.slots <- sl
	}
	return c, nil
}

// readDir reads every .yang file of dir, keyed by module name (the file
// name without ".yang" and without an "@revision" suffix).
func readDir(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yang"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("libyang: no .yang files in %s", dir)
	}
	texts := map[string]string{}
	for _, f := range files {
		b, err := safefile.ReadFile(f, safefile.YANG)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yang")
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		texts[name] = string(b)
	}
	return texts, nil
}

// Close frees the libyang contexts, waiting for validations in flight.
// The Context must not be used after.
func (c *Context) Close() {
	c.closeMu.Lock()
	if !c.closed {
		c.closed = true
		for range c.all {
			sl := <-c.slots
			C.ly_ctx_destroy(sl.ctx)
			sl.ctx = nil
		}
	}
	c.closeMu.Unlock()
	c.refMu.Lock()
	if c.ref != nil {
		c.ref.Close()
		c.ref = nil
	}
	c.refMu.Unlock()
}

// Rewrites lists the load-time rewrites applied to the modules, each
// with the lines it changed.
func (c *Context) Rewrites() []Applied { return c.applied }

// Features returns the features enabled per module.
func (c *Context) Features() map[string][]string { return c.cfg.Features }

// session is one validation: a data tree being built and checked on a
// locked OS thread with the context's mutex held.
type session struct {
	c    *Context
	sl   *slot
	tree *C.struct_lyd_node
	errs Errors
	opt  Options
	seen map[string]bool
}

func (c *Context) begin(opt Options) (*session, func()) {
	sl := <-c.slots
	if sl.ctx == nil {
		c.slots <- sl
		panic("libyang: Context used after Close")
	}
	unlock := lockThread()
	s := &session{c: c, sl: sl, opt: opt, seen: map[string]bool{}}
	return s, func() {
		if s.tree != nil {
			C.lyd_free_all(s.tree)
			s.tree = nil
		}
		C.ly_err_clean(sl.ctx, nil)
		unlock()
		c.slots <- sl
	}
}

func (s *session) add(e *Error) {
	key := e.Path + "\x00" + e.Message
	if s.seen[key] || len(s.errs) >= s.opt.max() {
		return
	}
	s.seen[key] = true
	s.errs = append(s.errs, e)
}

func (s *session) result() error {
	if len(s.errs) == 0 {
		return nil
	}
	return s.errs
}

// first returns the tree's first top-level sibling.
func (s *session) first() {
	if s.tree != nil {
		s.tree = C.lyd_first_sibling(s.tree)
	}
}

// print returns the session's tree as RFC 7951 JSON (for debugging and
// tests).
func (s *session) print() string {
	if s.tree == nil {
		return "{}"
	}
	s.first()
	var out *C.char
	C.lyd_print_mem(&out, s.tree, C.LYD_JSON, C.LYD_PRINT_WITHSIBLINGS)
	if out == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoString(out)
}

// parseDoc parses a decoded RFC 7951 document into the session's tree.
func (s *session) parseDoc(doc map[string]any, where string) bool {
	return s.parseBytes(s.sl.ordered(doc), where)
}

// Parse options: parse only (validation is a separate, repeatable step),
// unknown or invalid nodes kept as opaque nodes so that each is reported
// and the rest of the tree still validated, state data refused.
const parseOpts = C.LYD_PARSE_ONLY | C.LYD_PARSE_OPAQ | C.LYD_PARSE_NO_STATE

// parse parses an RFC 7951 document into the session's tree.
func (s *session) parse(data []byte, where string) bool {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		s.add(&Error{Path: where, Kind: KindSyntax, Message: "not a JSON object: " + err.Error()})
		return false
	}
	return s.parseBytes(s.sl.ordered(doc), where)
}

// parseBytes parses key-first RFC 7951 data into the session's tree.
func (s *session) parseBytes(data []byte, where string) bool {
	cdata := C.CString(string(data))
	defer C.free(unsafe.Pointer(cdata))
	var tree *C.struct_lyd_node
	r := C.fab_parse_data(s.sl.ctx, nil, cdata, C.uint32_t(parseOpts), &tree)
	errs := takeErrors(s.sl.ctx)
	if r != C.LY_SUCCESS {
		if tree != nil {
			C.lyd_free_all(tree)
		}
		for _, e := range errs {
			s.add(s.classify(e, where))
		}
		if len(errs) == 0 {
			s.add(&Error{Path: where, Kind: KindSyntax, Message: fmt.Sprintf("libyang could not parse the data (error %d)", int(r))})
		}
		return false
	}
	if tree != nil {
		if s.tree == nil {
			s.tree = tree
		} else {
			s.merge(tree)
		}
	}
	return true
}

func (s *session) merge(src *C.struct_lyd_node) {
	s.first()
	r := C.lyd_merge_siblings(&s.tree, src, C.LYD_MERGE_DESTRUCT)
	errs := takeErrors(s.sl.ctx)
	if r != C.LY_SUCCESS {
		C.lyd_free_all(src)
		for _, e := range errs {
			s.add(s.classify(e, "/"))
		}
	}
}

// nodePath is the data path of n.
func nodePath(n *C.struct_lyd_node) string {
	p := C.lyd_path(n, C.LYD_PATH_STD, nil, 0)
	if p == nil {
		return "/"
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoString(p)
}

// sweepOpaque reports and removes every opaque node: data the parser
// could not bind to the models (unknown nodes, nodes of disabled
// features, invalid values, list entries without their keys).
func (s *session) sweepOpaque() {
	if s.tree == nil {
		return
	}
	var opaq []*C.struct_lyd_node
	var walk func(n *C.struct_lyd_node)
	walk = func(n *C.struct_lyd_node) {
		for ; n != nil; n = n.next {
			if n.schema == nil {
				opaq = append(opaq, n)
				continue
			}
			walk(C.lyd_child(n))
		}
	}
	walk(C.lyd_first_sibling(s.tree))
	for _, n := range opaq {
		s.add(s.opaqueError(n))
	}
	for _, n := range opaq {
		s.free(n)
	}
}

// free removes n (and its subtree) from the tree.
func (s *session) free(n *C.struct_lyd_node) {
	if C.lyd_parent(n) == nil {
		first := C.lyd_first_sibling(n)
		if first == n {
			s.tree = n.next
		} else {
			s.tree = first
		}
	}
	C.lyd_free_tree(n)
	takeErrors(s.sl.ctx)
}

func (s *session) opaqueError(n *C.struct_lyd_node) *Error {
	name := C.GoString(C.fab_opaq_name(n))
	mod := ""
	if m := C.fab_opaq_module(n); m != nil {
		mod = C.GoString(m)
	}
	parent := C.lyd_parent(n)
	path := "/"
	var pschema *C.struct_lysc_node
	if parent != nil {
		path = nodePath(parent)
		pschema = parent.schema
	}
	// a node the models have: its value (or its keys) is what failed
	var cmod *C.struct_lys_module
	if mod != "" {
		cm := C.CString(mod)
		cmod = C.ly_ctx_get_module_implemented(s.sl.ctx, cm)
		C.free(unsafe.Pointer(cm))
	} else if pschema != nil {
		cmod = pschema.module
		mod = C.GoString(cmod.name)
	}
	qual := name
	if parent == nil || (pschema != nil && C.GoString(pschema.module.name) != mod) {
		qual = mod + ":" + name
	}
	full := strings.TrimSuffix(path, "/") + "/" + qual
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var sn *C.struct_lysc_node
	if parent == nil || pschema != nil {
		if parent != nil || cmod != nil {
			sn = C.lys_find_child(pschema, cmod, cname, 0, 0, 0)
		}
	}
	if sn != nil {
		if sn.nodetype&(C.LYS_LEAF|C.LYS_LEAFLIST) != 0 {
			val := ""
			if v := C.fab_opaq_value(n); v != nil {
				val = C.GoString(v)
			}
			cval := C.CString(val)
			C.lyd_value_validate(s.sl.ctx, sn, cval, C.size_t(len(val)), nil, nil, nil)
			C.free(unsafe.Pointer(cval))
			errs := takeErrors(s.sl.ctx)
			msg := fmt.Sprintf("invalid value %q", val)
			if len(errs) > 0 {
				msg = errs[0].msg
			} else if val == "" {
				msg = "invalid value (wrong JSON type or structure)"
			} else {
				msg = fmt.Sprintf("invalid value %q (wrong JSON type: numbers up to 32 bits are JSON numbers, 64-bit and decimal64 are strings)", val)
			}
			return &Error{Path: full, Kind: KindType, Message: msg}
		}
		if sn.nodetype&C.LYS_LIST != 0 {
			return &Error{Path: full, Kind: KindSyntax, Message: "list entry without all of its keys, or with an invalid key value"}
		}
		return &Error{Path: full, Kind: KindSyntax, Message: "invalid instance (wrong JSON structure)"}
	}
	// not in the compiled schema: disabled by a feature, or unknown
	if expr := s.c.ifFeature(pschema, parent == nil, mod, name); expr != "" {
		return &Error{Path: full, Kind: KindIfFeature, Message: "node is disabled on this platform: its if-feature is false with this feature set", Constraint: expr}
	}
	return &Error{Path: full, Kind: KindUnknown, Message: "no such node in the models"}
}

// validate runs libyang's validation until the tree is valid, removing
// the node of each problem found so that the next one shows (libyang
// 2.1 stops at the first problem).
func (s *session) validate() {
	defer s.count()
	s.sweepOpaque()
	opts := C.uint32_t(C.LYD_VALIDATE_NO_STATE)
	if !s.opt.All {
		opts |= C.LYD_VALIDATE_PRESENT
	}
	for i := 0; i < s.opt.max()+1 && len(s.errs) < s.opt.max(); i++ {
		s.first()
		r := C.lyd_validate_all(&s.tree, s.sl.ctx, opts, nil)
		errs := takeErrors(s.sl.ctx)
		if r == C.LY_SUCCESS {
			return
		}
		if len(errs) == 0 {
			s.add(&Error{Path: "/", Kind: KindOther, Message: fmt.Sprintf("validation failed (libyang error %d)", int(r))})
			return
		}
		progress := false
		for _, e := range errs {
			ve := s.classify(e, "/")
			before := len(s.errs)
			s.add(ve)
			if n := s.culprit(ve); n != nil && len(s.errs) > before {
				s.free(n)
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

// count adds what the validated tree holds to opt.Stats.
func (s *session) count() {
	st := s.opt.Stats
	if st == nil {
		return
	}
	st.Validations++
	if s.tree == nil {
		return
	}
	s.first()
	var out [4]C.uint64_t
	C.fab_count(s.tree, &out[0])
	st.Nodes += int64(out[0])
	st.Musts += int64(out[1])
	st.Whens += int64(out[2])
	st.Leafrefs += int64(out[3])
}

// culprit is the node to remove so that validation gets past e.
func (s *session) culprit(e *Error) *C.struct_lyd_node {
	if s.tree == nil || !strings.HasPrefix(e.Path, "/") || e.Path == "/" {
		return nil
	}
	n := s.find(e.Path)
	if n == nil && e.Kind == KindMandatory {
		// libyang names the missing node by its schema path: find the
		// first instance of its parent that lacks it, and report that one
		if i := strings.LastIndexByte(e.Path, '/'); i > 0 {
			parent, child := e.Path[:i], e.Path[i+1:]
			if p := s.findFirst(parent + "[not(" + child + ")]"); p != nil {
				e.Path = nodePath(p) + "/" + child
				return climbNP(p)
			}
		}
		return nil
	}
	if n == nil {
		return nil
	}
	// a key or a mandatory leaf cannot go alone (removing it would be
	// reported next as a problem of its own): remove its parent
	if n.schema != nil && n.schema.flags&(C.LYS_KEY|C.LYS_MAND_TRUE) != 0 && e.Kind != KindMandatory {
		if p := C.lyd_parent(n); p != nil {
			n = climbNP(p)
		}
	}
	return n
}

func (s *session) find(path string) *C.struct_lyd_node {
	if s.tree == nil {
		return nil
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var match *C.struct_lyd_node
	r := C.lyd_find_path(s.tree, cp, 0, &match)
	takeErrors(s.sl.ctx)
	if r != C.LY_SUCCESS {
		return nil
	}
	return match
}

// climbNP returns n, or, for a non-presence container (which libyang
// recreates, empty, when it is removed), its nearest ancestor that is a
// list entry, a presence container or a top-level node.
func climbNP(n *C.struct_lyd_node) *C.struct_lyd_node {
	for n.schema != nil && n.schema.nodetype&C.LYS_CONTAINER != 0 && n.schema.flags&C.LYS_PRESENCE == 0 {
		p := C.lyd_parent(n)
		if p == nil {
			break
		}
		n = p
	}
	return n
}

// findFirst returns the first node xpath selects.
func (s *session) findFirst(xpath string) *C.struct_lyd_node {
	if s.tree == nil {
		return nil
	}
	cp := C.CString(xpath)
	defer C.free(unsafe.Pointer(cp))
	var set *C.struct_ly_set
	r := C.lyd_find_xpath(s.tree, cp, &set)
	takeErrors(s.sl.ctx)
	if r != C.LY_SUCCESS || set == nil {
		return nil
	}
	defer C.ly_set_free(set, nil)
	if set.count == 0 {
		return nil
	}
	return C.fab_set_dnode(set, 0)
}

var (
	reDataLoc   = regexp.MustCompile(`^(?:Data|Schema) location "?(.*?)"?\.?$`)
	reWhen      = regexp.MustCompile(`^When condition "(.*)" not satisfied\.?$`)
	reMust      = regexp.MustCompile(`^Must condition "(.*)" not satisfied\.?$`)
	reLeafref   = regexp.MustCompile(`^Invalid leafref value "(.*)" - no target instance "(.*)" with the same value\.?$`)
	reMandatory = regexp.MustCompile(`^Mandatory (?:node|choice) "(.*)" (?:instance )?does not exist\.?$`)
	reUnique    = regexp.MustCompile(`^(Unique data leaf|Duplicate instance)`)
	reElements  = regexp.MustCompile(`^Too (few|many) `)
	reType      = regexp.MustCompile(`^(Unsatisfied (range|pattern|length)|Invalid |Value "|Identityref|Invalid enumeration|Invalid type)`)
	reNotFound  = regexp.MustCompile(`^Node "(.*)" not found`)
)

// classify turns a libyang error into an Error: path, kind, and the
// failed constraint's expression when it can be recovered.
func (s *session) classify(e lyErr, where string) *Error {
	out := &Error{Path: e.path, Message: e.msg, AppTag: e.apptag, Kind: KindOther}
	if m := reDataLoc.FindStringSubmatch(out.Path); m != nil {
		out.Path = m[1]
	}
	if out.Path == "" {
		out.Path = where
	}
	switch {
	case reWhen.MatchString(e.msg):
		out.Kind, out.Constraint = KindWhen, reWhen.FindStringSubmatch(e.msg)[1]
	case reMust.MatchString(e.msg):
		out.Kind, out.Constraint = KindMust, reMust.FindStringSubmatch(e.msg)[1]
	case reLeafref.MatchString(e.msg):
		out.Kind, out.Constraint = KindLeafref, reLeafref.FindStringSubmatch(e.msg)[2]
	case reMandatory.MatchString(e.msg):
		out.Kind, out.Constraint = KindMandatory, reMandatory.FindStringSubmatch(e.msg)[1]
	case reUnique.MatchString(e.msg):
		out.Kind = KindUnique
	case reElements.MatchString(e.msg):
		out.Kind = KindElements
	case reType.MatchString(e.msg):
		out.Kind = KindType
	case reNotFound.MatchString(e.msg):
		out.Kind = KindUnknown
	case e.vecode == C.LYVE_SYNTAX_JSON || e.vecode == C.LYVE_SYNTAX:
		out.Kind = KindSyntax
	}
	if out.Kind == KindOther || out.Kind == KindMust {
		// a must with an error-message: find it among the node's musts
		if n := s.find(out.Path); n != nil && n.schema != nil {
			musts := C.lysc_node_musts(n.schema)
			for i := C.uint64_t(0); i < C.fab_array_count(unsafe.Pointer(musts)); i++ {
				m := C.fab_must_at(musts, i)
				expr := C.GoString(C.fab_must_expr(m))
				if (m.emsg != nil && C.GoString(m.emsg) == e.msg) || expr == out.Constraint {
					out.Kind, out.Constraint = KindMust, expr
					break
				}
			}
		}
	}
	return out
}

// topLevel maps each top-level data node name to the implemented modules
// defining it.
func (c *slot) topLevel() map[string][]string {
	out := map[string][]string{}
	var idx C.uint32_t
	for {
		m := C.ly_ctx_get_module_iter(c.ctx, &idx)
		if m == nil {
			break
		}
		if m.implemented == 0 || m.compiled == nil {
			continue
		}
		for n := m.compiled.data; n != nil; n = n.next {
			if n.nodetype&(C.LYS_CHOICE|C.LYS_CASE) != 0 {
				for _, k := range flatten(n) {
					out[C.GoString(k.name)] = append(out[C.GoString(k.name)], C.GoString(m.name))
				}
				continue
			}
			out[C.GoString(n.name)] = append(out[C.GoString(n.name)], C.GoString(m.name))
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// flatten returns n, or the data nodes under a choice/case n.
func flatten(n *C.struct_lysc_node) []*C.struct_lysc_node {
	if n.nodetype&(C.LYS_CHOICE|C.LYS_CASE) == 0 {
		return []*C.struct_lysc_node{n}
	}
	var out []*C.struct_lysc_node
	for ch := C.lysc_node_child(n); ch != nil; ch = ch.next {
		out = append(out, flatten(ch)...)
	}
	return out
}

// qualify returns the module implementing top-level node name,
// preferring modules whose name starts with prefer.
func (c *slot) qualify(name, prefer string) (string, error) {
	mods := c.tops[name]
	switch {
	case len(mods) == 1:
		return mods[0], nil
	case len(mods) == 0:
		return "", fmt.Errorf("no module of this context has a top-level node %q", name)
	}
	for _, m := range mods {
		if prefer != "" && strings.HasPrefix(m, prefer) {
			return m, nil
		}
	}
	return "", fmt.Errorf("top-level node %q is ambiguous (%s): qualify it", name, strings.Join(mods, ", "))
}

// Available reports whether this build has libyang.
const Available = true
