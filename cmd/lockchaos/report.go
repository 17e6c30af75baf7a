package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/verify"
)

func newReportCmd(cl *cli) *cobra.Command {
	var out, markdown string
	var allPages bool
	c := &cobra.Command{
		Use: "report DIR...", Short: "rebuild the HTML reports (merging shards)", Long: usage("report"),
		Args: cobra.ArbitraryArgs, // report words its own "want at least one results directory"
		RunE: func(_ *cobra.Command, dirs []string) error {
			return done(cmdReport(dirs, out, markdown, allPages, cl.stdout, cl.stderr))
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
	}
	fs := c.Flags()
	fs.StringVar(&out, "out", "", "where to write the HTML (default: the first DIR)")
	fs.StringVar(&markdown, "markdown", "", "write the lock x scenario table "+
		"into this Markdown file's markers (- for stdout) instead of HTML")
	fs.BoolVar(&allPages, "all-pages", false, "a page for every run of a sweep, "+
		"not only for the runs that missed their expectation and the first of each cell")
	cobrakit.Must(c.MarkFlagDirname("out"))
	cobrakit.Must(c.MarkFlagFilename("markdown", "md"))
	return c
}

// reportGrace is how long an interrupted report waits for the pages
// being written to finish before it exits.
const reportGrace = 5 * time.Second

func cmdReport(dirs []string, out, markdown string, allPages bool, stdout, stderr io.Writer) int {
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "lockchaos report: want at least one results directory\nRun 'lockchaos report --help' for its flags.")
		return exitUsage
	}
	sums, err := reports.ReadDirs(dirs)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos report: %v\n", err)
		return exitUsage
	}
	if out == "" {
		out = dirs[0]
	}
	merged := reports.Merge(out, sums, dirs)
	if markdown != "" {
		return writeMarkdown(merged, markdown, stdout, stderr)
	}
	release, err := claimOut(out)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos report: %v\n", err)
		return exitUsage
	}
	defer release()
	res, code, err := writePages(out, merged, allPages, stderr)
	if code != 0 {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos report: %v\n", err)
		return exitHarness
	}
	if len(dirs) > 1 {
		if _, err := reports.WriteJSON(out, merged); err != nil {
			fmt.Fprintf(stderr, "lockchaos report: %v\n", err)
			return exitHarness
		}
	}
	fmt.Fprintf(stdout, "wrote %s and %d cell page(s) in %s", res.Index, len(res.Pages), res.Elapsed.Round(1e6))
	if res.Unpaged > 0 {
		fmt.Fprintf(stdout, " (%d met runs without a page: --all-pages)", res.Unpaged)
	}
	fmt.Fprintln(stdout)
	// A page without its history shows nothing of the run: the input
	// was bad (as for check), said once every other page is written.
	for _, u := range res.Unread {
		fmt.Fprintf(stderr, "lockchaos report: %v\n", u)
	}
	if n := len(res.Unread); n > 0 {
		fmt.Fprintf(stderr, "lockchaos report: %d of %d cell page(s) built without their history (each says why)\n", n, len(res.Pages))
		return exitUsage
	}
	return exitOK
}

// writeMarkdown writes the lock x scenario table into the markers of
// the file named markdown, or to stdout for "-".
func writeMarkdown(merged *reports.Summary, markdown string, stdout, stderr io.Writer) int {
	table := reports.Markdown(merged)
	if markdown == "-" {
		fmt.Fprint(stdout, table)
		return exitOK
	}
	if err := reports.WriteMarkdownInto(markdown, table); err != nil {
		fmt.Fprintf(stderr, "lockchaos report: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "wrote the table into %s\n", markdown)
	return exitOK
}

// writePages writes the HTML pages. SIGINT or SIGTERM stops the pages not
// yet finished (each is written whole or not at all) and writes no
// index: code is then 130 or 143. A page stuck reading its history (a
// FIFO nobody writes) is given a grace period, then left: an interrupt is
// never ignored.
func writePages(out string, merged *reports.Summary, allPages bool, stderr io.Writer) (res *reports.HTMLResult, code int, err error) {
	ctx, stop, caught := interrupt.Context()
	defer stop()
	res, err = interrupt.Await(ctx, reportGrace, func() (*reports.HTMLResult, error) {
		return reports.WriteHTML(out, merged, reports.HTMLOptions{AllPages: allPages, Context: ctx,
			Verify: verify.Options{ChunkEvents: checkChunkEvents}.ForPages})
	})
	if code := interrupt.Code(caught()); code != 0 {
		fmt.Fprintf(stderr, "lockchaos report: interrupted (%s): the pages finished before it were written, no index\n",
			interrupt.Name(code))
		return nil, code, nil
	}
	return res, 0, err
}
