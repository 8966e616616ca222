package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/internal/cli/view"
	"github.com/fabctl/fabctl/plan"
)

// ShowOptions are the inputs of fabctl show.
type ShowOptions struct {
	IO *IOStreams

	Path        string // the saved plan
	Verbose     bool
	ShowPayload bool
	Format      string // human | json | markdown
	Key         string // FABCTL_PLAN_KEY: checks a signed plan
}

// NewCmdShow returns `fabctl show`.
func NewCmdShow(f *Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Show a saved plan",
		Long: `Show a plan saved with fabctl plan -out, in the same views as plan.

show checks the file's seal (a plan edited after fabctl wrote it is an
error) and whether it is stale: when the spec files at the plan's spec
path, or its var files, no longer match the copies the plan embeds, or
the file is an older format, show warns and still renders the plan.
fabctl apply PLANFILE applies the plan from the spec copy it embeds and
refuses devices whose live state moved since the plan.

Exit status: 0 when the plan was shown (stale or not), 1 when the file
cannot be read, is not a plan, or was modified, 64 on a usage error.`,
		Example: `  fabctl show plan.fab
  fabctl show --verbose --show-payload plan.fab
  fabctl show --json plan.fab | jq '.disruptive_changes'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"fab"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			format, err := outputFormat(f, opts.Format, cmd.Flags().Changed("format"))
			if err != nil {
				return err
			}
			opts.Format = format
			if runF != nil {
				return runF(opts)
			}
			opts.Key = f.Getenv(plan.KeyEnv)
			return showRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "List every changed setting, tolerated values and unchanged devices")
	fl.BoolVar(&opts.ShowPayload, "show-payload", false, "Show each device's driver steps with their native payload")
	fl.StringVar(&opts.Format, "format", formatHuman, "Output `format`: human, json or markdown (--json is --format json)")
	_ = cmd.RegisterFlagCompletionFunc("format", formatCompletion)
	return cmd
}

func showRun(opts *ShowOptions) error {
	sp, err := plan.Read(opts.Path, opts.Key)
	if err != nil {
		return err
	}
	info := &view.SavedPlanInfo{Path: opts.Path, FormatVersion: sp.FormatVersion, FabctlVersion: sp.FabctlVersion,
		SpecPath: sp.SpecPath, Warnings: sp.Staleness()}
	info.Stale = len(info.Warnings) > 0
	if v := readBuildInfo().Version; sp.FabctlVersion != v {
		info.Warnings = append(info.Warnings, fmt.Sprintf("the plan was made by fabctl %s; this is fabctl %s", sp.FabctlVersion, v))
	}
	if info.Warnings == nil {
		info.Warnings = []string{}
	}
	w := opts.IO.Out
	o := planViewOptions(opts.IO, opts.Verbose, opts.ShowPayload)
	switch opts.Format {
	case formatJSON:
		doc := view.PlanJSON(sp.Plan)
		doc.SavedPlan = info
		if info.Stale {
			fmt.Fprintf(opts.IO.ErrOut, "Warning: %s is stale: %s\n", opts.Path, info.Warnings[0])
		}
		return view.WriteJSON(w, doc)
	case formatMarkdown:
		if len(info.Warnings) > 0 {
			kind := "NOTE"
			if info.Stale {
				kind = "WARNING"
			}
			fmt.Fprintf(w, "> [!%s]\n", kind)
			if info.Stale {
				fmt.Fprintf(w, "> **This saved plan is stale.** fabctl apply would apply exactly this plan, from the spec copy it embeds; run fabctl plan again to plan the current spec.\n")
			}
			for _, m := range info.Warnings {
				fmt.Fprintf(w, "> - %s\n", m)
			}
			fmt.Fprintln(w)
		}
		return view.WritePlanMarkdown(w, sp.Plan, o)
	default:
		st := o.Style
		bold, warn := st.Bold, st.Warn
		if bold == nil {
			bold = func(s string) string { return s }
			warn = bold
		}
		fmt.Fprintf(w, "%s %s: fabric %q, spec %s, made by fabctl %s.\n\n", bold("Saved plan"), opts.Path, sp.Plan.Fabric, sp.SpecPath, sp.FabctlVersion)
		if info.Stale {
			fmt.Fprintln(w, warn("Warning: this saved plan is stale"))
			fmt.Fprintln(w)
		}
		for _, m := range info.Warnings {
			fmt.Fprintf(w, "  - %s\n", m)
		}
		if info.Stale {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "  It is shown as it was made. fabctl apply would apply exactly this plan,")
			fmt.Fprintln(w, "  from the spec copy it embeds, not the spec on disk: run fabctl plan again")
			fmt.Fprintln(w, "  to plan the current spec.")
		}
		if len(info.Warnings) > 0 {
			fmt.Fprintln(w)
		}
		return view.WritePlanHuman(w, sp.Plan, o)
	}
}
