package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

// This file is the front half every command that touches devices shares
// (plan, apply, show, render): load the spec, lint it, compile it to
// per-device intent, and build plan.Options (credentials resolver, state
// directory, applied record). The static lint is the first stage of every
// plan: a spec with lint errors is never planned or applied.

// errSpecInvalid is returned by loadFabric when the spec has load or lint
// errors. The diagnostics are in loadedFabric.Diagnostics; the caller
// renders them (writeDiagnostics, or its JSON view) and exits 1.
var errSpecInvalid = errors.New("the spec has errors")

// loadedFabric is a spec loaded, linted and compiled.
type loadedFabric struct {
	// Path is the spec path as given (file or directory).
	Path string
	// Stopped says what a spec with errors stopped, after the error count
	// ("": no device was read; render: nothing was rendered).
	Stopped string
	// Sources are the spec files read, in name order (saved plans embed
	// them so apply and show work from exactly what was planned).
	Sources []spec.File
	// Vars are the --var assignments; VarFiles the --var-file contents in
	// flag order; Env the FAB_VAR_* environment entries that set variables.
	Vars     []string
	VarFiles []spec.File
	Env      []string

	Spec *spec.Spec
	// Lint is the lint result (nil when the spec did not load).
	Lint *lint.Result
	// Diagnostics are load and lint diagnostics, sorted; Files the parsed
	// files for their snippets, with secret literals masked.
	Diagnostics hcl.Diagnostics
	Files       map[string]*hcl.File
	Errors      int
	Warnings    int
	Suppressed  int

	// Fabric is the compiled intent; nil when Diagnostics has errors.
	Fabric *intent.Fabric

	// StateDir and Applied are set by planOptions.
	StateDir string
	Applied  *plan.Applied
}

// loadFabric reads, loads, lints and compiles the spec at specPath. On
// load or lint errors it returns the loadedFabric (with Diagnostics) and
// errSpecInvalid; on an I/O failure reading a var file, another error.
func loadFabric(f *Factory, specPath string, vars, varFiles []string) (*loadedFabric, error) {
	lf := &loadedFabric{Path: specPath, Vars: append([]string(nil), vars...)}
	for _, kv := range f.Env {
		if strings.HasPrefix(kv, spec.VarEnvPrefix) {
			lf.Env = append(lf.Env, kv)
		}
	}
	sort.Strings(lf.Env)
	if err := arguments.Vars(vars); err != nil {
		return nil, usageError(err)
	}
	for _, p := range varFiles {
		// Read once (safefile: a regular file of at most 16 MiB): the
		// loader gets these bytes, and a saved plan embeds the same ones.
		b, err := safefile.ReadFile(p, safefile.VarFile)
		if err != nil {
			return nil, fmt.Errorf("read --var-file: %w", err)
		}
		lf.VarFiles = append(lf.VarFiles, spec.File{Name: p, Data: b})
	}
	files, diags := spec.ReadFiles(specPath)
	if diags.HasErrors() {
		lf.finish(nil, diags)
		return lf, errSpecInvalid
	}
	lf.Sources = files
	// spec.Load may reorder the environment slice it is given; pass a copy.
	env := append([]string(nil), f.Env...)
	s, diags := spec.LoadFiles(files, spec.LoadOptions{Vars: vars, VarFileData: lf.VarFiles, Env: env, Platforms: builtin.SpecPlatforms()})
	return lf.compile(f, s, diags)
}

// loadSavedFabric rebuilds the loadedFabric a saved plan was made from,
// from the sources, variables and var-file contents it embeds (not from
// the files on disk, which may have changed since).
func loadSavedFabric(f *Factory, sp *plan.SavedPlan) (*loadedFabric, error) {
	// The sources are named as files of the recorded spec directory, so
	// relative paths in the spec (known_hosts, file() secrets, ca_file)
	// resolve there, never against the working directory.
	files := sp.SpecFiles()
	lf := &loadedFabric{Path: sp.SpecPath, Sources: files, Vars: sp.Vars, VarFiles: sp.VarFiles, Env: sp.Env}
	s, diags := spec.LoadFiles(files, sp.LoadOptions(builtin.SpecPlatforms()))
	return lf.compile(f, s, diags)
}

func (lf *loadedFabric) compile(f *Factory, s *spec.Spec, diags hcl.Diagnostics) (*loadedFabric, error) {
	lf.Spec = s
	if s != nil && s.Fabric != nil && !diags.HasErrors() {
		r := lint.Run(s)
		lf.Lint = &r
		lf.Suppressed = r.Suppressed
		diags = append(diags, r.Diagnostics...)
	}
	var files map[string]*hcl.File
	if s != nil {
		files = s.Files
	}
	lf.finish(files, diags)
	if lf.Errors > 0 {
		return lf, errSpecInvalid
	}
	lf.Fabric = intent.Compile(s)
	f.Debugf("compiled %s: %d switches, %d hosts", lf.Fabric.Name, len(lf.Fabric.Switches), len(lf.Fabric.Hosts))
	return lf, nil
}

func (lf *loadedFabric) finish(files map[string]*hcl.File, diags hcl.Diagnostics) {
	spec.SortDiagnostics(diags)
	lf.Diagnostics = diags
	lf.Files = redactSecrets(diags, files)
	lf.Errors, lf.Warnings = 0, 0
	for _, d := range diags {
		switch d.Severity {
		case hcl.DiagError:
			lf.Errors++
		case hcl.DiagWarning:
			lf.Warnings++
		}
	}
}

// JSONDiagnostics returns the diagnostics in their JSON form.
func (lf *loadedFabric) JSONDiagnostics() []spec.JSONDiagnostic {
	return spec.ToJSON(lf.Diagnostics, lf.Files)
}

// writeDiagnostics writes the diagnostics with source snippets to w
// (styled when color is true), followed by a one-line count.
func (lf *loadedFabric) writeDiagnostics(w io.Writer, width int, color bool) error {
	if len(lf.Diagnostics) == 0 {
		return nil
	}
	if err := spec.WriteText(w, lf.Diagnostics, lf.Files, uint(width), color); err != nil {
		return err
	}
	if lf.Errors > 0 {
		st := newStyles(w, color)
		stopped := lf.Stopped
		if stopped == "" {
			stopped = "no device was read"
		}
		_, err := fmt.Fprintf(w, "%s %s, %s: %s; fix the spec first\n",
			st.Fail.Render("✘"), plural(lf.Errors, "error", "errors"), plural(lf.Warnings, "warning", "warnings"), stopped)
		return err
	}
	return nil
}

// stateDir is where fabctl keeps a fabric's local state (applied record,
// lock, journals): the --state-dir flag when given, else .fabctl beside
// the spec (in the spec directory, or the directory of the spec file).
func stateDir(specPath, flag string) string {
	if flag != "" {
		return flag
	}
	dir := specPath
	if st, err := os.Stat(specPath); err != nil || !st.IsDir() {
		dir = filepath.Dir(specPath)
	}
	return filepath.Join(dir, ".fabctl")
}

// planOptions loads the applied record from dir (for drift) and returns
// plan options with the credentials resolver and fabctl version filled
// in; the caller sets parallelism, targets, insecure and progress.
// Credentials stay references: drivers resolve the secrets they point to
// when they connect, never the plan.
func (lf *loadedFabric) planOptions(dir string) (plan.Options, error) {
	lf.StateDir = dir
	a, err := plan.LoadApplied(dir, lf.Fabric.Name)
	if err != nil {
		return plan.Options{}, err
	}
	lf.Applied = a
	s := lf.Spec
	return plan.Options{
		Applied:       a.Devices,
		Credentials:   s.CredentialsByName,
		FabctlVersion: readBuildInfo().Version,
	}, nil
}

// writeSavedPlan saves p to path as plan -out does: it creates the
// state directory the plan records (apply refuses a plan whose state
// directory, and so its lock, cannot be found), and signs the plan with
// keys' signing key when there is one.
func (lf *loadedFabric) writeSavedPlan(p *plan.Plan, path string, keys plan.Keys) error {
	if err := os.MkdirAll(lf.StateDir, 0o700); err != nil {
		return err
	}
	return lf.savedPlan(p).WriteSigned(path, keys)
}

// savedPlan wraps a plan with what it was computed from, for -out: the
// spec path and state directory are recorded absolute, so apply finds
// the fabric's lock and applied record wherever it runs from.
func (lf *loadedFabric) savedPlan(p *plan.Plan) *plan.SavedPlan {
	specPath, stateDir := lf.Path, lf.StateDir
	if a, err := filepath.Abs(specPath); err == nil {
		specPath = a
	}
	if a, err := filepath.Abs(stateDir); err == nil && stateDir != "" {
		stateDir = a
	}
	// The directory the spec files were read from: the spec path, or the
	// directory of a spec file given by name.
	specDir := specPath
	if st, err := os.Stat(specPath); err != nil || !st.IsDir() {
		specDir = filepath.Dir(specPath)
	}
	return &plan.SavedPlan{
		FabctlVersion: p.FabctlVersion,
		SpecPath:      specPath,
		SpecDir:       specDir,
		StateDir:      stateDir,
		Sources:       lf.Sources,
		Vars:          lf.Vars,
		VarFiles:      lf.VarFiles,
		Env:           lf.Env,
		Plan:          p,
	}
}
