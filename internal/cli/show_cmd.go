package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	// VerifyKey is an ed25519 public key file the plan must be signed
	// with (also FABCTL_PLAN_VERIFY_KEY; FABCTL_PLAN_KEY for HMAC).
	VerifyKey string
	// Keys verify the plan's signature (filled from the environment and
	// VerifyKey); Load loads the spec the plan embeds (loadSavedFabric),
	// for the endpoints apply would connect to.
	Keys plan.Keys
	Load func(sp *plan.SavedPlan) (*loadedFabric, error)
}

// NewCmdShow returns `fabctl show`.
func NewCmdShow(f *Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Show a saved plan",
		Long: `Show a plan saved with fabctl plan -out, in the same views as plan.

show checks the file's seal (a plan edited after fabctl wrote it is an
error), its signature when a verification key is configured (--verify-key,
FABCTL_PLAN_VERIFY_KEY, FABCTL_PLAN_KEY), that its embedded spec hashes to
its spec hash, and whether it is stale: when the spec files at the plan's spec
path, or its var files, no longer match the copies the plan embeds, or
the file is an older format, show warns and still renders the plan.
fabctl apply PLANFILE applies the plan from the spec copy it embeds and
refuses devices whose live state moved since the plan.

Before the plan, show lists what apply will connect to, derived from the
spec the plan embeds (never from the plan's other fields): each device's
transport, address, user, secret references (file paths resolved) and
known_hosts or CA file.

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
			keys, err := plan.LoadKeys(f.Getenv, "", opts.VerifyKey)
			if err != nil {
				return err
			}
			opts.Keys = keys
			opts.Load = func(sp *plan.SavedPlan) (*loadedFabric, error) { return loadSavedFabric(f, sp) }
			return showRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "List every changed setting, tolerated values and unchanged devices")
	fl.BoolVar(&opts.ShowPayload, "show-payload", false, "Show each device's driver steps with their native payload")
	fl.StringVar(&opts.Format, "format", formatHuman, "Output `format`: human, json or markdown (--json is --format json)")
	fl.StringVar(&opts.VerifyKey, "verify-key", "", "Show the plan only when it is signed with the ed25519 key in this public key `file` (also "+plan.VerifyKeyEnv+"; "+plan.KeyEnv+" for HMAC)")
	_ = cmd.RegisterFlagCompletionFunc("format", formatCompletion)
	return cmd
}

func showRun(opts *ShowOptions) error {
	sp, err := plan.Read(opts.Path, opts.Keys)
	if err != nil {
		return err
	}
	info := &view.SavedPlanInfo{Path: opts.Path, FormatVersion: sp.FormatVersion, FabctlVersion: sp.FabctlVersion,
		SpecPath: sp.SpecPath, SpecDir: sp.Dir(), StateDir: sp.StateDir, SignedBy: sp.Signer(), Warnings: sp.Staleness()}
	info.Endpoints, info.LoadError = savedEndpoints(opts, sp)
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
		writeEndpointsMarkdown(w, info)
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
		writeEndpointsHuman(w, info, bold)
		return view.WritePlanHuman(w, sp.Plan, o)
	}
}

// savedEndpoints derives what apply would connect to from the spec the
// plan embeds (as apply loads it). A spec that does not load is reported
// (apply would refuse it), not fatal to show.
func savedEndpoints(opts *ShowOptions, sp *plan.SavedPlan) ([]plan.Endpoint, string) {
	if opts.Load == nil {
		return nil, ""
	}
	lf, err := opts.Load(sp)
	switch {
	case errors.Is(err, errSpecInvalid):
		return []plan.Endpoint{}, fmt.Sprintf("the spec the plan embeds has %s: fabctl apply would refuse the plan", plural(lf.Errors, "error", "errors"))
	case err != nil:
		return []plan.Endpoint{}, err.Error()
	}
	return plan.Endpoints(plan.Units(lf.Fabric), lf.Spec.CredentialsByName, sp.Plan, false), ""
}

// endpointLine is one device's connection in a line: transport,
// user@address, secrets, and what verifies the device.
func endpointLine(e plan.Endpoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)", e.Transport, e.Driver)
	switch {
	case e.Address != "" && e.Username != "":
		fmt.Fprintf(&b, " %s@%s", e.Username, e.Address)
	case e.Address != "":
		fmt.Fprintf(&b, " %s", e.Address)
	}
	if len(e.Secrets) > 0 {
		fmt.Fprintf(&b, ", %s", strings.Join(e.Secrets, ", "))
	}
	if e.KnownHosts != "" {
		fmt.Fprintf(&b, ", known_hosts %s", e.KnownHosts)
	}
	if e.CAFile != "" {
		fmt.Fprintf(&b, ", ca_file %s", e.CAFile)
	}
	if e.CertFile != "" {
		fmt.Fprintf(&b, ", cert_file %s, key_file %s", e.CertFile, e.KeyFile)
	}
	return b.String()
}

func writeEndpointsHuman(w io.Writer, info *view.SavedPlanInfo, bold func(string) string) {
	signed := "unsigned"
	if info.SignedBy != "" {
		signed = "signed by " + info.SignedBy
	}
	fmt.Fprintf(w, "%s (%s), from its embedded spec (%s); lock and applied record in %s:\n", bold("fabctl apply connects to"), signed, info.SpecDir, stateDirOrDefault(info))
	if info.LoadError != "" {
		fmt.Fprintf(w, "  %s\n\n", info.LoadError)
		return
	}
	width := 0
	for _, e := range info.Endpoints {
		width = max(width, len(e.Device))
	}
	for _, e := range info.Endpoints {
		fmt.Fprintf(w, "  %-*s  %s\n", width, e.Device, endpointLine(e))
	}
	fmt.Fprintln(w)
}

func writeEndpointsMarkdown(w io.Writer, info *view.SavedPlanInfo) {
	signed := "unsigned"
	if info.SignedBy != "" {
		signed = "signed by " + info.SignedBy
	}
	fmt.Fprintf(w, "<details><summary>fabctl apply connects to %d devices (%s)</summary>\n\n", len(info.Endpoints), signed)
	if info.LoadError != "" {
		fmt.Fprintf(w, "%s\n", info.LoadError)
	}
	for _, e := range info.Endpoints {
		fmt.Fprintf(w, "- `%s`: `%s`\n", e.Device, strings.ReplaceAll(endpointLine(e), "`", "'"))
	}
	fmt.Fprintf(w, "\n</details>\n\n")
}

func stateDirOrDefault(info *view.SavedPlanInfo) string {
	if info.StateDir != "" {
		return info.StateDir
	}
	return filepath.Join(info.SpecDir, ".fabctl")
}
