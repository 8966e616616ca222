// Package check validates rendered payloads offline against the YANG
// model sets they conform to (fabctl render --yang-dir): goyang on the
// operations, and, in a build with libyang (-tags libyang), libyang on
// the configuration they leave on the device, as the device validates
// it. It loads each model set once, validates payloads in parallel, and
// byte-identical payloads once.
package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// Payload is a rendered payload and the model set it conforms to (the
// drivers' drivers.YANGPayload): Ops, the SetRequest that configures the
// device from nothing, and optionally Tree, the configuration they leave
// on a factory-default device; or a SONiC CONFIG_DB fragment.
type Payload struct {
	Models   string
	Ops      []Op
	Tree     []byte
	ConfigDB []byte
}

// Op is one SetRequest operation: "delete", "replace" or "update", a
// gNMI path string, an RFC 7951 value.
type Op struct {
	Op   string
	Path string
	Val  []byte
}

// Result is one payload's validation.
type Result struct {
	Models string `json:"models"` // model set: openconfig, srlinux, sonic
	Dir    string `json:"dir"`    // the directory the models were loaded from
	// Validator says whose verdict this is: "libyang" (the resulting
	// configuration with must, when, if-feature, leafref, mandatory, and
	// goyang for what only the operations show: paths, config false, key
	// agreement) or "goyang" (no must, when or if-feature evaluated).
	Validator string `json:"validator"`
	// Note says why the validator is goyang alone (absent with libyang).
	Note   string  `json:"note,omitempty"`
	Errors []Issue `json:"errors"` // empty when valid
}

// Issue is a violation of the models.
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Value   string `json:"value,omitempty"`
	// Kind is libyang's class of the violated constraint (must, when,
	// if-feature, leafref, mandatory, type, ...); absent for goyang's.
	Kind string `json:"kind,omitempty"`
	// Constraint is the failed expression (a must or when XPath, a
	// leafref path) when libyang names it.
	Constraint string `json:"constraint,omitempty"`
	// Validator is "libyang" or "goyang".
	Validator string `json:"validator"`
}

// Validator names.
const (
	ValidatorLibYANG = "libyang"
	ValidatorGoYANG  = "goyang"
)

// Models are the model sets under a --yang-dir (one directory per set,
// or the directory itself for one set): each is loaded once.
type Models struct {
	Root string
	// Profile is how libyang loads a model set: the profile the
	// descriptor of the platform whose set it is carries (ok false, or
	// Profile nil: no platform has the set, goyang alone). Its Prefer
	// picks among same-named top-level nodes of the set
	// (ietf-interfaces and openconfig-interfaces both define
	// "interfaces") as a device serving that origin does.
	Profile func(set string) (yangval.Profile, bool)
	// NoLibYANG forces goyang alone (tests of the fallback).
	NoLibYANG bool

	mu   sync.Mutex
	sets map[string]*yangval.Schema
	errs map[string]error
}

// Preloaded records a schema loaded already for the models in dir (a
// benchmark's or a test's).
func (m *Models) Preloaded(dir string, s *yangval.Schema) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sets == nil {
		m.sets, m.errs = map[string]*yangval.Schema{}, map[string]error{}
	}
	m.sets[dir] = s
}

// modelSet is a loaded model set: goyang's schema and, when this build
// has libyang and a platform profile for the set, libyang's context
// (else nil, with the reason in note).
type modelSet struct {
	s    *yangval.Schema
	ly   *libyang.Context
	note string
	dir  string
}

// noLibYANGNote is why a build without the libyang tag validates with
// goyang alone.
const noLibYANGNote = "this fabctl was built without libyang (make build LIBYANG=1, or go build -tags libyang " +
	"with libyang2-dev): goyang only, must, when and if-feature NOT evaluated"

// libyangFor returns the libyang context of the models in dir (one per
// process, yangval/libyang.ForDir) or nil with the reason.
func (m *Models) libyangFor(set, dir string) (*libyang.Context, string, error) {
	switch {
	case m.NoLibYANG:
		return nil, "libyang disabled: goyang only, must, when and if-feature NOT evaluated", nil
	case !libyang.Available:
		return nil, noLibYANGNote, nil
	}
	p, ok := m.profile(set)
	if !ok || filepath.Base(dir) != set {
		return nil, fmt.Sprintf("libyang needs the %s models in their own directory (--yang-dir DIR with DIR/%s): goyang only, must, when and if-feature NOT evaluated", set, set), nil
	}
	c, err := libyang.ForDir(dir, p)
	if err != nil {
		return nil, "", err
	}
	if c == nil {
		return nil, "no libyang profile for " + set + ": goyang only, must, when and if-feature NOT evaluated", nil
	}
	return c, "", nil
}

// profile is set's libyang profile (Profile).
func (m *Models) profile(set string) (yangval.Profile, bool) {
	if m.Profile == nil {
		return yangval.Profile{}, false
	}
	return m.Profile(set)
}

// Dir is where set's modules are: Root itself when it holds .yang files
// (one model set for every device), else Root/set.
func (m *Models) Dir(set string) string {
	if files, _ := filepath.Glob(filepath.Join(m.Root, "*.yang")); len(files) > 0 {
		return m.Root
	}
	return filepath.Join(m.Root, set)
}

func (m *Models) load(set string) (modelSet, error) {
	s, dir, err := m.loadSchema(set)
	if err != nil {
		return modelSet{dir: dir}, err
	}
	ly, note, err := m.libyangFor(set, dir)
	if err != nil {
		return modelSet{dir: dir}, err
	}
	return modelSet{s: s, ly: ly, note: note, dir: dir}, nil
}

func (m *Models) loadSchema(set string) (*yangval.Schema, string, error) {
	dir := m.Dir(set)
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sets[dir]; s != nil {
		return s, dir, nil
	}
	if err := m.errs[dir]; err != nil {
		return nil, dir, err
	}
	var s *yangval.Schema
	var err error
	if files, _ := filepath.Glob(filepath.Join(dir, "*.yang")); len(files) == 0 {
		err = fmt.Errorf("no %s YANG models in %s (--yang-dir holds one directory per model set: %s/%s/*.yang)", set, m.Root, m.Root, set)
	} else {
		s, err = yangval.Load(dir)
	}
	if m.sets == nil {
		m.sets, m.errs = map[string]*yangval.Schema{}, map[string]error{}
	}
	if err != nil {
		m.errs[dir] = err
		return nil, dir, err
	}
	m.sets[dir] = s
	return s, dir, nil
}

// check validates a rendered payload with the model set ms and
// returns its problems sorted by path.
//
// With libyang (ms.ly), the verdict is libyang's on the configuration the
// payload leaves on the device, as the device validates it: the
// driver's Tree (the request applied to the platform's factory
// configuration) or, without one, the request applied to an empty
// device; a CONFIG_DB fragment merged over the rows a running switch has
// (libyang.FragmentBase), as `config apply-patch` validates the patched
// whole. goyang still checks what only the operations show (a path that
// is not in the models or not configuration, key agreement between path
// and value), and the CONFIG_DB fragment's own rows.
//
// Without libyang, goyang alone: the SetRequest's operations (path,
// config, keys, types, mandatory leaves of replaced subtrees), leafrefs
// among the objects the payload creates (or, with a Tree, in the
// configuration it leaves), and CONFIG_DB rows as a fragment.
func check(ms modelSet, p Payload, prefer string) []Issue {
	s := ms.s
	var errs []yangval.Error
	var lyErrs []Issue
	if len(p.ConfigDB) > 0 {
		var db map[string]map[string]map[string]any
		if err := decodeNumbers(p.ConfigDB, &db); err != nil {
			return []Issue{{Path: "/", Message: "CONFIG_DB is not table -> key -> field JSON: " + err.Error(), Validator: ValidatorGoYANG}}
		}
		errs = append(errs, s.ValidateConfigDBFragment(db)...)
		if ms.ly != nil {
			frag := libyang.ConfigDB(db)
			lyErrs = append(lyErrs, libyangIssues(ms.ly.ValidateConfigDB(libyang.MergeConfigDB(libyang.FragmentBase(frag), frag), libyang.Options{}))...)
		}
	}
	ops := make([]yangval.SetOp, 0, len(p.Ops))
	var req libyang.SetRequest
	for _, o := range p.Ops {
		elems, err := yangval.ParsePath(o.Path)
		if err != nil {
			errs = append(errs, yangval.Error{Path: o.Path, Msg: err.Error()})
			continue
		}
		op := yangval.SetOp{Path: elems}
		switch o.Op {
		case "delete":
			op.Op = yangval.OpDelete
			req.Delete = append(req.Delete, o.Path)
		case "replace":
			op.Op = yangval.OpReplace
			req.Replace = append(req.Replace, libyang.Update{Path: o.Path, Encoding: "json_ietf", Val: o.Val})
		case "update":
			op.Op = yangval.OpUpdate
			req.Update = append(req.Update, libyang.Update{Path: o.Path, Encoding: "json_ietf", Val: o.Val})
		default:
			errs = append(errs, yangval.Error{Path: o.Path, Msg: fmt.Sprintf("unknown SetRequest operation %q", o.Op)})
			continue
		}
		if op.Op != yangval.OpDelete {
			if err := decodeNumbers(o.Val, &op.Value); err != nil {
				errs = append(errs, yangval.Error{Path: o.Path, Msg: o.Op + ": value is not JSON: " + err.Error()})
				continue
			}
		}
		ops = append(ops, op)
	}
	switch {
	case len(p.Ops) == 0:
	case ms.ly != nil:
		// goyang for the operations, libyang for the resulting configuration
		errs = append(errs, s.ValidateSet(s.QualifySet(ops, prefer))...)
		if len(p.Tree) > 0 {
			// top-level members qualified as a device serving the origin
			// reads them (RFC 7951 wants them qualified)
			var tree any
			if err := decodeNumbers(p.Tree, &tree); err != nil {
				errs = append(errs, yangval.Error{Path: "/", Msg: "rendered tree is not JSON: " + err.Error()})
			} else if b, err := json.Marshal(s.QualifyTree(tree, prefer)); err != nil {
				errs = append(errs, yangval.Error{Path: "/", Msg: "rendered tree: " + err.Error()})
			} else {
				lyErrs = append(lyErrs, libyangIssues(ms.ly.ValidateJSON(b, libyang.Options{}))...)
			}
		} else {
			lyErrs = append(lyErrs, libyangIssues(ms.ly.ValidateSet(nil, req, libyang.Options{}))...)
		}
	case len(p.Tree) == 0:
		errs = append(errs, s.ValidatePayload(s.QualifySet(ops, prefer))...)
	default:
		errs = append(errs, s.ValidateSet(s.QualifySet(ops, prefer))...)
		var tree any
		if err := decodeNumbers(p.Tree, &tree); err != nil {
			errs = append(errs, yangval.Error{Path: "/", Msg: "rendered tree is not JSON: " + err.Error()})
		} else {
			// The operations were checked above: the tree adds the
			// references, to each other and to factory objects.
			errs = append(errs, s.Validate("/", s.QualifyTree(tree, prefer), yangval.Options{RefsOnly: true})...)
		}
	}
	out := make([]Issue, 0, len(errs)+len(lyErrs))
	for _, e := range errs {
		out = append(out, Issue{Path: e.Path, Message: e.Msg, Value: e.Value, Validator: ValidatorGoYANG})
	}
	out = append(out, lyErrs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// libyangIssues turns a libyang verdict into issues.
func libyangIssues(err error) []Issue {
	if err == nil {
		return nil
	}
	var es libyang.Errors
	if !errors.As(err, &es) {
		return []Issue{{Path: "/", Message: "libyang: " + err.Error(), Validator: ValidatorLibYANG}}
	}
	out := make([]Issue, 0, len(es))
	for _, e := range es {
		out = append(out, Issue{Path: e.Path, Message: e.Message, Kind: e.Kind.String(), Constraint: strings.Join(strings.Fields(e.Constraint), " "), Validator: ValidatorLibYANG})
	}
	return out
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// Validate validates every payload (nil ones are skipped) and returns
// the results in their order. Payloads are validated in parallel (one
// worker per CPU: a Schema is safe for concurrent use). A model set that
// cannot be loaded fails the whole validation (the error names the
// payload's index).
func (m *Models) Validate(ps []*Payload) ([]*Result, error) {
	// A verdict is a function of the models and the payload: devices
	// whose payloads are byte-identical (the leaves of a pod have the
	// same ports and policies) share one validation, and each gets the
	// verdict.
	type job struct {
		ms modelSet
		p  *Payload
		at []int // the payloads' indexes
	}
	out := make([]*Result, len(ps))
	var jobs []*job
	byKey := map[[sha256.Size]byte]*job{}
	for i, p := range ps {
		if p == nil {
			continue
		}
		ms, err := m.load(p.Models)
		if err != nil {
			return nil, &LoadError{Index: i, Err: err}
		}
		k := PayloadKey(ms.dir, p)
		if j := byKey[k]; j != nil {
			j.at = append(j.at, i)
			continue
		}
		j := &job{ms: ms, p: p, at: []int{i}}
		byKey[k] = j
		jobs = append(jobs, j)
	}
	var wg sync.WaitGroup
	next := make(chan *job)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				p, _ := m.profile(j.p.Models)
				prefer := p.Prefer
				issues := check(j.ms, *j.p, prefer)
				for _, i := range j.at {
					res := &Result{Models: j.p.Models, Dir: j.ms.dir, Validator: ValidatorGoYANG, Note: j.ms.note}
					if j.ms.ly != nil {
						res.Validator = ValidatorLibYANG
					}
					res.Errors = append([]Issue{}, issues...)
					out[i] = res
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return out, nil
}

// LoadError is a model set that could not be loaded for payload Index.
type LoadError struct {
	Index int
	Err   error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// PayloadKey identifies a payload and the models it is validated with.
func PayloadKey(dir string, p *Payload) [sha256.Size]byte {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte(dir))
	field([]byte(p.Models))
	for _, o := range p.Ops {
		field([]byte(o.Op))
		field([]byte(o.Path))
		field(o.Val)
	}
	field(p.Tree)
	field(p.ConfigDB)
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}
