package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
)

const completionUsage = `Prints the shell completion script: commands, flags and their values
(scenarios, locks, backends and expectations, with those of a
--scenarios-file already typed; YAML, history and directory names where a
flag or argument takes one).

In the current shell:
  bash        source <(lockchaos completion bash)
  zsh         source <(lockchaos completion zsh)      (after compinit)
  fish        lockchaos completion fish | source
  PowerShell  lockchaos completion powershell | Out-String | Invoke-Expression

In every new shell:
  bash        lockchaos completion bash > /etc/bash_completion.d/lockchaos
              (needs the bash-completion package)
  zsh         lockchaos completion zsh > "${fpath[1]}/_lockchaos"
  fish        lockchaos completion fish > ~/.config/fish/completions/lockchaos.fish
  PowerShell  add the source line above to your $PROFILE`

func newCompletionCmd(cl *cli) *cobra.Command {
	var noDesc bool
	c := &cobra.Command{
		Use: "completion SHELL", Short: "shell completion (bash, zsh, fish, powershell)", Long: completionUsage,
		Args: cobra.ArbitraryArgs, // an unknown shell is a usage error worded below
		RunE: func(c *cobra.Command, args []string) error {
			return done(cmdCompletion(c.Root(), args, !noDesc, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return strings.Split(cobrakit.ShellNames(), ", "), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.Flags().BoolVar(&noDesc, "no-descriptions", false, "leave out the one-line description of each value")
	return c
}

func cmdCompletion(root *cobra.Command, args []string, descriptions bool, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "lockchaos completion: name one shell: %s\n"+
			"Run 'lockchaos completion --help' for how to load it.\n", cobrakit.ShellNames())
		return exitUsage
	}
	switch err := cobrakit.WriteScript(root, args[0], stdout, descriptions); {
	case err == nil:
		return exitOK
	case !errors.Is(err, cobrakit.ErrUnknownShell):
		fmt.Fprintf(stderr, "lockchaos completion: %v\n", err)
		return exitHarness
	}
	fmt.Fprintf(stderr, "lockchaos completion: unknown shell %q (valid: %s)\n", args[0], cobrakit.ShellNames())
	return exitUsage
}
