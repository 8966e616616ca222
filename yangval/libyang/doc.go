// Package libyang validates fabctl's YANG-modelled payloads with libyang
// (Debian's libyang2-dev, libyang 2.1), through cgo: whole data trees,
// with must, when, if-feature, leafref, mandatory, range, pattern,
// unique and min/max-elements, as a device evaluates them. It complements
// package yangval (goyang), which evaluates no XPath and no features.
//
// # Why a binding of its own
//
// No maintained Go binding of libyang 2 is served by the module proxy:
// `go list -m -versions` answers 403 (not available) for the candidates
// found (github.com/mattiaswal/go-libyang, github.com/Dennis-Zhang-SH/libyango,
// github.com/sartura/goconf, github.com/CESNET/libyang-go); the first two
// are unversioned, a few hundred lines, and the last two target libyang 1
// or do not exist. This package binds the dozen functions it needs
// (fab_libyang.c holds the few C helpers; `#cgo pkg-config: libyang`).
//
// # API
//
// A Context is built from a model directory, a module list and the
// features enabled per module (New, or Load for a platform's
// yangval.Profile, which its descriptor carries: drivers.YANGModels of
// srlinux (a 7220 IXR-D5), openconfig and sonic), with the load-time
// rewrites of its profile. Then:
//
//   - ValidateJSON: a whole RFC 7951 (JSON_IETF) tree;
//   - ValidateSet: the configuration a gNMI SetRequest (as `fabctl render`
//     writes gnmi-setrequest.json) leaves on a device whose configuration
//     was a given base (factory defaults): deletes, replaces, updates, then
//     the whole tree, so that a partial update whose leafref points at
//     nothing on the device is refused as the device refuses it;
//   - ValidateConfigDB: a whole SONiC CONFIG_DB (MergeConfigDB puts a
//     rendered fragment over the running rows, as GCU validates the patched
//     configuration), translated to the sonic-* models' tree by
//     TranslateConfigDB; FragmentBase is what a running switch has under
//     a rendered fragment (ports with their mandatory lanes, the buffer
//     model, the lossless pool), for offline checks.
//
// Options.Stats counts what a validation covered: data nodes, and the
// must, when and leafref evaluations on them (the figures of
// BenchmarkValidatePod256 and TestRenderedPayloads).
//
// Each returns nil or Errors: every problem (not only libyang's first),
// each an *Error with the data path, libyang's message, the kind of the
// constraint (KindMust, KindWhen, KindIfFeature, KindLeafref,
// KindMandatory, KindType, ...) and the failed expression when it can be
// recovered (the must or when XPath, the leafref path, the missing node,
// the if-feature expression).
//
// # Options chosen
//
// Data is parsed with LYD_PARSE_ONLY (validation is a separate step that
// can be repeated), LYD_PARSE_OPAQ (a node the models lack, or lack on
// this platform because of a disabled feature, or a value of the wrong
// type, becomes an opaque node that is reported and removed, so that the
// rest of the tree is still validated) and LYD_PARSE_NO_STATE (state data
// is refused). It is validated with LYD_VALIDATE_NO_STATE and, unless
// Options.All, LYD_VALIDATE_PRESENT: only modules with data in the tree
// are validated, as a device validates the configuration of the models it
// is given; with All, a module without data must have none of its
// mandatory top-level nodes.
//
// libyang 2.1.30 stops at the first problem (LYD_VALIDATE_MULTI_ERROR
// came later), so after each problem the node that carries it is removed
// (its list entry for a key or a mandatory leaf, the nearest list entry
// for a non-presence container) and the tree validated again, up to
// Options.MaxErrors (default 100). A problem found after a removal is
// real in the remaining tree but can, rarely, be a consequence of the
// removal (a leafref to the removed entry).
//
// Two libyang 2.1.30 limitations are worked around: a list entry whose
// key members do not come first becomes an opaque node under
// LYD_PARSE_OPAQ, so documents are re-encoded keys first (RFC 7951 allows
// any order); and a main module that libyang did not read from a file
// crashes libyang when its submodules include each other (openconfig-qos),
// so only rewritten modules are served from memory (through the import
// callback) and every other module is read by libyang from the model
// directory.
//
// # Load-time rewrites
//
// A few SR Linux expressions can never be satisfied by strict XPath 1.0
// (a node-set compared with true() or false(); != with an absent leaf).
// They are rewritten in the module text in memory before loading, each
// rewrite matching an exact expected number of expressions (a model
// update that changes them makes loading fail, to be reviewed); the files
// in the model directory are never modified, and nothing else is. The
// rewrites, with their reasons, are the SR Linux profile's Rewrites
// (drivers/switch/srlinux); Context.Rewrites
// lists every changed line.
//
// # Memory and concurrency
//
// Every libyang object is freed: data trees at the end of each call
// (lyd_free_all), error records after each libyang call (ly_err_clean),
// C strings and the module table right after use, contexts in Close.
// libyang documents data functions on a const context as thread-safe, but
// keeps its error records per thread and per context, and looks them up
// without the lock that guards their insertion (log.c, ly_err_get_rec vs
// ly_err_new_rec). So a Context is a pool of identical libyang contexts
// (Config.Contexts, default GOMAXPROCS): a validation takes one for its
// whole duration, on an OS thread it keeps locked (runtime.LockOSThread,
// so that the errors of its libyang calls are found on that thread), and
// gives it back. A Context is safe for concurrent use; validations run in
// parallel up to the pool size and wait beyond it. libyang's logging is
// switched, process-wide and once, to storing errors without printing
// them (ly_log_options(LY_LOSTORE)).
//
// The binding is built only with the build tag libyang (and cgo): `make
// test` adds the tag when pkg-config finds libyang, and `make build
// LIBYANG=1` builds a fabctl whose render --yang-dir, gNMI target and
// SONiC emulator give libyang's verdict. Without the tag the package
// builds with stubs that return ErrUnavailable (Available is false) and
// those verdicts are goyang's: a default fabctl must not need
// libyang.so.2 at run time, because it ships itself to every host as the
// agent, and RDMA hosts have no reason to carry libyang.
package libyang
