package cli

import (
	"github.com/spf13/cobra"
)

// Command groups in `fabctl --help`.
const (
	groupFabric = "fabric"
	groupTool   = "tool"
)

// subcommands is the one list of fabctl's commands, in help order. A new
// command (plan, apply, show, render, testbed) is one line here; there is
// no registration by side effect.
func subcommands(f *Factory) []*cobra.Command {
	return []*cobra.Command{
		inGroup(groupFabric, NewCmdValidate(f, nil)),
		// plan, show, render: plan commands (plan_cmd.go)
		inGroup(groupFabric, NewCmdPlan(f, nil)),
		inGroup(groupFabric, NewCmdDrift(f, nil)),
		inGroup(groupFabric, NewCmdShow(f, nil)),
		inGroup(groupFabric, NewCmdRender(f, nil)),
		// apply, force-unlock: apply commands (apply_cmd.go)
		inGroup(groupFabric, NewCmdApply(f, nil)),
		inGroup(groupFabric, NewCmdForceUnlock(f, nil)),
		inGroup(groupTool, NewCmdTestbed(f)),
		inGroup(groupTool, NewCmdAgent(f, nil)),
		inGroup(groupTool, NewCmdKube(f)),        // kube_cmd.go
		inGroup(groupFabric, NewCmdTelemetry(f)), // telemetry_cmd.go
		inGroup(groupFabric, NewCmdTopology(f, nil)),
		inGroup(groupFabric, NewCmdImport(f, nil)), // import_cmd.go
		inGroup(groupTool, NewCmdVerbs(f)),
		inGroup(groupTool, NewCmdFmt(f, nil)),
		inGroup(groupTool, NewCmdVersion(f, nil)),
		inGroup(groupTool, NewCmdCompletion(f, nil)),
		NewCmdIBMAD(f, nil), // hidden: run on the subnet manager host
	}
}

func inGroup(id string, c *cobra.Command) *cobra.Command {
	c.GroupID = id
	return c
}

// NewCmdRoot returns the fabctl command with every subcommand.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := newRootCommand(f)
	root.AddCommand(subcommands(f)...)
	return root
}

// newRootCommand returns the bare root: global flags, error handling and
// streams, no subcommands. Tests add the one command under test to it.
func newRootCommand(f *Factory) *cobra.Command {
	b := readBuildInfo()
	root := &cobra.Command{
		Use:   "fabctl <command> [flags]",
		Short: "Configure and validate RDMA fabrics from one declarative spec",
		Long: `fabctl configures and validates lossless RDMA fabrics (RoCEv2, RoCEv1, iWARP,
InfiniBand) from one declarative HCL spec: switches, hosts, NICs, links and
traffic classes. The spec is checked statically, planned against the live
state of the devices, applied, and validated by reading the configuration
back and running RDMA traffic.`,
		Example: `  fabctl validate --static fabric/
  fabctl fmt -check -recursive .
  fabctl validate --static --json spec.fab.hcl | jq .diagnostics`,
		Version:                    b.Version,
		SilenceUsage:               true,
		SilenceErrors:              true,
		SuggestionsMinimumDistance: 2,
		// cobra runs only the nearest PersistentPreRunE: a subcommand that
		// defines its own must call applyGlobalFlags too.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			applyGlobalFlags(f)
			return nil
		},
	}
	root.SetVersionTemplate(b.String() + "\n")
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetFlagErrorFunc(flagErrorFunc)
	root.CompletionOptions.DisableDefaultCmd = true // ours is in subcommands
	root.AddGroup(
		&cobra.Group{ID: groupFabric, Title: "Fabric commands:"},
		&cobra.Group{ID: groupTool, Title: "Other commands:"},
	)
	root.SetHelpCommandGroupID(groupTool)

	// Declared here so cobra does not claim -v for it.
	root.Flags().Bool("version", false, "Show the fabctl version")
	pf := root.PersistentFlags()
	pf.BoolVar(&f.Global.JSON, "json", false, "Write machine-readable JSON to stdout (see docs/json-output.md)")
	pf.BoolVar(&f.Global.NoColor, "no-color", false, "Disable colored output (also NO_COLOR=1; color is off when stdout is not a terminal)")
	pf.BoolVar(&f.Global.Debug, "debug", false, "Log debug information and device session transcripts (secrets redacted) to stderr")
	pf.StringVar(&f.Global.DebugFile, "debug-file", "", "Append device session transcripts (secrets redacted) to this file instead of stderr")
	return root
}

// applyGlobalFlags applies the global flags and environment to the streams
// once flags are parsed.
func applyGlobalFlags(f *Factory) {
	// https://no-color.org: any non-empty NO_COLOR disables color.
	if f.Global.NoColor || f.Getenv("NO_COLOR") != "" {
		f.IOStreams.SetNoColor(true)
	}
}
