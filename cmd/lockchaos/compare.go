package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/reports"
)

func newCompareCmd(cl *cli) *cobra.Command {
	return &cobra.Command{
		Use: "compare DIR_A DIR_B", Short: "two runs' outcomes side by side (sim vs process)", Long: usage("compare"),
		Args: cobra.ArbitraryArgs, // compare words its own "want two result directories"
		RunE: func(_ *cobra.Command, dirs []string) error {
			return done(cmdCompare(dirs, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
	}
}

func cmdCompare(dirs []string, stdout, stderr io.Writer) int {
	if len(dirs) != 2 {
		fmt.Fprintf(stderr, "lockchaos compare: want two result directories, got %d\n", len(dirs))
		return exitUsage
	}
	sums, err := reports.ReadDirs(dirs)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos compare: %v\n", err)
		return exitUsage
	}
	if reports.Compare(stdout, sums[0], sums[1]) > 0 {
		return exitViolation
	}
	return exitOK
}
