package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdDrift returns `fabctl drift`: a read-only check for a scheduled
// job. It is plan with a narrower exit status: 0 when every device matches
// the spec, 2 when any device differs from the spec or changed outside
// fabctl since its last apply, 1 when a device could not be read.
func NewCmdDrift(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IOStreams, Factory: f, DetailedExitcode: true, driftCheck: true}
	cmd := &cobra.Command{
		Use:   "drift [SPEC]",
		Short: "Check that the live fabric still matches the spec (exit 2 when it does not)",
		Long: `Check that the live fabric still matches the spec, for a scheduled job.

drift reads every device like fabctl plan and shows the same report: the
settings that differ from the spec and the settings changed outside
fabctl since its last apply. It changes nothing.

--check-on-device also sends the repair (the changes plan would make)
through each switch's own non-committing check, as plan --check-on-device
does, under the fabric lock; nothing is committed.

Exit status: 0 every device matches the spec; 2 a device differs (or
drifted since the last apply); 7 a switch's own check refused the repair
(--check-on-device); 6 the fabric does not match the spec in a
way no change fixes (an InfiniBand or Ethernet cable down or miswired, a
link trained narrower or slower, an Ethernet link end taking errors, an
undeclared node, a port that could not be read);
1 an error (spec errors, a device that could not be read); 64 a usage
error. --detailed-exitcode is accepted (this is always drift's exit
status).`,
		Example: `  fabctl drift fabric/
  fabctl drift --format markdown fabric/ > drift.md || notify-oncall`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: opts.runE(runF),
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Parallelism, "parallelism", 16, "Read at most `n` devices at a time")
	linkSettleFlag(fl, &opts.LinkSettle)
	fl.StringArrayVar(&opts.Targets, "target", nil, "Check only devices matching `glob` (name, address or role:NAME; repeatable)")
	fl.StringArrayVar(&opts.Excludes, "exclude", nil, "Leave out devices matching `glob` (repeatable)")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "List every differing setting")
	fl.StringVar(&opts.StateDir, "state-dir", "", "fabctl's local state (last-applied record) in `dir` (default: .fabctl beside the spec)")
	fl.StringArrayVar(&opts.Vars, "var", nil, "Set a spec variable, `name=value` (repeatable)")
	fl.StringArrayVar(&opts.VarFiles, "var-file", nil, "Read spec variables from an HCL `file` (repeatable)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification (lab use only)")
	// The spelling the SSH transport's known_hosts hint names; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	opts.EngineOptions.addFlags(fl)
	fl.StringVar(&opts.Format, "format", formatHuman, "Output `format`: human, json or markdown")
	fl.BoolVar(&opts.CheckOnDevice, "check-on-device", false, "Ask every switch that differs whether it takes the repair, through its own non-committing check (under the fabric lock; nothing is committed)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", 0, "With --check-on-device: wait up to this `duration` for a lock held by another run (default: fail at once)")
	// drift's exit status is always detailed; Terraform users type the flag.
	fl.Bool("detailed-exitcode", false, "Accepted for Terraform habits: drift always exits 2 on differences, with or without it")
	_ = cmd.RegisterFlagCompletionFunc("target", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("exclude", deviceCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("format", formatCompletion)
	return cmd
}
