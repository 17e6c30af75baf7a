package main

import (
	"fmt"
	"io"
	"os"

	"github.com/lockchaos/lockchaos/results"
	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// progress shows a bar on a terminal and plain lines in CI (CI set) or
// when stderr is not a terminal.
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w}
	f, ok := w.(*os.File)
	if ok && isatty.IsTerminal(f.Fd()) && os.Getenv("CI") == "" {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("cells"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *progress) cell(r *results.Cell, done, total int) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s/%s %s", r.Scenario, r.Lock, r.Outcome))
		_ = p.bar.Add(1)
		if r.Failed() {
			_ = p.bar.Clear()
			fmt.Fprintf(p.w, "  %s\n", r.Summary())
		}
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s (%.1fs)\n", done, total, r.Summary(), r.Elapsed.Seconds())
}

func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
