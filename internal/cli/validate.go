package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/drivers/sm/opensm"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/ibreadback"
	"github.com/fabctl/fabctl/validate/lint"
	"github.com/fabctl/fabctl/validate/readback"
	"github.com/fabctl/fabctl/validate/traffic"
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

	// Live stages (without --static).
	SkipReadback   bool          // --skip-readback
	SkipTraffic    bool          // --skip-traffic
	Parallelism    int           // --parallelism: concurrent device reads
	LinkSettle     time.Duration // --link-settle
	Insecure       bool          // --insecure
	TrafficBackend string        // --traffic-backend: fabctl or perftest
	SelfMark       bool          // --self-mark: every validate block marks its own traffic (marking = "self")
	// Drivers is the registry read-back uses (Factory.Drivers).
	Drivers func() *drivers.Registry
	// SecretCheck resolves the secrets of every device's credentials
	// before the live stages contact any (checkSecrets; nil: none).
	SecretCheck func(*spec.Spec) error
	// Traffic runs the planned traffic tests (nil: traffic.Runner on this
	// machine; tests inject a fake).
	Traffic func(ctx context.Context, tests []*traffic.Test) *traffic.Report
	Ctx     context.Context
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

Without --static, two live stages follow a valid spec:

  read-back  every device (switches and hosts) is read through its driver
             and its running state must equal the spec's desired state
             (the same comparison as fabctl plan); a difference fails and
             lists the settings. A setting of a lossless, RDMA or CNP
             class the device cannot express fails too, unless the spec
             accepts it (accept_not_in_effect: "accepted, not in effect");
             with --strict, so does every other setting not in effect.
             A setting the spec leaves unmanaged is not compared: its
             device reads "unmanaged, not checked", never as valid.
  links      the same reads' Ethernet link truth: each end of each spec
             link must see the other end as its LLDP neighbour (the
             spec's device name, or its lldp_name), be up, run at the
             link's speed and count at most link_errors_max errors; a
             device whose driver does not read its links is said so,
             never passed.
  traffic    the spec's validate blocks run as RDMA traffic tests with the
             built-in verbs engine (RC WRITE/SEND/READ, bandwidth or
             ping-pong latency), per RDMA class, in rounds of disjoint pairs
             (ring: one round; all-pairs: a round-robin tournament). Counters
             are read before and after each test: min_bandwidth, max_p99,
             no loss on lossless classes and traffic on the class's priority
             are the pass criteria.

A pair's sides run in this process for local and netns hosts, and
through the host's agent (the same login, binary and sudo as apply) for
SSH hosts; either way the side's fabctl must be built with -tags verbs
(rdma-core) and find an RDMA device. A test that cannot run is reported
as not run, with the host's reason, never as passed.

Exit status: 0 every stage passed; 1 the spec has errors (or warnings with
--strict), a device differs from the spec, could not be read or cannot
carry the intent (a class setting not in effect), or a traffic test failed; 5 nothing failed but a declared traffic test could not
run (nothing, or not everything, was tested); 6 the only failures are
cabling or link findings no change fixes (an Ethernet link end miswired,
down, slower than the spec or taking errors; an InfiniBand cable); 64 a
usage error.`,
		Example: `  fabctl validate --static
  fabctl validate --static --strict fabric/
  fabctl validate --var leaf_count=8 --var-file prod.fabvars fabric/
  fabctl validate --static --json spec.fab.hcl
  fabctl validate --junit report.xml fabric/
  fabctl validate --skip-traffic fabric/`,
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
			if err := arguments.Vars(opts.Vars); err != nil {
				return usageError(err)
			}
			opts.JSON = f.Global.JSON
			opts.Env = f.Env
			opts.Debugf = f.Debugf
			opts.Drivers = f.Drivers
			opts.SecretCheck = func(s *spec.Spec) error { return checkSecrets(f, s, intent.Compile(s), nil, nil) }
			opts.Ctx = cmd.Context()
			if err := arguments.Parallelism(opts.Parallelism); err != nil {
				return usageError(err)
			}
			if opts.TrafficBackend != "fabctl" && opts.TrafficBackend != "perftest" {
				return FlagErrorf("invalid --traffic-backend %q: want fabctl or perftest", opts.TrafficBackend)
			}
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
	fl.BoolVar(&opts.SkipReadback, "skip-readback", false, "Do not read the devices back")
	fl.BoolVar(&opts.SkipTraffic, "skip-traffic", false, "Do not run the traffic tests")
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Read at most `n` devices at a time")
	linkSettleFlag(fl, &opts.LinkSettle)
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (lab use only)")
	// The spelling the SSH transport's known_hosts hint names; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	fl.StringVar(&opts.TrafficBackend, "traffic-backend", "fabctl", "Traffic `engine`: fabctl (built in) or perftest (ib_*_bw/lat on the hosts)")
	fl.BoolVar(&opts.SelfMark, "self-mark", false, "The traffic tests mark their packets with the class themselves instead of the hosts' rdma_cm defaults (marking = \"self\" on every validate block: isolates a switch problem from a host one)")
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
	// NotApplicable: the lint rules that had nothing to check, and why.
	NotApplicable map[string]string
	Summary       *specSummary // nil when the spec did not load
	Valid         bool

	// Live stages: nil when they did not run.
	Readback       *readback.Result
	IB             *ibreadback.Result // the InfiniBand stage (validate_ib.go)
	Links          *linktruth.Report  // the Ethernet links stage (validate_links.go)
	Traffic        *traffic.Report
	TrafficSkipped string // why the traffic stage did not run
	// Code is the exit status the run ends with.
	Code ExitCode
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

// StageStatic is the load and lint stage.
const StageStatic = "static"

func validateRun(opts *ValidateOptions) error {
	debugf := opts.Debugf
	if debugf == nil {
		debugf = func(string, ...any) {}
	}
	start := time.Now()
	// spec.Load may reorder the environment slice it is given; pass a copy.
	env := append([]string(nil), opts.Env...)
	s, diags := spec.Load(opts.Path, spec.LoadOptions{Vars: opts.Vars, VarFiles: opts.VarFiles, Env: env, Platforms: builtin.SpecPlatforms()})
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
		res.NotApplicable = lr.NotApplicable
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
	res.Code = ExitOK
	if !res.Valid {
		res.Code = ExitError
	}
	if !opts.Static && s != nil && s.Fabric != nil && res.Errors == 0 {
		validateLive(opts, s, res)
	}

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
	return exitWith(res.Code)
}

// hostsUnreached says why the traffic stage is not attempted when the
// read-back reached none of the spec's hosts (every host device failed to
// be read), or "".
func hostsUnreached(rb *readback.Result) string {
	if rb == nil {
		return ""
	}
	hosts, failed := 0, 0
	first := ""
	for _, d := range rb.Devices {
		if !strings.HasPrefix(d.Address, "host.") {
			continue
		}
		hosts++
		if d.Status == readback.Error {
			failed++
			if first == "" {
				first = d.Address + ": " + d.Error
			}
		}
	}
	if hosts == 0 || failed < hosts {
		return ""
	}
	return fmt.Sprintf("not run: the read-back reached none of the %s (%s), so no traffic test could start; fix that first (see read-back)", plural(hosts, "host", "hosts"), first)
}

// validateLive runs the read-back and traffic stages and settles the
// exit status: a failure anywhere is 1; otherwise a declared traffic test
// that did not run is 5 (not proven), never 0.
func validateLive(opts *ValidateOptions, s *spec.Spec, res *validateResult) {
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.SecretCheck != nil {
		if err := opts.SecretCheck(s); err != nil {
			// One error naming the secret, not one per device; the live
			// stages would only fail to log in everywhere.
			res.Stages = append(res.Stages, StageReadback)
			res.Readback = &readback.Result{Error: err.Error(), Devices: []readback.Device{}}
			res.TrafficSkipped = "not run: the devices' credentials cannot be resolved (see read-back)"
			if res.Code == ExitOK {
				res.Code = ExitError
			}
			return
		}
	}
	if !opts.SkipReadback && opts.Drivers != nil {
		res.Stages = append(res.Stages, StageReadback)
		rctx := ctx
		if ibreadback.Applies(s) {
			// The InfiniBand stage below reads the fabric: the subnet
			// manager's read-back compares its files only.
			rctx = opensm.WithoutFabric(ctx)
		}
		res.Readback = readback.Run(rctx, s, opts.Drivers(), readback.Options{Parallelism: opts.Parallelism, Insecure: opts.Insecure, Version: readBuildInfo().Version, Strict: opts.Strict, LinkSettle: opts.LinkSettle})
	}
	if res.Readback != nil && res.Readback.Links != nil {
		res.Stages = append(res.Stages, StageLinks)
		res.Links = res.Readback.Links
	}
	if !opts.SkipReadback && ibreadback.Applies(s) {
		res.Stages = append(res.Stages, StageInfiniBand)
		res.IB = runIBStage(ctx, s, opts)
	}
	if opts.SkipTraffic {
		res.TrafficSkipped = "--skip-traffic"
	} else if why := hostsUnreached(res.Readback); why != "" {
		// One root cause (no known_hosts, a wrong key) is the read-back's
		// failures; pairs on those hosts would only repeat it.
		res.TrafficSkipped = why
	} else {
		res.Stages = append(res.Stages, StageTraffic)
		res.Traffic, res.TrafficSkipped = runTraffic(ctx, s, opts, unreachedHosts(res.Readback))
	}
	_, fail, notRun := trafficCounts(res.Traffic)
	ibMismatchOnly := !res.IB.Failed() || res.IB.Mismatch()
	switch {
	case res.Code != ExitOK:
	case !res.Readback.Failed() && fail == 0 && ibMismatchOnly && (res.IB.Mismatch() || res.Links.Mismatch()):
		// Only InfiniBand or Ethernet link findings no change fixes:
		// plan and drift's mismatch.
		res.Code = ExitMismatch
	case res.Readback.Failed() || res.IB.Failed() || res.Links.Mismatch() || fail > 0:
		res.Code = ExitError
	case notRun > 0:
		res.Code = ExitNothingTested
	}
}
