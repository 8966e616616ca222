package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/yangval"
)

// yangResult is one device's offline YANG validation (render --yang-dir).
type yangResult struct {
	Models string      `json:"models"` // model set: openconfig, srlinux, sonic
	Dir    string      `json:"dir"`    // the directory the models were loaded from
	Errors []yangIssue `json:"errors"` // empty when valid
}

type yangIssue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Value   string `json:"value,omitempty"`
}

// modulePrefix picks among same-named top-level nodes of a model set
// (ietf-interfaces and openconfig-interfaces both define "interfaces"),
// as a device serving that origin does (drivers.YANGModels.ModulePrefix).
func modulePrefix(set string) string {
	for _, p := range builtin.Platforms() {
		if p.YANG.Set == set && p.YANG.ModulePrefix != "" {
			return p.YANG.ModulePrefix
		}
	}
	return ""
}

// yangModels loads each model set once per run.
type yangModels struct {
	root string
	mu   sync.Mutex
	sets map[string]*yangval.Schema
	errs map[string]error
}

// dir is where set's modules are: root itself when it holds .yang files
// (one model set for every device), else root/set.
func (m *yangModels) dir(set string) string {
	if files, _ := filepath.Glob(filepath.Join(m.root, "*.yang")); len(files) > 0 {
		return m.root
	}
	return filepath.Join(m.root, set)
}

func (m *yangModels) load(set string) (*yangval.Schema, string, error) {
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

// checkYANG validates a rendered payload against s: the SetRequest's
// operations (path, config, keys, types, mandatory leaves of replaced
// subtrees), leafrefs among the objects the payload creates (or, with a
// Tree, in the configuration it leaves), and CONFIG_DB rows as a
// fragment merged into the device's. Errors are sorted by path.
func checkYANG(s *yangval.Schema, p drivers.YANGPayload) []yangval.Error {
	prefer := modulePrefix(p.Models)
	var errs []yangval.Error
	if len(p.ConfigDB) > 0 {
		var db map[string]map[string]map[string]any
		if err := decodeNumbers(p.ConfigDB, &db); err != nil {
			return []yangval.Error{{Path: "/", Msg: "CONFIG_DB is not table -> key -> field JSON: " + err.Error()}}
		}
		errs = append(errs, s.ValidateConfigDBFragment(db)...)
	}
	ops := make([]yangval.SetOp, 0, len(p.Ops))
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
		case "replace":
			op.Op = yangval.OpReplace
		case "update":
			op.Op = yangval.OpUpdate
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
	if len(p.Tree) == 0 {
		errs = append(errs, s.ValidatePayload(s.QualifySet(ops, prefer))...)
	} else {
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
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
	return errs
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
	type job struct {
		d   *renderedDevice
		s   *yangval.Schema
		dir string
	}
	var jobs []job
	for i := range devs {
		d := &devs[i]
		if d.yang == nil {
			continue
		}
		s, dir, err := models.load(d.yang.Models)
		if err != nil {
			return fmt.Errorf("render %s: %w", d.Address, err)
		}
		jobs = append(jobs, job{d, s, dir})
	}
	var wg sync.WaitGroup
	next := make(chan job)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				res := &yangResult{Models: j.d.yang.Models, Dir: j.dir, Errors: []yangIssue{}}
				for _, e := range checkYANG(j.s, *j.d.yang) {
					res.Errors = append(res.Errors, yangIssue{Path: e.Path, Message: e.Msg, Value: e.Value})
				}
				j.d.YANG = res
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

// reportYANG prints the validation per device to w and returns the exit
// code: ExitError when any device's payload violates its models.
func reportYANG(w io.Writer, devs []renderedDevice, human bool) ExitCode {
	valid, invalid, skipped := 0, 0, 0
	for _, d := range devs {
		switch {
		case d.YANG == nil:
			skipped++
		case len(d.YANG.Errors) == 0:
			valid++
			if human {
				fmt.Fprintf(w, "YANG: %s: valid against the %s models in %s\n", d.Address, d.YANG.Models, d.YANG.Dir)
			}
		default:
			invalid++
			if human {
				fmt.Fprintf(w, "YANG: %s: %s against the %s models in %s:\n", d.Address,
					plural(len(d.YANG.Errors), "violation", "violations"), d.YANG.Models, d.YANG.Dir)
				for _, e := range d.YANG.Errors {
					line := "  " + e.Path + ": " + e.Message
					if e.Value != "" {
						line += fmt.Sprintf(" (value %q)", e.Value)
					}
					fmt.Fprintln(w, line)
				}
			}
		}
	}
	if human {
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
