package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

// How a cell reaches and folds its answer.

// judge verifies one part's history once (the rules every reader of a
// history applies: verify.History) and folds it into the cell's
// result. A single-part cell keeps its report and history for the pages;
// a long cell keeps the first part with a violation (else the last), so
// its memory stays that of one part.
func judge(ctx context.Context, p *Plan, part Part, h *history.History, res *results.Cell) {
	v := verify.History(context.WithoutCancel(ctx), h, checker.Options{Budget: p.Budget, InfoLimit: checker.ReportInfoLimit})
	fold(p, part, partRun{h: h, rep: v.Report, sum: checker.FileSummary{End: h.End}}, res)
}

// fold takes a part's report into the cell's result: one checked at the
// part's end (judge), or a continuous part's, checked as it ran.
func fold(p *Plan, part Part, run partRun, res *results.Cell) {
	rep := run.rep
	if res.Report == nil || res.Report.Verdict != checker.Fail {
		res.Report, res.Checked, res.History = rep, run.h, part.History
		res.Results, res.Stats = rep.Results, rep.Stats
	}
	res.Verdict = results.Worse(res.Verdict, rep.Verdict)
	res.AddVerdicts(results.VerdictsOf(rep.Results))
	res.Incidents = append(res.Incidents, rep.Incidents...)
	res.LivenessFigures = addLiveness(res.LivenessFigures, rep.Liveness)
	res.Evidence = res.Evidence.Add(rep.Evidence)
	res.Ran += time.Duration(run.sum.End)
	res.CheckedChunks += run.sum.Chunks
	res.Overlaps += rep.Stats.Overlaps
	for _, r := range rep.Results {
		if r.Decisive {
			res.Violations += r.ViolationCount
		}
	}
	res.Faults += rep.Evidence.Fired
	if len(p.Parts) > 1 {
		res.Evidence = res.Evidence.Hold(&p.Floor, len(p.Scenario.Faults) > 0)
	}
}

// decided reports whether the history so far already answers the cell
// (results.Expect.Settled: a regression, or a decisive violation in every
// group that expects one), or, once the planned duration has passed,
// whether it has enough evidence for its verdicts. The windows are judged
// on a copy; the history gets its judgments once, at the end.
//
// A continuous part is decided by the checker following it, only by a
// violation (or by its failing): it runs its whole length otherwise.
func decided(ctx context.Context, p *Plan, part Part, rec *history.Recorder, st *streamer, elapsed time.Duration) bool {
	look := lookFor(p.Expect)
	if st != nil {
		select {
		case <-st.done: // the checker stopped early: the cell reports why
			return true
		default:
		}
		// The streamer knows of a violation, not of its group.
		return st.failed.Load() && look != lookGroups
	}
	opts := checker.Options{Budget: time.Second, MaxViolations: 1}
	if len(p.Parts) > 1 || elapsed < part.Duration {
		// Only a decisive violation can end the cell now.
		switch look {
		case lookNone:
			return false
		case lookAny:
			snap := rec.Snapshot()
			if checker.Decide(ctx, snap, opts) != checker.Fail {
				return false
			}
			// A violation the cell allows (a liveness failure expected
			// either) settles nothing while its safety has yet to show
			// its pass.
			rep := checker.Check(ctx, snap, opts)
			return p.Expect.Settled(results.VerdictsOf(rep.Results)) && !awaitsLiveness(p, rep)
		}
		rep := checker.Check(ctx, rec.Snapshot(), opts)
		return p.Expect.Settled(results.VerdictsOf(rep.Results)) && !awaitsLiveness(p, rep)
	}
	snap := rec.Snapshot()
	faults.Append(snap, faults.Judge(snap, p.Scenario.TTL))
	rep := checker.Check(ctx, snap, opts)
	return p.Expect.Settled(results.VerdictsOf(rep.Results)) && !awaitsLiveness(p, rep) ||
		rep.Evidence.Enough && rep.Verdict != checker.Unknown
}

// awaitsLiveness says a cell whose safety is already decided must run on
// for its liveness: the liveness group has judged moments that pass but
// too few to count, and the cell expects it live. Ending at the first
// safety violation would leave a gated liveness expectation unshown (a
// partition's first window is both).
func awaitsLiveness(p *Plan, rep *checker.Report) bool {
	return p.Expect.Expected().Liveness == Live && !rep.Evidence.Enough &&
		checker.GroupVerdict(rep.Results, checker.GroupLiveness) == checker.Pass
}

// look is how a running cell is looked at before its planned end.
type look int

const (
	// lookNone: a cell expected safe and live has no violation to look
	// for: were it to regress, the check at its end finds the violation
	// all the same, and a look costs a check of the history so far (eight
	// looks were 11% of a simulated safe cell's CPU).
	lookNone look = iota
	// lookAny: any decisive violation decides the cell (checker.Decide).
	lookAny
	// lookGroups: only one in every group that expects one, or one no
	// group allows, decides it; the look needs each group's verdict.
	lookGroups
)

// lookFor is how a cell expecting e is looked at: any violation decides
// it when at most one group expects one and the other is held to pass.
func lookFor(e Expect) look {
	fails := func(x Expectation) bool { return x == Unsafe || x == Stuck }
	switch {
	case len(e.MayFail) > 0:
		return lookGroups
	case e.Safety == Safe && e.Liveness == Live:
		return lookNone
	case fails(e.Safety) && e.Liveness == Live, e.Safety == Safe && fails(e.Liveness), !fails(e.Safety) && !fails(e.Liveness):
		return lookAny
	}
	return lookGroups
}

// supervise closes stop once the cell is decided (see decided), looking
// eight times per planned duration; past MaxDuration the workload ends by
// itself, whatever the evidence.
func supervise(ctx context.Context, p *Plan, part Part, rec *history.Recorder, st *streamer, stop chan<- struct{}, done <-chan struct{}) {
	defer close(stop)
	start := time.Now()
	t := time.NewTicker(min(max(part.Duration/8, 20*time.Millisecond), 30*time.Second))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if decided(ctx, p, part, rec, st, time.Since(start)) {
			return
		}
	}
}

// cellError picks the error that explains a cell's end, or nil.
func cellError(ctx context.Context, p *Plan, runErr, schedErr, closeErr error) error {
	switch {
	case runErr != nil && errors.Is(runErr, context.DeadlineExceeded):
		return fmt.Errorf("cell timed out after %v", p.Timeout)
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return runErr
	case schedErr != nil:
		return schedErr
	case closeErr != nil:
		return closeErr
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", errInterrupted, ctx.Err())
	}
	return nil
}

// addLiveness folds a part's liveness figures into the cell's: nil while
// no part had any, a long cell's recoveries together (the first 200) and
// their median and max over every part.
func addLiveness(cell *checker.Liveness, part checker.Liveness) *checker.Liveness {
	if len(part.Recoveries) == 0 && len(part.Stretches) == 0 && part.FreeWhileTrying < 0 {
		return cell
	}
	if cell == nil {
		l := part
		return &l
	}
	if n := 200 - len(cell.Recoveries); n > 0 {
		cell.Recoveries = append(cell.Recoveries, part.Recoveries[:min(n, len(part.Recoveries))]...)
	}
	if n := 200 - len(cell.Stretches); n > 0 {
		cell.Stretches = append(cell.Stretches, part.Stretches[:min(n, len(part.Stretches))]...)
	}
	var recovered []time.Duration
	for _, rc := range cell.Recoveries {
		if rc.Judged && rc.Recovered {
			recovered = append(recovered, rc.After)
		}
	}
	slices.Sort(recovered)
	if len(recovered) > 0 {
		cell.MedianRecovery = recovered[len(recovered)/2]
	}
	cell.MaxRecovery = max(cell.MaxRecovery, part.MaxRecovery)
	cell.FreeWhileTrying = max(cell.FreeWhileTrying, part.FreeWhileTrying)
	return cell
}
