package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

// ValidateOptions are the inputs of fabctl validate.
type ValidateOptions struct {
	IO     *IOStreams
	Env    []string
	JSON   bool
	Debugf func(format string, args ...any)

	Path     string   // spec file or directory
	Static   bool     // --static: static stages only
	Strict   bool     // --strict: warnings fail
	Vars     []string // --var name=value
	VarFiles []string // --var-file FILE
	JUnit    string   // --junit FILE

	// Lint runs the lint rules over a loaded spec (default lint.Run; tests
	// pin a fixed rule set so goldens do not move with the rule table).
	Lint func(*spec.Spec) lint.Result
}

// NewCmdValidate returns `fabctl validate`.
func NewCmdValidate(f *Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "validate [SPEC]",
		Short: "Check a fabric spec",
		Long: `Check a fabric spec: a *.fab.hcl file, or a directory whose *.fab.hcl and
*.fab.hcl.json files form one spec (default: the current directory).

The static stage loads the spec (syntax, schema, units, references,
variables) and runs the cross-layer lint rules (MTU, transport, QoS, buffer,
ECN, safety, host; see docs/rules.md). It needs no access to any device.

The read-back stage (compare the devices' running configuration with the
spec) and the traffic stage (RDMA traffic between hosts) are not in this
build yet; without --static, validate runs the static stage and says so.

Exit status: 0 when the spec is valid, 1 when it has errors (or warnings
with --strict), 64 on a usage error.`,
		Example: `  fabctl validate --static
  fabctl validate --static --strict fabric/
  fabctl validate --var leaf_count=8 --var-file prod.fabvars fabric/
  fabctl validate --json spec.fab.hcl`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"hcl"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			for _, v := range opts.Vars {
				if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
					return FlagErrorf("invalid --var %q: want name=value, e.g. --var leaf_count=8", v)
				}
			}
			opts.JSON = f.Global.JSON
			opts.Env = f.Env
			opts.Debugf = f.Debugf
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Static, "static", false, "Run only the static stage (load and lint); needs no device access")
	fl.BoolVar(&opts.Strict, "strict", false, "Fail (exit 1) on warnings too")
	fl.StringVar(&opts.JUnit, "junit", "", "Also write the findings as JUnit XML to `file` (one test case per rule, for CI test reports)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` of name = value lines (repeatable)")
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	return cmd
}

// validateResult is what a validate run found; the views render it.
type validateResult struct {
	Path        string
	Static      bool
	Strict      bool
	Stages      []string // stages that ran, in order
	Diagnostics hcl.Diagnostics
	Files       map[string]*hcl.File
	Errors      int
	Warnings    int
	Suppressed  int
	Summary     *specSummary // nil when the spec did not load
	Valid       bool
}

// specSummary counts a loaded spec's objects.
type specSummary struct {
	Fabric   string `json:"fabric"`
	Switches int    `json:"switches"`
	Hosts    int    `json:"hosts"`
	NICs     int    `json:"nics"`
	Links    int    `json:"links"`
	Classes  int    `json:"classes"`
}

func summarize(s *spec.Spec) *specSummary {
	sum := &specSummary{Fabric: s.Fabric.Name, Switches: len(s.Switches), Hosts: len(s.Hosts), Links: len(s.Links), Classes: len(s.Classes)}
	for _, h := range s.Hosts {
		sum.NICs += len(h.NICs)
	}
	return sum
}

// StageStatic is the only validate stage this build has.
const StageStatic = "static"

func validateRun(opts *ValidateOptions) error {
	debugf := opts.Debugf
	if debugf == nil {
		debugf = func(string, ...any) {}
	}
	start := time.Now()
	// spec.Load may reorder the environment slice it is given; pass a copy.
	env := append([]string(nil), opts.Env...)
	s, diags := spec.Load(opts.Path, spec.LoadOptions{Vars: opts.Vars, VarFiles: opts.VarFiles, Env: env})
	res := &validateResult{Path: opts.Path, Static: opts.Static, Strict: opts.Strict, Stages: []string{StageStatic}}
	if s != nil {
		res.Files = s.Files
		debugf("loaded %d file(s) from %s in %s", len(s.Files), opts.Path, time.Since(start).Round(time.Microsecond))
	}
	if s != nil && s.Fabric != nil && !diags.HasErrors() {
		start = time.Now()
		runLint := opts.Lint
		if runLint == nil {
			runLint = lint.Run
		}
		lr := runLint(s)
		debugf("linted in %s: %d finding(s), %d suppressed", time.Since(start).Round(time.Microsecond), len(lr.Diagnostics), lr.Suppressed)
		diags = append(diags, lr.Diagnostics...)
		res.Suppressed = lr.Suppressed
		res.Summary = summarize(s)
	}
	spec.SortDiagnostics(diags)
	res.Diagnostics = diags
	res.Files = redactSecrets(diags, res.Files)
	for _, d := range diags {
		switch d.Severity {
		case hcl.DiagError:
			res.Errors++
		case hcl.DiagWarning:
			res.Warnings++
		}
	}
	res.Valid = res.Errors == 0 && !(opts.Strict && res.Warnings > 0)

	var view ValidateView = &ValidateHuman{IO: opts.IO}
	if opts.JSON {
		view = &ValidateJSON{IO: opts.IO}
	}
	if err := view.Result(res); err != nil {
		return err
	}
	if opts.JUnit != "" {
		if err := writeJUnit(opts.JUnit, res); err != nil {
			return fmt.Errorf("write --junit %s: %w", opts.JUnit, err)
		}
	}
	if !res.Valid {
		return exitWith(ExitError)
	}
	return nil
}
