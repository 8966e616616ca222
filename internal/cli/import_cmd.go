package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// ImportOptions are the inputs of fabctl import.
type ImportOptions struct {
	IO      *IOStreams
	Factory *Factory

	Path        string   // the inventory: spec file or directory
	Out         string   // -o FILE ("": the spec on stdout)
	Parallelism int      // --parallelism
	Targets     []string // --target
	Excludes    []string // --exclude
	Vars        []string // --var
	VarFiles    []string // --var-file
	Insecure    bool     // --insecure
	JSON        bool
}

// NewCmdImport returns `fabctl import`.
func NewCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "import [INVENTORY]",
		Short: "Write the spec of a running fabric: plan of it shows no changes",
		Long: `Write the spec of a fabric that already runs, so that the first plan shows
only the changes you mean to make.

The inventory (a file or directory, default ".") is a spec that names the
devices, how to reach them (addresses, credentials as env()/file()
references) and their links; it may already hold other blocks. import reads
every device through its driver, as plan does (--parallelism at a time),
and writes the inventory back with what it found: the fabric's classes
(priority, DSCP set, lossless, ETS share, ECN thresholds), trust, MTU,
rdma_tos and PFC watchdog, each chosen by majority across the devices, and
every device's, port's or NIC's deviation as the spec's own overrides
(dscp_map, pfc, mtu, trust, pfc_watchdog, pause, ...). On InfiniBand it
reads the subnet manager's partitions.conf, QoS policy and opensm.conf into
the infiniband block (partitions with their members named by the
inventory's NIC GUIDs, sl2vl, VL arbitration, max_vls). It then checks the
written spec the way plan will diff it; a running setting the spec
language cannot say (a per-switch ECN profile, a setting of a device
declared with for_each) is listed, line by line, and left out rather than
invented: written into its block's unmanaged map with the reason, so the
plan of the written spec leaves it as the device runs it. Credentials stay the inventory's references: no secret is read
into the spec.

-o FILE writes the spec there (a new file: an existing one is not
overwritten; not into the inventory's directory, whose files it would
duplicate); without -o it goes to stdout and the report to stderr. --json
prints the report as a JSON document (docs/json-output.md), with the spec
in it when there is no -o. Run fabctl validate --static on the result:
the overrides import wrote for a minority of devices are findings there.

Exit status: 0 when the spec was written; 1 when the inventory does not
load, a device could not be read (the spec is still written, with the
inventory's blocks for it), or the output cannot be written; 64 on a usage
error. See docs/import.md.`,
		Example: `  fabctl import inventory.fab.hcl -o fabric.fab.hcl
  fabctl import --json -o fabric/pod.fab.hcl inventory/ > import-report.json`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			opts.JSON = f.Global.JSON
			if _, err := (arguments.Plan{Parallelism: opts.Parallelism, Targets: opts.Targets, Excludes: opts.Excludes,
				Vars: opts.Vars, Format: formatHuman, JSON: opts.JSON}).Check(); err != nil {
				return usageError(err)
			}
			if err := checkImportOut(opts.Path, opts.Out); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "out", "o", "", "Write the spec to `file` (a new file; default: stdout)")
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Read at most `n` devices at a time")
	fl.StringArrayVar(&opts.Targets, "target", nil, "Read only devices matching `glob` (name, switch.NAME, role:NAME; repeatable): the others keep the inventory's blocks")
	fl.StringArrayVar(&opts.Excludes, "exclude", nil, "Leave out devices matching `glob` (same forms as --target; repeatable)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` of name = value lines (repeatable)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (lab use only)")
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	_ = cmd.MarkFlagFilename("out", "hcl")
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	return cmd
}

// checkImportOut refuses an output that would be loaded together with
// the inventory (a spec file directly in the inventory's directory) or
// that is the inventory itself.
func checkImportOut(inv, out string) error {
	if out == "" {
		return nil
	}
	absOut, err1 := filepath.Abs(out)
	absInv, err2 := filepath.Abs(inv)
	if err1 != nil || err2 != nil {
		return nil
	}
	if absOut == absInv {
		return FlagErrorf("-o %s is the inventory: write the imported spec to a new file", out)
	}
	if st, err := os.Stat(absInv); err == nil && st.IsDir() && filepath.Dir(absOut) == absInv &&
		(strings.HasSuffix(absOut, ".fab.hcl") || strings.HasSuffix(absOut, ".fab.hcl.json")) {
		return FlagErrorf("-o %s is in the inventory's directory %s: a spec there would be loaded with the inventory's files and declare every device twice; write it to another directory", out, inv)
	}
	return nil
}

func importRun(ctx context.Context, opts *ImportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f := opts.Factory
	ctx, closeLog, err := f.sessionLogContext(ctx)
	if err != nil {
		return err
	}
	defer closeLog()
	format := formatHuman
	if opts.JSON {
		format = formatJSON
	}
	lf, files, load, err := loadInventory(f, opts.Path, opts.Vars, opts.VarFiles)
	if errors.Is(err, errSpecInvalid) {
		return reportSpecErrors(opts.IO, lf, format)
	}
	if err != nil {
		return err
	}
	if err := checkSelection(lf.Fabric, opts.Targets, opts.Excludes); err != nil {
		return err
	}
	if err := checkSecrets(f, lf.Spec, lf.Fabric, opts.Targets, opts.Excludes); err != nil {
		return err
	}
	if opts.Out != "" {
		// Refused now, before any device is read, rather than after.
		if _, err := os.Lstat(opts.Out); err == nil {
			return fmt.Errorf("%s exists: import writes a new file (remove it or name another)", opts.Out)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-o %s: %w", opts.Out, err)
		}
	}
	if opts.Insecure {
		fmt.Fprintln(opts.IO.ErrOut, "Warning: --insecure: SSH host keys and TLS certificates are not verified.")
	}
	popts := plan.Options{Parallelism: opts.Parallelism, Targets: opts.Targets, Excludes: opts.Excludes,
		Insecure: opts.Insecure, Credentials: lf.Spec.CredentialsByName}
	prog := view.NewPlanProgress(opts.IO, f.Now)
	popts.Started, popts.Progress = prog.Started, prog.Done
	prog.Start(countSelected(lf.Fabric, opts.Targets, opts.Excludes))
	obs := plan.Observe(ctx, lf.Fabric, builtin.Registry(), popts)
	prog.Stop(len(obs))
	observed := make(map[string]*importer.Observed, len(obs))
	for _, o := range obs {
		observed[o.Address] = &importer.Observed{Live: o.Live, Err: o.Err, Fields: o.Fields,
			Unexpressible: o.Unexpressible, Read: o.Read}
	}
	for _, d := range plan.Units(lf.Fabric) {
		if _, ok := observed[d.Device.Addr()]; !ok && d.Device.Kind != intent.KindSM {
			observed[d.Device.Addr()] = &importer.Observed{Err: "not selected (--target/--exclude)"}
		}
	}
	name := opts.Out
	if name == "" {
		name = filepath.Join(inventoryDir(opts.Path), "imported.fab.hcl")
	}
	res, err := importer.Import(files, observed, importer.Options{Load: load, Name: name, Parallelism: opts.Parallelism})
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := writeNewFile(opts.Out, res.HCL); err != nil {
			return err
		}
		if filepath.Dir(mustAbs(opts.Out)) != inventoryDir(opts.Path) {
			res.Report.Notes = append(res.Report.Notes, "relative paths in the spec (known_hosts, ca_file, file() secrets) now resolve against "+filepath.Dir(opts.Out)+", the written file's directory")
		}
	}
	v := view.ImportResult{Fabric: lf.Fabric.Name, Out: opts.Out, HCL: res.HCL, Report: &res.Report}
	if opts.JSON {
		if err := view.WriteImportJSON(opts.IO, v); err != nil {
			return err
		}
	} else {
		if err := view.WriteImportHuman(opts.IO, v); err != nil {
			return err
		}
	}
	if len(res.Report.Unread) > 0 {
		return exitWith(ExitError)
	}
	return nil
}

// loadInventory loads the inventory without lint (an inventory is a spec
// still being written: lint runs on import's result), and returns the
// files and a loader for import's candidate specs with the same
// variables and environment.
func loadInventory(f *Factory, path string, vars, varFiles []string) (*loadedFabric, []spec.File, func([]spec.File) (*spec.Spec, hcl.Diagnostics), error) {
	lf := &loadedFabric{Path: path}
	if err := arguments.Vars(vars); err != nil {
		return nil, nil, nil, usageError(err)
	}
	var vf []spec.File
	for _, p := range varFiles {
		b, err := safefile.ReadFile(p, safefile.VarFile)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("read --var-file: %w", err)
		}
		vf = append(vf, spec.File{Name: p, Data: b})
	}
	files, diags := spec.ReadFiles(path)
	if diags.HasErrors() {
		lf.finish(nil, diags)
		return lf, nil, nil, errSpecInvalid
	}
	load := func(fs []spec.File) (*spec.Spec, hcl.Diagnostics) {
		env := append([]string(nil), f.Env...)
		return spec.LoadFiles(fs, spec.LoadOptions{Vars: vars, VarFileData: vf, Env: env, Platforms: builtin.SpecPlatforms()})
	}
	s, diags := load(files)
	lf.Spec = s
	var hf map[string]*hcl.File
	if s != nil {
		hf = s.Files
	}
	lf.finish(hf, diags)
	if lf.Errors > 0 {
		return lf, nil, nil, errSpecInvalid
	}
	lf.Fabric = intent.Compile(s)
	return lf, files, load, nil
}

// inventoryDir is the directory of the inventory's files.
func inventoryDir(path string) string {
	abs := mustAbs(path)
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return abs
	}
	return filepath.Dir(abs)
}

func mustAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// writeNewFile writes data to a file that must not exist yet (created
// exclusively, never through a planted link), removed again when the
// write fails.
func writeNewFile(path string, data []byte) error {
	fh, err := safefile.CreateExclusive(path, 0o644, safefile.Spec)
	if err != nil {
		return err
	}
	_, werr := fh.Write(data)
	if werr == nil {
		werr = fh.Sync()
	}
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
