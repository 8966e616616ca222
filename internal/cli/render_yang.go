package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// yangResult is one device's offline YANG validation (render --yang-dir).
type yangResult struct {
	Models string `json:"models"` // model set: openconfig, srlinux, sonic
	Dir    string `json:"dir"`    // the directory the models were loaded from
	// Validator says whose verdict this is: "libyang" (the resulting
	// configuration with must, when, if-feature, leafref, mandatory, and
	// goyang for what only the operations show: paths, config false, key
	// agreement) or "goyang" (no must, when or if-feature evaluated).
	Validator string `json:"validator"`
	// Note says why the validator is goyang alone (absent with libyang).
	Note   string      `json:"note,omitempty"`
	Errors []yangIssue `json:"errors"` // empty when valid
}

type yangIssue struct {
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
	validatorLibYANG = "libyang"
	validatorGoYANG  = "goyang"
)

// yangProfile is how libyang loads a model set (the descriptor's of the
// platform whose set it is; ok false: no platform has it). Its Prefer
// picks among same-named top-level nodes of the set (ietf-interfaces and
// openconfig-interfaces both define "interfaces"), as a device serving
// that origin does.
func yangProfile(set string) (yangval.Profile, bool) {
	for _, p := range builtin.Platforms() {
		if p.YANG.Set == set {
			return p.YANG.Profile, true
		}
	}
	return yangval.Profile{}, false
}

// modulePrefix is the set's Prefer (yangProfile).
func modulePrefix(set string) string {
	p, _ := yangProfile(set)
	return p.Prefer
}

// yangModels loads each model set once per run.
type yangModels struct {
	root string
	mu   sync.Mutex
	sets map[string]*yangval.Schema
	errs map[string]error
	// noLibYANG forces goyang alone (tests of the fallback).
	noLibYANG bool
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
func (m *yangModels) libyangFor(set, dir string) (*libyang.Context, string, error) {
	switch {
	case m.noLibYANG:
		return nil, "libyang disabled: goyang only, must, when and if-feature NOT evaluated", nil
	case !libyang.Available:
		return nil, noLibYANGNote, nil
	}
	p, ok := yangProfile(set)
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

// dir is where set's modules are: root itself when it holds .yang files
// (one model set for every device), else root/set.
func (m *yangModels) dir(set string) string {
	if files, _ := filepath.Glob(filepath.Join(m.root, "*.yang")); len(files) > 0 {
		return m.root
	}
	return filepath.Join(m.root, set)
}

func (m *yangModels) load(set string) (modelSet, error) {
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

func (m *yangModels) loadSchema(set string) (*yangval.Schema, string, error) {
	dir := m.dir(set)
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
		err = fmt.Errorf("no %s YANG models in %s (--yang-dir holds one directory per model set: %s/%s/*.yang)", set, m.root, m.root, set)
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

// checkYANG validates a rendered payload with the model set ms and
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
func checkYANG(ms modelSet, p drivers.YANGPayload) []yangIssue {
	s := ms.s
	prefer := modulePrefix(p.Models)
	var errs []yangval.Error
	var lyErrs []yangIssue
	if len(p.ConfigDB) > 0 {
		var db map[string]map[string]map[string]any
		if err := decodeNumbers(p.ConfigDB, &db); err != nil {
			return []yangIssue{{Path: "/", Message: "CONFIG_DB is not table -> key -> field JSON: " + err.Error(), Validator: validatorGoYANG}}
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
	out := make([]yangIssue, 0, len(errs)+len(lyErrs))
	for _, e := range errs {
		out = append(out, yangIssue{Path: e.Path, Message: e.Msg, Value: e.Value, Validator: validatorGoYANG})
	}
	out = append(out, lyErrs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// libyangIssues turns a libyang verdict into issues.
func libyangIssues(err error) []yangIssue {
	if err == nil {
		return nil
	}
	var es libyang.Errors
	if !errors.As(err, &es) {
		return []yangIssue{{Path: "/", Message: "libyang: " + err.Error(), Validator: validatorLibYANG}}
	}
	out := make([]yangIssue, 0, len(es))
	for _, e := range es {
		out = append(out, yangIssue{Path: e.Path, Message: e.Message, Kind: e.Kind.String(), Constraint: strings.Join(strings.Fields(e.Constraint), " "), Validator: validatorLibYANG})
	}
	return out
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// validateRendered runs checkYANG for every device whose driver renders a
// YANG-modelled payload and records the result on the device.
// Devices are validated in parallel (one worker per CPU): a Schema is
// safe for concurrent use.
func validateRendered(models *yangModels, devs []renderedDevice) error {
	// A verdict is a function of the models and the payload: devices
	// whose payloads are byte-identical (the leaves of a pod have the
	// same ports and policies) share one validation, and each gets the
	// verdict.
	type job struct {
		ms   modelSet
		p    drivers.YANGPayload
		devs []*renderedDevice
	}
	var jobs []*job
	byKey := map[[sha256.Size]byte]*job{}
	for i := range devs {
		d := &devs[i]
		if d.yang == nil {
			continue
		}
		ms, err := models.load(d.yang.Models)
		if err != nil {
			return fmt.Errorf("render %s: %w", d.Address, err)
		}
		k := payloadKey(ms.dir, *d.yang)
		if j := byKey[k]; j != nil {
			j.devs = append(j.devs, d)
			continue
		}
		j := &job{ms: ms, p: *d.yang, devs: []*renderedDevice{d}}
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
				issues := checkYANG(j.ms, j.p)
				for _, d := range j.devs {
					res := &yangResult{Models: j.p.Models, Dir: j.ms.dir, Validator: validatorGoYANG, Note: j.ms.note}
					if j.ms.ly != nil {
						res.Validator = validatorLibYANG
					}
					res.Errors = append([]yangIssue{}, issues...)
					d.YANG = res
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return nil
}

// payloadKey identifies a payload and the models it is validated with.
func payloadKey(dir string, p drivers.YANGPayload) [sha256.Size]byte {
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

// reportYANG prints the validation per device to w and returns the exit
// code: ExitError when any device's payload violates its models.
func reportYANG(w io.Writer, devs []renderedDevice, human bool) ExitCode {
	valid, invalid, skipped := 0, 0, 0
	validators := map[string]string{} // validator -> note
	for _, d := range devs {
		if d.YANG != nil {
			validators[d.YANG.Validator] = d.YANG.Note
		}
		switch {
		case d.YANG == nil:
			skipped++
		case len(d.YANG.Errors) == 0:
			valid++
			if human {
				fmt.Fprintf(w, "YANG: %s: valid against the %s models in %s (%s)\n", d.Address, d.YANG.Models, d.YANG.Dir, d.YANG.Validator)
			}
		default:
			invalid++
			if human {
				fmt.Fprintf(w, "YANG: %s: %s against the %s models in %s (%s):\n", d.Address,
					plural(len(d.YANG.Errors), "violation", "violations"), d.YANG.Models, d.YANG.Dir, d.YANG.Validator)
				for _, e := range d.YANG.Errors {
					line := "  " + e.Path + ": " + e.Message
					if e.Value != "" {
						line += fmt.Sprintf(" (value %q)", e.Value)
					}
					switch {
					case e.Kind != "" && e.Constraint != "" && !strings.Contains(e.Message, e.Constraint):
						line += " [" + e.Kind + " " + e.Constraint + "]"
					case e.Kind != "":
						line += " [" + e.Kind + "]"
					}
					fmt.Fprintln(w, line+" ("+e.Validator+")")
				}
			}
		}
	}
	if human {
		for _, v := range []string{validatorLibYANG, validatorGoYANG} {
			note, ok := validators[v]
			switch {
			case !ok:
			case v == validatorLibYANG:
				fmt.Fprintln(w, "YANG: validated by libyang (the resulting configuration: must, when, if-feature, leafref, mandatory, "+
					"types, with the platform's feature set) and goyang (the operations: paths, config, keys)")
			default:
				fmt.Fprintln(w, "YANG: validated by goyang alone: "+note)
			}
		}
		fmt.Fprintf(w, "YANG: %d valid, %d invalid, %d without a YANG-modelled payload (CLI, host or no offline renderer)\n", valid, invalid, skipped)
	}
	if invalid > 0 {
		return ExitError
	}
	return ExitOK
}

// yangDeviceJSON is a device's validation in render -o --json output.
type yangDeviceJSON struct {
	Address string `json:"address"`
	*yangResult
}

func yangJSON(devs []renderedDevice) []yangDeviceJSON {
	var out []yangDeviceJSON
	for _, d := range devs {
		if d.YANG != nil {
			out = append(out, yangDeviceJSON{Address: d.Address, yangResult: d.YANG})
		}
	}
	return out
}
