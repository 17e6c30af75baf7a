package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/verify"
)

func newCheckCmd(cl *cli) *cobra.Command {
	var budget time.Duration
	var asJSON bool
	var maxV int
	c := &cobra.Command{
		Use: "check HISTORY.jsonl", Short: "re-check a recorded history", Long: usage("check"),
		Args: cobra.ArbitraryArgs, // check words its own "want exactly one history file"
		RunE: func(_ *cobra.Command, files []string) error {
			return done(cmdCheck(files, budget, asJSON, maxV, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
		},
	}
	fs := c.Flags()
	fs.DurationVar(&budget, "budget", 30*time.Second, "porcupine search budget per property; running out gives inconclusive, never pass")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.IntVar(&maxV, "max-violations", 20, "violations to print per property (all are counted)")
	cobrakit.NoFilesForTheRest(c)
	return c
}

func cmdCheck(files []string, budget time.Duration, asJSON bool, maxV int, stdout, stderr io.Writer) int {
	if len(files) != 1 {
		fmt.Fprintf(stderr, "lockchaos check: want exactly one history file, got %d\n"+
			"Run 'lockchaos check --help' for its flags.\n", len(files))
		return exitUsage
	}
	if budget <= 0 || maxV <= 0 {
		fmt.Fprintln(stderr, "lockchaos check: --budget and --max-violations must be positive")
		return exitUsage
	}
	defer tuneCheckGC()()
	res, code := verifyFile(files[0], checker.Options{Budget: budget, MaxViolations: maxV}, stderr)
	if res == nil {
		return code
	}
	rep := res.Report
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
			return exitHarness
		}
	} else {
		reports.WriteCheckText(stdout, reports.CheckText{Name: files[0], Summary: res.Summary, Report: rep,
			Witness: res.Witness, WitnessMore: res.WitnessMore})
	}
	return reports.CheckExitCode(rep)
}

// verifyFile verifies the history at path, or says why not on stderr
// and returns the exit code. The file is read once, as a stream (a FIFO
// works, /dev/zero fails at its first MiB), in chunks of a million events
// or more, cut where each key is quiet: memory follows the chunk, not the
// file. SIGINT or SIGTERM ends the check at once (a FIFO that never ends
// blocks its read; a file of gigabytes takes a while): 130 or 143, never a
// verdict on the part read. Asked for explicitly, so a check started with
// SIGINT ignored (a script's background job) still hears it. The check
// writes nothing, so nothing is left half done.
func verifyFile(path string, opts checker.Options, stderr io.Writer) (*verify.Result, int) {
	ctx, stop, caught := interrupt.Context()
	defer stop()
	res, err := interrupt.Await(ctx, 0, func() (*verify.Result, error) {
		return verify.File(ctx, path, verify.Options{Options: opts, ChunkEvents: checkChunkEvents})
	})
	if code := interrupt.Code(caught()); code != 0 {
		fmt.Fprintf(stderr, "lockchaos check: interrupted (%s): no verdict\n", interrupt.Name(code))
		return nil, code
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos check: %v\n", err)
		return nil, exitUsage
	}
	return res, exitOK
}

// checkChunkEvents is the chunk size of check (0: verify's default, a
// million events); tests set it smaller to check a small file in chunks.
var checkChunkEvents int
