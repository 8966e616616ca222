package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/plan"
)

// Output formats of plan and show.
const (
	formatHuman    = arguments.FormatHuman
	formatJSON     = arguments.FormatJSON
	formatMarkdown = arguments.FormatMarkdown
)

// PlanOptions are the inputs of fabctl plan.
type PlanOptions struct {
	IO      *IOStreams
	Factory *Factory

	Path             string        // spec file or directory
	Parallelism      int           // --parallelism
	LinkSettle       time.Duration // --link-settle
	Targets          []string      // --target
	Excludes         []string      // --exclude
	Verbose          bool          // --verbose
	ShowPayload      bool          // --show-payload
	DetailedExitcode bool          // --detailed-exitcode
	Out              string        // -out FILE
	// SigningKey is an ed25519 private key file -out signs the plan with
	// (also FABCTL_PLAN_SIGNING_KEY; FABCTL_PLAN_KEY signs with HMAC).
	SigningKey    string
	StateDir      string   // --state-dir
	Vars          []string // --var
	VarFiles      []string // --var-file
	Insecure      bool     // --insecure
	Format        string   // human | json | markdown (--json: json)
	EngineOptions          // --engine kubernetes (engine.go)
	// CheckOnDevice sends each changed switch's steps through its own
	// non-committing check, under the fabric lock (--check-on-device).
	CheckOnDevice bool
	LockTimeout   time.Duration // --lock-timeout, with --check-on-device
	JUnit         string        // --junit FILE

	driftCheck bool // fabctl drift: exit 2 on drift as well as on changes
}

// NewCmdPlan returns `fabctl plan`.
func NewCmdPlan(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "plan [SPEC]",
		Short: "Show what applying the spec would change on each device",
		Long: `Show what applying the spec would change on each device.

plan loads and lints the spec (a spec with lint errors is not planned),
compiles it to the desired state of every switch and host, reads each
device's live state through its driver (--parallelism at a time), and
shows the difference: per device, settings to add (+), change (~) and
remove (-); disruptive changes (!) that interrupt traffic, with the reason;
settings changed outside fabctl since its last apply (drift); and devices
that could not be read. It changes nothing.

The default view is compact (per device the counts and a few grouped
lines; every disruptive change is always listed); --verbose lists every
setting, --show-payload the driver's native steps. --format json and
--format markdown (for a pull-request comment) are documented in
docs/plan.md and docs/json-output.md.

-out FILE saves the plan, with the spec sources and variables it was made
from, for fabctl show and fabctl apply. The file is sealed: an edited plan
is refused.

Exit status: 0 when the plan succeeded (with or without changes), 1 on an
error (spec errors, a device that could not be read), 6 when the fabric does
not match the spec in a way no change fixes (an InfiniBand or Ethernet
cable down or miswired, a link trained narrower or slower, an Ethernet
link end taking errors, an undeclared node, a port that could not be
read: see Findings), 64 on a usage error. With
--detailed-exitcode: 0 no changes, 1 error, 2 changes, 6 as above.

--check-on-device asks every switch with changes whether it takes them,
through the platform's own non-committing path (EOS: a configuration
session that is aborted; SONiC: GCU's apply-patch --dry-run; docs/plan.md
lists each platform's), under the
fabric lock (exit 4 when another run holds it; --lock-timeout waits for
it); nothing is committed and
each device is read back as it was. A device that refuses makes plan exit
7 (before 6 and 2) and the plan is not saved; a check that could not run
to its end exits 1. Platforms without such a path say "not checked on
device" with the reason. --junit FILE writes a JUnit XML case per device.`,
		Example: `  fabctl plan fabric/
  fabctl plan --verbose --show-payload --target 'switch.leaf*' fabric/
  fabctl plan -out plan.fab fabric/ && fabctl apply plan.fab
  fabctl plan --detailed-exitcode --format markdown fabric/ > plan.md
  fabctl plan --check-on-device --junit plan-check.xml fabric/`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"hcl"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: opts.runE(runF),
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Read at most `n` devices at a time")
	linkSettleFlag(fl, &opts.LinkSettle)
	fl.StringArrayVar(&opts.Targets, "target", nil, "Plan only devices matching `glob`: a name (leaf*), an address (switch.leaf*) or role:NAME (repeatable; for exceptional cases)")
	fl.StringArrayVar(&opts.Excludes, "exclude", nil, "Leave out devices matching `glob` (same forms as --target; repeatable)")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "List every changed setting, tolerated values and unchanged devices")
	fl.BoolVar(&opts.ShowPayload, "show-payload", false, "Show each device's driver steps with their native payload")
	fl.BoolVar(&opts.DetailedExitcode, "detailed-exitcode", false, "Exit 0 with no changes, 1 on error, 2 with changes")
	fl.StringVar(&opts.Out, "out", "", "Save the plan to `file` (mode 0600) for fabctl show and fabctl apply")
	fl.StringVar(&opts.SigningKey, "signing-key", "", "Sign the plan saved with -out with the ed25519 private key in this `file` (also "+plan.SigningKeyEnv+"; "+plan.KeyEnv+" signs with HMAC)")
	fl.StringVar(&opts.StateDir, "state-dir", "", "Keep fabctl's local state (last-applied record, for drift) in `dir` (default: .fabctl beside the spec)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` of name = value lines (repeatable)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (lab use only)")
	// The SSH-specific spelling users of SSH tools look for; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	opts.EngineOptions.addFlags(fl)
	fl.BoolVar(&opts.CheckOnDevice, "check-on-device", false, "Ask every switch with changes whether it takes them, through its own non-committing check (under the fabric lock; nothing is committed)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", 0, "With --check-on-device: wait up to this `duration` for a lock held by another run (default: fail at once)")
	fl.StringVar(&opts.JUnit, "junit", "", "Write a JUnit XML `file`: a case per device (planned, and checked on the device with --check-on-device)")
	_ = cmd.MarkFlagFilename("junit", "xml")
	fl.StringVar(&opts.Format, "format", formatHuman, "Output `format`: human, json or markdown (--json is --format json)")
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	_ = cmd.MarkFlagFilename("out", "fab")
	_ = cmd.MarkFlagDirname("state-dir")
	_ = cmd.RegisterFlagCompletionFunc("target", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("exclude", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("format", formatCompletion)
	return cmd
}

func formatCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{formatHuman, formatJSON, formatMarkdown}, cobra.ShellCompDirectiveNoFileComp
}

// runE is plan's and drift's RunE: the arguments, then runF or planRun.
func (opts *PlanOptions) runE(runF func(*PlanOptions) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		opts.Path = "."
		if len(args) == 1 {
			opts.Path = args[0]
		}
		if err := opts.check(cmd); err != nil {
			return err
		}
		if runF != nil {
			return runF(opts)
		}
		return planRun(cmd.Context(), opts)
	}
}

// check checks the flags plan and drift share (internal/cli/arguments)
// and the engine's, and sets the output format.
func (opts *PlanOptions) check(cmd *cobra.Command) error {
	format, err := arguments.Plan{Parallelism: opts.Parallelism, Targets: opts.Targets, Excludes: opts.Excludes,
		Vars: opts.Vars, Format: opts.Format, FormatSet: cmd.Flags().Changed("format"), JSON: opts.Factory.Global.JSON}.Check()
	if err != nil {
		return usageError(err)
	}
	opts.Format = format
	if err := opts.EngineOptions.check(); err != nil {
		return err
	}
	if opts.LockTimeout < 0 {
		return FlagErrorf("--lock-timeout must not be negative")
	}
	if opts.LockTimeout > 0 && !opts.CheckOnDevice {
		return FlagErrorf("--lock-timeout waits for the fabric lock --check-on-device takes: give --check-on-device")
	}
	if opts.Engine == engineKubernetes && opts.Out != "" {
		return FlagErrorf("-out cannot be used with --engine kubernetes: apply --engine kubernetes plans from the agents' status at apply time")
	}
	return nil
}

// outputFormat reconciles --format with the global --json.
func outputFormat(f *Factory, format string, set bool) (string, error) {
	format, err := arguments.Format(format, set, f.Global.JSON)
	return format, usageError(err)
}

// usageError makes an argument check's error a usage error (exit 64,
// with the command's usage).
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return &FlagError{Err: err}
}

func planRun(ctx context.Context, opts *PlanOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f := opts.Factory
	ctx, closeLog, err := f.sessionLogContext(ctx)
	if err != nil {
		return err
	}
	defer closeLog()
	var keys plan.Keys
	if opts.Out != "" {
		// The signing key is read before any device: a bad key fails now.
		if keys, err = plan.LoadKeys(f.Getenv, opts.SigningKey, ""); err != nil {
			return err
		}
	} else if opts.SigningKey != "" {
		return FlagErrorf("--signing-key signs the plan saved with -out: give -out FILE")
	}
	lf, err := loadFabric(f, opts.Path, opts.Vars, opts.VarFiles)
	if errors.Is(err, errSpecInvalid) {
		return reportSpecErrors(opts.IO, lf, opts.Format)
	}
	if err != nil {
		return err
	}
	popts, err := lf.planOptions(stateDir(opts.Path, opts.StateDir))
	if err != nil {
		return err
	}
	popts.Parallelism = opts.Parallelism
	popts.LinkSettle = opts.LinkSettle
	popts.Targets = opts.Targets
	popts.Excludes = opts.Excludes
	popts.Insecure = opts.Insecure
	if err := checkSelection(lf.Fabric, opts.Targets, opts.Excludes); err != nil {
		return err
	}
	if err := checkSecrets(f, lf.Spec, opts.secretsFabric(lf.Fabric), opts.Targets, opts.Excludes); err != nil {
		return err
	}
	selected := countSelected(lf.Fabric, opts.Targets, opts.Excludes)
	if opts.Insecure {
		fmt.Fprintln(opts.IO.ErrOut, "Warning: --insecure: SSH host keys and TLS certificates are not verified.")
	}
	del, err := opts.EngineOptions.delivery(ctx, f, lf.Fabric.Name, kube.HostsOptions{
		Warn: func(msg string) { fmt.Fprintln(opts.IO.ErrOut, "Warning: "+msg) }})
	if err != nil {
		return err
	}
	defer del.Close()
	popts.HostDriver = del.HostDriver
	if opts.CheckOnDevice {
		unlock, err := lockForCheck(ctx, f, del.Locker, stateDir(opts.Path, opts.StateDir), lf.Fabric.Name, opts.LockTimeout)
		if err != nil {
			return err
		}
		defer unlock()
		popts.CheckOnDevice = true
	}
	prog := view.NewPlanProgress(opts.IO, f.Now)
	popts.Started, popts.Progress = prog.Started, prog.Done
	prog.Start(selected)
	p := plan.Make(ctx, lf.Spec, lf.Fabric, del.Registry, popts)
	prog.Stop(len(p.Devices))
	p.Diagnostics = lf.JSONDiagnostics()
	f.Debugf("planned %d devices: %+v", len(p.Devices), p.Counts())

	var saveErr error
	saved := false
	notCarried := !opts.driftCheck && len(p.NotCarried()) > 0
	refused := len(p.Refused()) > 0 || len(p.CheckFailed()) > 0
	if opts.Out != "" && !p.Errored() && !notCarried && !refused {
		if saveErr = lf.writeSavedPlan(p, opts.Out, keys); saveErr == nil {
			saved = true
		}
	}
	vo := planViewOptions(opts.IO, opts.Verbose, opts.ShowPayload)
	if opts.driftCheck {
		vo.Command = "drift"
	}
	if err := writePlan(opts.IO, p, opts.Format, vo); err != nil {
		return err
	}
	if saved {
		msg := fmt.Sprintf("Saved the plan to %s. To apply exactly this plan: fabctl apply %s", opts.Out, opts.Out)
		if opts.Format == formatHuman {
			fmt.Fprintf(opts.IO.Out, "\n%s\n", msg)
		} else {
			fmt.Fprintln(opts.IO.ErrOut, msg)
		}
	}
	if saveErr != nil {
		return fmt.Errorf("save the plan: %w", saveErr)
	}
	if opts.JUnit != "" {
		if err := writePlanJUnit(opts.JUnit, p, opts.Path, opts.CheckOnDevice); err != nil {
			return fmt.Errorf("write --junit: %w", err)
		}
	}
	if p.Errored() {
		return planDeviceErrors(p, opts.Out, opts.Format == formatHuman)
	}
	if notCarried {
		return planNotCarried(p, opts.Out)
	}
	if err := checkVerdicts(p, opts.Out); err != nil {
		return err
	}
	if p.Mismatched() {
		return exitWith(ExitMismatch)
	}
	if opts.DetailedExitcode && (p.HasChanges() || opts.driftCheck && p.Counts().Drifted > 0) {
		return exitWith(ExitChanges)
	}
	return nil
}

// checkSelection fails (a usage error) when --target / --exclude leave
// no device of the fabric.
func checkSelection(f *intent.Fabric, targets, excludes []string) error {
	if countSelected(f, targets, excludes) == 0 {
		return noDeviceSelected(targets, excludes)
	}
	return nil
}

// noDeviceSelected is the usage error of a selection that leaves no
// device, naming only the flags that were given.
func noDeviceSelected(targets, excludes []string) error {
	var sel []string
	if len(targets) > 0 {
		sel = append(sel, "--target "+strings.Join(targets, ","))
	}
	if len(excludes) > 0 {
		sel = append(sel, "--exclude "+strings.Join(excludes, ","))
	}
	return FlagErrorf("no device matches %s (match device names such as leaf1, addresses such as switch.leaf1, or role:NAME)", strings.Join(sel, " "))
}

// countSelected counts the devices --target / --exclude select.
func countSelected(f *intent.Fabric, targets, excludes []string) int {
	n := 0
	for _, sw := range f.Switches {
		if plan.Selected(sw.Device, targets, excludes) {
			n++
		}
	}
	for _, h := range f.Hosts {
		if plan.Selected(h.Device, targets, excludes) {
			n++
		}
	}
	for _, sm := range f.SubnetManagers {
		if plan.Selected(sm.Device, targets, excludes) {
			n++
		}
	}
	return n
}

// planNotCarried is the error a plan ends with when devices cannot carry
// the intent (the view showed them first).
func planNotCarried(p *plan.Plan, out string) error {
	nc := p.NotCarried()
	names := make([]string, len(nc))
	for i, d := range nc {
		names[i] = d.Address
	}
	msg := fmt.Sprintf("%s cannot carry the intent (%s): %s", plural(len(nc), "device", "devices"), strings.Join(names, ", "), plan.AcceptHint)
	if out != "" {
		msg += fmt.Sprintf("\nThe plan was not saved to %s.", out)
	}
	return errors.New(msg)
}

// planDeviceErrors is the error a plan with unreadable devices ends
// with. The human view has just listed each device with its error under
// "Not planned", so then the error names only how many (the audit's
// "every error twice"); the other formats' readers may not see the
// document, so their error names each device and its cause.
func planDeviceErrors(p *plan.Plan, out string, listed bool) error {
	var lines []string
	for _, d := range p.Devices {
		if d.Error != "" {
			lines = append(lines, fmt.Sprintf("  %s: %s", d.Address, d.Error))
		}
	}
	n := len(lines)
	rest := "the plan covers the other devices only"
	if n == len(p.Devices) {
		rest = "nothing was planned"
	}
	var msg string
	if listed {
		msg = fmt.Sprintf("%s could not be planned (listed above under \"Not planned\"); %s", plural(n, "device", "devices"), rest)
	} else {
		msg = fmt.Sprintf("%s could not be planned; %s:\n%s", plural(n, "device", "devices"), rest, strings.Join(lines, "\n"))
	}
	if out != "" {
		msg += fmt.Sprintf("\nThe plan was not saved to %s: fix the device or leave it out with --exclude, then plan again.", out)
	}
	return errors.New(msg)
}

// DefaultLinkSettle is how long plan, drift and validate let a port that
// should hear an LLDP neighbour take to hear one (plan.Options.LinkSettle).
// lldpd sends on a link coming up and then every tx-interval, 30 s by
// default (lldpcli(8) "configure lldp tx-interval"); EOS's `lldp timer`
// default is 30 s too. The wait ends as soon as every such port hears
// its neighbour.
const DefaultLinkSettle = 30 * time.Second

func linkSettleFlag(fl *pflag.FlagSet, d *time.Duration) {
	*d = DefaultLinkSettle
	fl.Var((*settleValue)(d), "link-settle", "Let a port that heard no LLDP neighbour `duration` to hear one before calling it silent (re-read every second; 0: judge the first read)")
}

// settleValue is --link-settle: a duration that is not negative (a usage
// error at parse time, as every flag error is, rather than a silent 0).
type settleValue time.Duration

func (v *settleValue) String() string { return time.Duration(*v).String() }
func (v *settleValue) Type() string   { return "duration" }
func (v *settleValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("a wait must not be negative (0 judges the first read)")
	}
	*v = settleValue(d)
	return nil
}
