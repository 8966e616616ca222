package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/cli/arguments"
	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/plan"
)

// ApplyOptions are the inputs of fabctl apply.
type ApplyOptions struct {
	IO   *IOStreams
	JSON bool

	// Path is a spec (file or directory) or a saved plan file, told apart
	// by content (default: the spec in the current directory).
	Path string

	AutoApprove      bool
	Parallelism      int
	OnFailure        string
	ConfirmTimeout   time.Duration
	Targets          []string
	Excludes         []string
	StateDir         string
	Journal          string
	LockTimeout      time.Duration
	CheckOnDevice    bool // --check-on-device: the devices' own check before the first wave
	Vars             []string
	VarFiles         []string
	Insecure         bool
	DetailedExitcode bool
	// VerifyKey is an ed25519 public key file a saved plan must be
	// signed with (also FABCTL_PLAN_VERIFY_KEY; FABCTL_PLAN_KEY for HMAC).
	VerifyKey string
	// EngineOptions and Rollout: --engine kubernetes (engine.go).
	EngineOptions
	Rollout RolloutFlags
}

// NewCmdApply returns `fabctl apply`.
func NewCmdApply(f *Factory, runF func(*ApplyOptions) error) *cobra.Command {
	opts := &ApplyOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "apply [SPEC | PLANFILE]",
		Short: "Apply the spec (or a saved plan) to the fabric",
		Long: `Apply a fabric spec to the switches and hosts, or apply a plan saved with
fabctl plan -out.

With a spec (a *.fab.hcl file or a directory; default: the current
directory), apply plans first, shows the plan and asks for confirmation;
only 'yes' is accepted. --auto-approve skips the question; without it,
apply refuses to run when stdin is not a terminal.

With a saved plan, apply applies exactly that plan without asking: the
plan carries its own copy of the spec, so later edits on disk do not
matter. Every device is read again first; if any changed since the plan
was made, nothing is applied and apply exits 3 (stale plan).

apply takes the fabric lock (<state-dir>/<fabric>.lock) for the whole run,
applies switches and hosts in two waves (switches first when the plan
enables lossless classes or raises MTUs, hosts first when it removes them;
see docs/apply.md), devices in parallel within a wave, each as one
transaction that is read back and verified. It writes a journal of JSON
lines as it goes and ends with an applied / failed / rolled back / not
attempted table.

--check-on-device first asks every device with changes whether it takes
them, through its platform's own non-committing check (as plan
--check-on-device), before the confirmation and the first wave: a device
that refuses stops the run with nothing applied (exit 7).

Exit status: 0 success or nothing to do (with --detailed-exitcode: 0
nothing to do, 2 changes applied), 1 failure, 3 stale plan, 4 lock held,
7 refused by a device's own check (--check-on-device), 64 usage error.`,
		Example: `  fabctl apply                                  # plan, show, ask, apply
  fabctl plan -out plan.fab fabric/ && fabctl apply plan.fab
  fabctl apply --auto-approve --on-failure=rollback fabric/
  fabctl apply --target 'role:leaf' --confirm-timeout 5m fabric/
  fabctl apply --json --auto-approve fabric/ | jq .counts`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "."
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if err := arguments.Parallelism(opts.Parallelism); err != nil {
				return usageError(err)
			}
			if _, err := apply.ParsePolicy(opts.OnFailure); err != nil {
				return &FlagError{Err: err}
			}
			if opts.ConfirmTimeout < 0 || opts.LockTimeout < 0 {
				return FlagErrorf("--confirm-timeout and --lock-timeout must not be negative")
			}
			if err := arguments.Selection(opts.Targets, opts.Excludes); err != nil {
				return usageError(err)
			}
			if err := arguments.Vars(opts.Vars); err != nil {
				return usageError(err)
			}
			if err := opts.EngineOptions.check(); err != nil {
				return err
			}
			if opts.Engine == engineKubernetes {
				if err := opts.Rollout.check(); err != nil {
					return err
				}
			}
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return applyRun(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.AutoApprove, "auto-approve", false, "Apply without asking for confirmation (for pipelines)")
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Devices read and applied at once (within a wave)")
	fl.StringVar(&opts.OnFailure, "on-failure", string(apply.Stop), "When a device fails (`action`): stop (start no new device), continue, or rollback (stop, then roll back every device applied in this run)")
	fl.DurationVar(&opts.ConfirmTimeout, "confirm-timeout", 0, "Commit with an auto-revert timer of this `duration` where the platform supports it; confirm after read-back verification")
	fl.StringArrayVar(&opts.Targets, "target", nil, "Apply only devices matching this `glob` (name, switch.leaf*, role:spine); repeatable; not with a saved plan")
	fl.StringArrayVar(&opts.Excludes, "exclude", nil, "Leave out devices matching this `glob`; repeatable; not with a saved plan")
	fl.StringVar(&opts.StateDir, "state-dir", "", "Directory of the lock, applied record and journals (default: .fabctl beside the spec)")
	fl.StringVar(&opts.Journal, "journal", "", "Write the journal to this `file` (default: <state-dir>/journal/<fabric>-<run-id>.jsonl)")
	fl.BoolVar(&opts.CheckOnDevice, "check-on-device", false, "Before the first wave, ask every device with changes whether it takes them through its own non-committing check; a refusal applies nothing (exit 7)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", 0, "Wait up to this `duration` for a lock held by another run (default: fail at once)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable; not with a saved plan)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` (repeatable; not with a saved plan)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (labs only)")
	// The SSH-specific spelling users of SSH tools look for; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	fl.BoolVar(&opts.DetailedExitcode, "detailed-exitcode", false, "Exit 2 when changes were applied successfully, 0 when there was nothing to do")
	fl.StringVar(&opts.VerifyKey, "verify-key", "", "Apply a saved plan only when it is signed with the ed25519 key in this public key `file` (also "+plan.VerifyKeyEnv+"; "+plan.KeyEnv+" for HMAC)")
	opts.EngineOptions.addFlags(fl)
	opts.Rollout.addFlags(fl)
	_ = cmd.MarkFlagFilename("var-file", "fabvars", "hcl")
	_ = cmd.MarkFlagFilename("journal", "jsonl")
	_ = cmd.RegisterFlagCompletionFunc("target", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("exclude", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("on-failure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"stop", "continue", "rollback"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// applyStatus values (the JSON document's "status"): the run's
// (apply.RunStatus), and invalid for a spec with errors.
const (
	applyStatusApplied     = apply.RunApplied
	applyStatusNoChanges   = apply.RunNoChanges
	applyStatusFailed      = apply.RunFailed
	applyStatusStale       = apply.RunStale
	applyStatusLocked      = apply.RunLocked
	applyStatusRefused     = apply.RunRefused
	applyStatusCancelled   = apply.RunCancelled
	applyStatusInterrupted = apply.RunInterrupted
	applyStatusError       = apply.RunError
	applyStatusInvalid     = view.ApplyStatusInvalid // the spec has errors
)

// applyOutcome is what an apply run did (view.ApplyOutcome).
type applyOutcome = view.ApplyOutcome

// stdinIsTTY reports whether stdin is a terminal. A test stream says so by
// implementing IsTerminal.
func stdinIsTTY(ios *IOStreams) bool {
	if t, ok := ios.In.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	_, ok := terminalFd(ios.In)
	return ok
}

func applyRun(f *Factory, opts *ApplyOptions) error {
	clock := f.Now
	if clock == nil {
		clock = time.Now
	}
	var v view.ApplyView = view.NewApplyHuman(opts.IO, clock)
	if opts.JSON {
		v = view.NewApplyJSON(opts.IO, clock)
	}
	ctx, release := interruptContext(v.Interrupted)
	defer release()
	ctx, closeLog, err := f.sessionLogContext(ctx)
	if err != nil {
		return err
	}
	defer closeLog()
	out := &applyOutcome{}
	code := applyMain(ctx, f, opts, v, out)
	if code == ExitUsage {
		return out.Err // printed with the usage hint, no document
	}
	if err := v.Result(out); err != nil {
		return err
	}
	return exitWith(code)
}

// applyLoad checks the flags against the input (a spec or a saved plan)
// and loads the spec: the plan's own copy for a saved plan. When it
// cannot, it fills out and returns a nil fabric and the exit code.
func applyLoad(f *Factory, opts *ApplyOptions, out *applyOutcome) (*plan.SavedPlan, *loadedFabric, ExitCode) {
	fail := func(status apply.RunStatus, err error, code ExitCode) (*plan.SavedPlan, *loadedFabric, ExitCode) {
		out.Status, out.Err = status, err
		return nil, nil, code
	}
	// A saved plan is checked before anything it says is used: its seal,
	// its signature when a verification key is configured, and that its
	// embedded spec hashes to its spec_hash (plan.Sniff).
	keys, err := plan.LoadKeys(f.Getenv, "", opts.VerifyKey)
	if err != nil {
		return fail(applyStatusError, err, ExitError)
	}
	sp, err := plan.Sniff(opts.Path, keys)
	if err != nil {
		return fail(applyStatusError, err, ExitError)
	}
	if sp == nil && opts.VerifyKey != "" {
		return fail(applyStatusError, FlagErrorf("--verify-key checks a saved plan; %s is a spec", opts.Path), ExitUsage)
	}
	if sp != nil {
		out.PlanFile = opts.Path
		for flag, set := range map[string]bool{"--target": len(opts.Targets) > 0, "--exclude": len(opts.Excludes) > 0,
			"--var": len(opts.Vars) > 0, "--var-file": len(opts.VarFiles) > 0} {
			if set {
				return fail(applyStatusError, FlagErrorf("%s cannot be used with a saved plan: the plan fixes the devices and variables; run fabctl plan again with %s", flag, flag), ExitUsage)
			}
		}
	} else if !opts.AutoApprove {
		switch {
		case opts.JSON:
			return fail(applyStatusError, errors.New("--json needs --auto-approve (or a saved plan): fabctl cannot ask for confirmation while writing JSON"), ExitError)
		case !stdinIsTTY(opts.IO):
			return fail(applyStatusError, errors.New("fabctl apply asks for confirmation, but stdin is not a terminal: review the plan and pass --auto-approve, or save a plan (fabctl plan -out plan.fab) and apply it (fabctl apply plan.fab)"), ExitError)
		}
	}

	var lf *loadedFabric
	if sp != nil {
		lf, err = loadSavedFabric(f, sp)
	} else {
		lf, err = loadFabric(f, opts.Path, opts.Vars, opts.VarFiles)
	}
	out.Loaded = lf
	var fe *FlagError
	switch {
	case errors.Is(err, errSpecInvalid):
		return fail(applyStatusInvalid, fmt.Errorf("the spec has %s", plural(lf.Errors, "error", "errors")), ExitError)
	case errors.As(err, &fe):
		return fail(applyStatusError, err, ExitUsage)
	case err != nil:
		return fail(applyStatusError, err, ExitError)
	}
	return sp, lf, ExitOK
}

// applyMain checks the flags against the input, loads the spec, runs
// apply.RunFabric with the view's hooks and fills out; it returns the
// exit code.
func applyMain(ctx context.Context, f *Factory, opts *ApplyOptions, v view.ApplyView, out *applyOutcome) ExitCode {
	fail := func(status apply.RunStatus, err error) ExitCode {
		out.Status, out.Err = status, err
		return ExitError
	}
	usage := func(err error) ExitCode {
		out.Status, out.Err = applyStatusError, err
		return ExitUsage
	}
	sp, lf, code := applyLoad(f, opts, out)
	if lf == nil {
		return code
	}
	out.Fabric = lf.Fabric.Name
	selected := 0
	for _, u := range plan.Units(lf.Fabric) {
		if plan.Selected(u.Device, opts.Targets, opts.Excludes) {
			selected++
		}
	}
	if selected == 0 {
		return usage(noDeviceSelected(opts.Targets, opts.Excludes))
	}
	if opts.Engine == engineKubernetes && sp != nil {
		return usage(FlagErrorf("--engine kubernetes applies a spec, not a saved plan: hosts are planned from their agents' status at apply time"))
	}
	if err := checkSecrets(f, lf.Spec, opts.secretsFabric(lf.Fabric), opts.Targets, opts.Excludes); err != nil {
		return fail(applyStatusError, err)
	}
	if opts.Insecure {
		v.Warn("--insecure: SSH host keys and TLS certificates are not verified.")
	}

	// The state directory: beside the spec; for a saved plan, the one of
	// the fabric it was made for, wherever apply runs from (a plan made
	// with --state-dir needs the same --state-dir from the operator).
	dir := stateDir(opts.Path, opts.StateDir)
	if sp != nil {
		var err error
		if dir, err = sp.StateDirFor(opts.StateDir); err != nil {
			return fail(applyStatusError, err)
		}
	}
	popts, err := lf.planOptions(dir)
	if err != nil {
		return fail(applyStatusError, err)
	}
	popts.Parallelism = opts.Parallelism
	popts.Targets, popts.Excludes = opts.Targets, opts.Excludes
	popts.Insecure = opts.Insecure

	prog := view.NewPlanProgress(opts.IO, f.Now)
	popts.Started, popts.Progress = prog.Started, prog.Done
	hooks := apply.Hooks{
		Planning: func() { prog.Start(selected) },
		Planned:  func(p *plan.Plan) { prog.Stop(len(p.Devices)) },
		Plan:     v.Plan,
		Warn:     v.Warn,
		Progress: v.Progress,
	}
	if !opts.AutoApprove {
		hooks.Confirm = v.Confirm
	}
	del, err := opts.EngineOptions.delivery(ctx, f, lf.Fabric.Name, kube.HostsOptions{HostTimeout: opts.Rollout.HostTimeout,
		Publishers: opts.Parallelism, Warn: v.Warn, Now: f.Now})
	if err != nil {
		return fail(applyStatusError, err)
	}
	defer del.Close()
	popts.HostDriver = del.HostDriver
	ro := apply.RunOptions{
		Spec: lf.Spec, Fabric: lf.Fabric, Saved: sp, PlanFile: out.PlanFile, Diagnostics: lf.JSONDiagnostics(),
		StateDir: dir, Plan: popts, Registry: del.Registry, Locker: del.Locker,
		Parallelism: opts.Parallelism, OnFailure: apply.Policy(opts.OnFailure), ConfirmTimeout: opts.ConfirmTimeout,
		LockTimeout: opts.LockTimeout, Journal: opts.Journal, Version: readBuildInfo().Version,
		Now: f.Now, Getenv: f.Getenv, Hooks: hooks, CheckOnDevice: opts.CheckOnDevice,
	}
	if opts.Engine == engineKubernetes {
		ro.Engine, ro.HostBatches = engineKubernetes, opts.Rollout.batches()
	}
	o, err := apply.RunFabric(ctx, ro)
	v.ProgressDone()
	out.Status, out.Err, out.Plan, out.Waves, out.Result = o.Status, err, o.Plan, o.Waves, o.Result
	out.Journal, out.Lock, out.Warnings = o.Journal, o.Lock, append(out.Warnings, o.Warnings...)
	var refused *apply.DeviceRefusedError
	if errors.As(err, &refused) {
		for _, d := range refused.Devices {
			if d.Check.Status == drivers.CheckRefused {
				return ExitRefusedByDevice
			}
		}
	}
	return applyExitCode(o.Status, opts.DetailedExitcode)
}

// applyExitCode is the exit status of a run that ended with status.
func applyExitCode(status apply.RunStatus, detailed bool) ExitCode {
	switch status {
	case apply.RunApplied:
		if detailed {
			return ExitChanges
		}
		return ExitOK
	case apply.RunNoChanges:
		return ExitOK
	case apply.RunStale:
		return ExitStalePlan
	case apply.RunLocked:
		return ExitLocked
	}
	return ExitError
}

// interruptSignals end a run the way the first Ctrl-C does: SIGINT,
// SIGTERM (a pipeline's cancel, `timeout`, systemd, a Kubernetes pod's
// end), SIGHUP (the terminal or SSH session went away) and SIGPIPE (the
// reader of stdout or stderr went away: `fabctl apply | head`). Without
// a handler SIGHUP and SIGPIPE would kill fabctl on the spot, leaving
// the lock held and the journal without run_end.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}

// sameInterrupt is how long after the first signal another one is still
// the same interrupt. A supervisor often delivers one request twice:
// GNU timeout sends its signal to the command and then to the whole
// process group (coreutils src/timeout.c, cleanup(): send_sig to the
// monitored pid, then to 0 unless --foreground), and a closing terminal's
// SIGHUP comes from the kernel and again from the shell. A person's
// second Ctrl-C comes later than that.
const sameInterrupt = 500 * time.Millisecond

// interruptContext returns a context cancelled by the first interrupt
// (interruptSignals): apply then starts no new device, lets the devices
// in flight finish their transaction (onInterrupt says so), writes the
// journal's run_end, releases the lock and ends "interrupted" (exit 1).
// One signal is one interrupt: a repeat within sameInterrupt, and every
// SIGPIPE (each write to a closed pipe raises one), is not a second
// one. A second interrupt ends the process at once (exit 130): the lock
// stays in place and the journal has no run_end, so the next run
// reports the lock of a run that is gone and force-unlock removes it.
// The returned func releases it.
func interruptContext(onInterrupt func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, interruptSignals...)
	done := make(chan struct{})
	var sawPipe atomic.Bool
	go func() {
		var first time.Time
		for first.IsZero() {
			select {
			case sig := <-ch:
				if sig == syscall.SIGPIPE && !outputGone() {
					continue // a network peer went away, not the reader of the output
				}
				sawPipe.Store(sig == syscall.SIGPIPE)
				first = time.Now()
				if onInterrupt != nil {
					onInterrupt()
				}
				cancel()
			case <-done:
				return
			}
		}
		for {
			select {
			case sig := <-ch:
				if sig == syscall.SIGPIPE {
					if outputGone() {
						sawPipe.Store(true)
					}
					continue
				}
				if time.Since(first) < sameInterrupt {
					continue
				}
				fmt.Fprintln(os.Stderr, "Second interrupt: exiting now. Devices in flight may be mid-transaction; the lock stays in place and the journal has no run_end: the next run says so, and fabctl force-unlock removes the lock once you have checked those devices.")
				exitProcess(130)
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		if sawPipe.Load() {
			// Still a closed pipe: the last messages must fail quietly,
			// not kill the run with SIGPIPE before its exit code.
			signal.Ignore(syscall.SIGPIPE)
		}
		cancel()
	}
}

// outputGone reports whether the reader of fabctl's output went away:
// stdout or stderr is a pipe or socket with no reader (poll says POLLERR
// or POLLHUP). A SIGPIPE is an interrupt only then. Once a program asks
// for SIGPIPE (signal.Notify), Go delivers it for a write to any file
// descriptor (os/signal, "SIGPIPE"), and a write to a TCP connection
// whose peer is gone raises it too: a kube-apiserver restarting, an SSH
// or gNMI server closing. The network code gets its EPIPE and retries;
// taking that SIGPIPE for an interrupt stopped apply --engine kubernetes
// mid-rollout and ended agent --kube (make e2e-kube, "apiserver restart
// mid-rollout").
var outputGone = func() bool { return fdGone(1) || fdGone(2) }

// fdGone reports a pipe or socket whose other end is closed.
func fdGone(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}

// exitProcess ends the process (a second interrupt).
var exitProcess = os.Exit
