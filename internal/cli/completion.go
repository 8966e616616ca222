package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
)

// completionShells are the shells `fabctl completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// CompletionOptions are the inputs of fabctl completion.
type CompletionOptions struct {
	IO    *IOStreams
	Shell string
	// Root is the command tree the script completes.
	Root *cobra.Command
}

// NewCmdCompletion returns `fabctl completion SHELL`.
func NewCmdCompletion(f *Factory, runF func(*CompletionOptions) error) *cobra.Command {
	opts := &CompletionOptions{IO: f.IOStreams}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Write a shell completion script",
		Long: `Write the completion script for a shell to stdout.

  bash:        source <(fabctl completion bash)
               (or save it to /etc/bash_completion.d/fabctl; needs bash-completion v2)
  zsh:         fabctl completion zsh > "${fpath[1]}/_fabctl"
  fish:        fabctl completion fish > ~/.config/fish/completions/fabctl.fish
  powershell:  fabctl completion powershell | Out-String | Invoke-Expression`,
		ValidArgs:             completionShells,
		Args:                  usageArgs(cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs)),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shell, opts.Root = args[0], cmd.Root()
			if runF != nil {
				return runF(opts)
			}
			return completionRun(opts)
		},
	}
}

func completionRun(opts *CompletionOptions) error {
	out := opts.IO.Out
	switch opts.Shell {
	case "bash":
		return opts.Root.GenBashCompletionV2(out, true)
	case "zsh":
		return opts.Root.GenZshCompletion(out)
	case "fish":
		return opts.Root.GenFishCompletion(out, true)
	case "powershell":
		return opts.Root.GenPowerShellCompletionWithDesc(out)
	}
	return FlagErrorf("unknown shell %q", opts.Shell)
}

// deviceCompletion completes --target and --exclude with the devices of
// the spec named by the command's first argument (default "."): names,
// addresses (switch.leaf1, host.gpu01) and role:NAME, never file names.
// A spec that does not load completes nothing.
func deviceCompletion(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		path := "."
		if len(args) > 0 {
			path = args[0]
		}
		var vars, varFiles []string
		if fl := cmd.Flags().Lookup("var"); fl != nil {
			vars, _ = cmd.Flags().GetStringArray("var")
		}
		if fl := cmd.Flags().Lookup("var-file"); fl != nil {
			varFiles, _ = cmd.Flags().GetStringArray("var-file")
		}
		s, diags := spec.Load(path, spec.LoadOptions{Vars: vars, VarFiles: varFiles, Env: f.Env, Platforms: builtin.SpecPlatforms()})
		if s == nil || diags.HasErrors() {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		roles := map[string]bool{}
		add := func(kind, name, role string) {
			out = append(out, name, kind+"."+name)
			if role != "" && !roles[role] {
				roles[role] = true
				out = append(out, "role:"+role)
			}
		}
		for _, sw := range s.Switches {
			add("switch", sw.Name, sw.Role)
		}
		for _, h := range s.Hosts {
			add("host", h.Name, h.Role)
		}
		var match []string
		for _, c := range out {
			if strings.HasPrefix(c, toComplete) {
				match = append(match, c)
			}
		}
		sort.Strings(match)
		return match, cobra.ShellCompDirectiveNoFileComp
	}
}
