package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/reports"
)

const compareUsage = `Prints two runs' outcomes side by side, cell by cell (each DIR holds a
summary.json): what each found, and whether they agree. Made for the
simulation against real Redis (make chaos-sim-vs-process), any two runs do.
A cell agrees when both runs found the same thing: a violation in some run,
a pass in every decisive run, or nothing decisive (skipped, inconclusive).

Exit codes: 0 every cell that ran on both agrees; 1 some cell differs;
2 usage or unreadable summaries.

Example:
  lockchaos compare out/sim out/process
`

func newCompareCmd(cl *cli) *cobra.Command {
	return &cobra.Command{
		Use: "compare DIR_A DIR_B", Short: "two runs' outcomes side by side (sim vs process)", Long: compareUsage,
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
	var sums [2]*reports.Summary
	for i, d := range dirs {
		s, err := reports.ReadJSON(filepath.Join(d, "summary.json"))
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos compare: %v\n", err)
			return exitUsage
		}
		sums[i] = s
	}
	if reports.Compare(stdout, sums[0], sums[1]) > 0 {
		return exitViolation
	}
	return exitOK
}
