package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
)

func newCompletionCmd(cl *cli) *cobra.Command {
	var noDesc bool
	c := &cobra.Command{
		Use: "completion SHELL", Short: "shell completion (bash, zsh, fish, powershell)", Long: usage("completion"),
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
