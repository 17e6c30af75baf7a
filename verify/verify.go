// Package verify is the one way a recorded history becomes a verdict:
// the fault windows a history leaves unjudged are judged (a crashed run's
// last ones, or every one of a history from before judgments), a history
// with no events is unknown, a long file is checked in chunks, and the
// server's own events are kept for its view. `lockchaos check`, `lockchaos
// report` and its pages, a run's cells (History, or Reader for a long
// cell's continuous part, followed as it is written) and lockchaostest
// all come here, so they cannot disagree on the same history.
//
// It sits just above checker and faults (it needs faults' dangerous
// moments to judge a window, which checker must not import) and below
// scenarios. reports does not import it, to stay clear of faults and the
// deployments faults drive: whoever writes pages hands reports
// Options.ForPages (reports.HTMLOptions.Verify).
package verify

import (
	"context"
	"io"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Options tune a verification: the checker's own, and the chunk size of
// a file (checker.FileOptions.ChunkEvents; 0, the default, a million).
type Options struct {
	checker.Options
	ChunkEvents int
	// KeepHistory keeps the whole history File read, its judgments
	// appended, in Result.History (a cell page draws it): memory then
	// follows the file, not its chunks.
	KeepHistory bool
	// NoWitness keeps no witness events in Result.Witness: a history
	// followed for hours (Reader) then holds one chunk, not a share of
	// the file.
	NoWitness bool
	// Checked, if set, is called after each chunk is checked
	// (checker.FileOptions.Checked): a history followed as it grows
	// stops at its first violation.
	Checked func(chunk *history.History, sofar *checker.Report)
}

// Result is a verified history.
type Result struct {
	Report  *checker.Report
	Summary checker.FileSummary
	// History is the history checked: History's argument, or File's
	// with KeepHistory; nil otherwise.
	History *history.History
	// Witness holds the history's witness events (what the servers
	// did), the first MaxWitnessEvents of them; WitnessMore counts the
	// rest.
	Witness     []history.Event
	WitnessMore int
}

// File verifies the history file at path, read once as a stream (a FIFO
// works) in chunks of opts.ChunkEvents events or more: each chunk's
// unjudged windows are judged on its own events, and those the file never
// judges are appended to its last chunk.
func File(ctx context.Context, path string, opts Options) (*Result, error) {
	return chunks(opts, func(fo checker.FileOptions) (*checker.Report, checker.FileSummary, error) {
		return checker.CheckFile(ctx, path, fo)
	})
}

// Reader is File over a reader named name: a history still being
// written, read through history.Follow, is verified as it grows (a
// continuous part of a long cell) by the same rules as a saved one.
func Reader(ctx context.Context, r io.Reader, name string, opts Options) (*Result, error) {
	return chunks(opts, func(fo checker.FileOptions) (*checker.Report, checker.FileSummary, error) {
		return checker.CheckReader(ctx, r, name, fo)
	})
}

// chunks verifies what check reads in chunks, File's and Reader's way.
func chunks(opts Options, check func(checker.FileOptions) (*checker.Report, checker.FileSummary, error)) (*Result, error) {
	res := &Result{}
	j := newJudge()
	keep := &kept{}
	fo := checker.FileOptions{Options: opts.Options, ChunkEvents: opts.ChunkEvents, Checked: opts.Checked,
		Prepare: func(h *history.History, last bool) {
			j.prepare(h, last)
			if !opts.NoWitness {
				res.addWitness(h.Events, false)
			}
			if opts.KeepHistory {
				keep.add(h, last)
			}
		}}
	rep, sum, err := check(fo)
	if err != nil {
		return nil, err
	}
	res.Report, res.Summary, res.History = rep, sum, keep.h
	res.emptyRule()
	return res, nil
}

// History verifies a history held whole in memory (a run's part, checked
// where it was recorded): its unjudged windows are judged and appended to
// it, as File would for a file of one chunk.
func History(ctx context.Context, h *history.History, opts checker.Options) *Result {
	newJudge().prepare(h, true)
	res := &Result{History: h, Summary: checker.FileSummary{Header: h.Header, Events: len(h.Events), End: h.End,
		Chunks: 1, LargestChunk: len(h.Events)}}
	res.addWitness(h.Events, true)
	res.Report = checker.Check(ctx, h, opts)
	res.emptyRule()
	return res
}

// ForPages is the re-check a cell page makes of a saved history
// (reports.HTMLOptions.Verify): File in o's chunks, with the page's
// checker options, keeping the history to draw.
func (o Options) ForPages(ctx context.Context, path string, opts checker.Options) (*history.History, *checker.Report, error) {
	o.Options, o.KeepHistory = opts, true
	res, err := File(ctx, path, o)
	if err != nil {
		return nil, nil, err
	}
	return res.History, res.Report, nil
}

// emptyRule marks the report on a history with no events (a header
// alone, as a run whose pods never started leaves): nothing was checked,
// so nothing passed. The verdict is unknown, the evidence short.
func (r *Result) emptyRule() {
	if r.Summary.Events > 0 {
		return
	}
	rep := r.Report
	for i := range rep.Results {
		if res := &rep.Results[i]; res.Status == checker.Pass {
			res.Status = checker.Unknown
			if res.Note == "" {
				res.Note = "not checked: no events"
			}
		}
	}
	rep.Verdict = checker.Unknown
	rep.Evidence.Enough = false
	rep.Evidence.Short = append(rep.Evidence.Short, "the history has no events: nothing was checked")
}
