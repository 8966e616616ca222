package cli

import "github.com/spf13/cobra"

// completionShells are the shells `fabctl completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// NewCmdCompletion returns `fabctl completion SHELL`.
func NewCmdCompletion(f *Factory) *cobra.Command {
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
			root := cmd.Root()
			out := f.IOStreams.Out
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return FlagErrorf("unknown shell %q", args[0])
		},
	}
}
