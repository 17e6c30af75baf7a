package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
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

// shells write cobra's completion script for each shell it supports.
var shells = []struct {
	name  string
	write func(root *cobra.Command, w io.Writer, descriptions bool) error
}{
	{"bash", func(r *cobra.Command, w io.Writer, d bool) error { return r.GenBashCompletionV2(w, d) }},
	{"zsh", func(r *cobra.Command, w io.Writer, d bool) error {
		if d {
			return r.GenZshCompletion(w)
		}
		return r.GenZshCompletionNoDesc(w)
	}},
	{"fish", func(r *cobra.Command, w io.Writer, d bool) error { return r.GenFishCompletion(w, d) }},
	{"powershell", func(r *cobra.Command, w io.Writer, d bool) error {
		if d {
			return r.GenPowerShellCompletionWithDesc(w)
		}
		return r.GenPowerShellCompletion(w)
	}},
}

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
			return strings.Split(shellNames(), ", "), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.Flags().BoolVar(&noDesc, "no-descriptions", false, "leave out the one-line description of each value")
	return c
}

func cmdCompletion(root *cobra.Command, args []string, descriptions bool, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "lockchaos completion: name one shell: %s\n"+
			"Run 'lockchaos completion --help' for how to load it.\n", shellNames())
		return exitUsage
	}
	for _, s := range shells {
		if s.name == args[0] {
			if err := s.write(root, stdout, descriptions); err != nil {
				fmt.Fprintf(stderr, "lockchaos completion: %v\n", err)
				return exitHarness
			}
			return exitOK
		}
	}
	fmt.Fprintf(stderr, "lockchaos completion: unknown shell %q (valid: %s)\n", args[0], shellNames())
	return exitUsage
}

func shellNames() string {
	names := make([]string, len(shells))
	for i, s := range shells {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}
