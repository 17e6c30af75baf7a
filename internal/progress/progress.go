// Package progress shows a run's cells as they go: a bar on a terminal
// naming the cells running now, plain lines in CI or a log.
package progress

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/lockchaos/lockchaos/results"
)

// Progress shows a bar on a terminal, naming the cells running now with
// their elapsed time (redrawn four times a second from the start), and
// plain lines in CI (CI set) or when stderr is not a terminal.
type Progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar

	mu      sync.Mutex
	running map[string]time.Time // "scenario/lock seed N" -> start
	stop    chan struct{}
	stopped chan struct{}
}

// New shows the progress of total runs on w.
func New(w io.Writer, total int) *Progress {
	p := &Progress{w: w, running: map[string]time.Time{}}
	f, ok := w.(*os.File)
	if ok && isatty.IsTerminal(f.Fd()) && os.Getenv("CI") == "" {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("cells"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionThrottle(0),
			progressbar.OptionClearOnFinish(),
		)
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.redraw()
	}
	return p
}

// redraw names the running cells every 250 ms.
func (p *Progress) redraw() {
	defer close(p.stopped)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			// Under p.mu: Cell clears the bar and prints between two
			// draws, and the bar's Clear does not take the bar's own lock.
			p.mu.Lock()
			p.bar.Describe(runningText(p.running, now))
			p.mu.Unlock()
		}
	}
}

// runningText is the bar's description: the cells running, oldest first,
// with how long each has run.
func runningText(running map[string]time.Time, now time.Time) string {
	if len(running) == 0 {
		return "cells"
	}
	names := make([]string, 0, len(running))
	for n := range running {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := running[names[i]], running[names[j]]; !a.Equal(b) {
			return a.Before(b)
		}
		return names[i] < names[j]
	})
	// At most three, so the line fits a terminal (a wrapped bar scrolls).
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, n := range names {
		if i == shown {
			parts = append(parts, fmt.Sprintf("+%d more", len(names)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.1fs", n, now.Sub(running[n]).Seconds()))
	}
	return fmt.Sprintf("running %d: %s", len(names), strings.Join(parts, ", "))
}

func runKey(name string, seed int64) string { return fmt.Sprintf("%s (seed %d)", name, seed) }

// Started records a cell run as running.
func (p *Progress) Started(name string, seed int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[runKey(name, seed)] = time.Now()
}

// Forget drops a run that never ran from the running list, and from the
// bar's count of runs to come.
func (p *Progress) Forget(r *results.Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, runKey(r.Name(), r.RunSeed))
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// Cell shows a run that finished: a line of its own in CI, and on the
// bar a failure only.
func (p *Progress) Cell(r *results.Cell, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, runKey(r.Name(), r.RunSeed))
	if p.bar != nil {
		_ = p.bar.Add(1)
		if r.Failed() {
			_ = p.bar.Clear()
			fmt.Fprintf(p.w, "  %s\n", r.Summary())
		}
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s (%.1fs)\n", done, total, r.Summary(), r.Elapsed.Seconds())
}

// Done stops the bar.
func (p *Progress) Done() {
	if p.bar != nil {
		close(p.stop)
		<-p.stopped
		_ = p.bar.Finish()
	}
}
