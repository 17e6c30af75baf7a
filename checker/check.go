package checker

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Options tune a check. Zero fields take the documented defaults.
type Options struct {
	// Budget bounds porcupine's search per property. Default 30s. A
	// property that runs out is unknown, never pass.
	Budget time.Duration
	// MaxViolations bounds the violations kept per property with their
	// sentences (all are counted). Default 50.
	MaxViolations int
	// InfoLimit is the number of operations up to which porcupine's
	// linearization info (for the report's visualization) covers the whole
	// history; larger histories get info for their failing segments only.
	// Default 0: no info is computed. Reports use ReportInfoLimit.
	InfoLimit int
	// Floor overrides the evidence floor the history's header records.
	Floor *history.Floor
	// Lock overrides the lock named in the history's header (for the
	// report only: the rules read the fencing mode and the lock's traits
	// the header records, never its name).
	Lock string
}

// ReportInfoLimit is the InfoLimit for reports: histories up to this many
// operations get porcupine's view of the whole run, larger ones of their
// failing segments (a page stays small enough to open).
const ReportInfoLimit = 5000

func (o Options) withDefaults() Options {
	if o.Budget == 0 {
		o.Budget = 30 * time.Second
	}
	if o.MaxViolations == 0 {
		o.MaxViolations = 50
	}
	return o
}

// Check runs every property on h and combines them into a verdict.
//
// When the history records that the protected resource checks fences,
// overlapping holds are expected (a paused holder still believes it holds
// the lock): mutual-exclusion is reported but not decisive, and the
// resource's check decides. A fencing lock whose resource checks nothing
// is held to mutual exclusion like any other.
//
// Check judges no fault window h leaves unjudged and passes a history
// with no events; verify.History is Check with those rules.
func Check(ctx context.Context, h *history.History, opts Options) *Report {
	return check(ctx, h, opts, nil)
}

// Decide is Check's verdict alone: the same properties, without the
// statistics, evidence and incidents a report needs. A cell's supervisor
// asks it while the cell runs (a decisive violation ends the cell early),
// so those extras, a quarter of a check, are not paid on every look.
func Decide(ctx context.Context, h *history.History, opts Options) Status {
	evs := sortedEvents(h)
	results, _ := properties(ctx, h, evs, holdsOf(evs), opts.withDefaults(), nil)
	return Verdict(results)
}

// properties runs every property's check; the order is the report's. The
// liveness figures come with them (those of a whole history; a chunk's
// are the carry's until the file ends).
func properties(ctx context.Context, h *history.History, evs []history.Event, holds []Hold, opts Options,
	c *carry) ([]Result, Liveness) {
	// Mutual exclusion reads the holds alone, and the rules that need
	// neither model (sideRules) nothing the resource's check writes of the
	// carry: each checked beside the resource, on another core. Each has
	// the whole budget of wall time from here, as one after the other each
	// had a fresh one; where only one core is free they share it, so a
	// check near its budget on a loaded machine says unknown sooner.
	deadline := time.Now().Add(opts.Budget)
	mutex := make(chan Result, 1)
	go func() { mutex <- checkMutualExclusion(ctx, holds, h.End, opts, deadline) }()
	side := make(chan sideRules, 1)
	go func() { side <- sideRulesOf(h, evs, holds, opts, c) }()
	res := checkResource(ctx, evs, holds, opts, deadline, c)
	me := <-mutex
	if f := h.Header.Fencing; fencesChecked(f) {
		me.Decisive = false
		if me.Note == "" {
			me.Note = "the resource checks fences (" + f + "): overlapping holds are expected; the resource's check decides"
			if f == history.FencingTransaction {
				me.Note = "the resource lives in the lock's transaction: a holder whose session ended believes on, " +
					"but its commit is refused; the resource's check decides"
			}
		}
	}
	s := <-side
	return []Result{me, res, s.fr, s.fo, s.df, s.ft, s.ex, s.sb, s.pl}, s.lv
}

// sideRules are the results of the properties that read neither model:
// foreign-release, fence-order, liveness and the server's view. Of the
// carry they read and write only their own parts (the server's, the
// fences, the liveness sweep), so they run beside the models' checks.
type sideRules struct {
	fr, fo, df, ft, ex, sb, pl Result
	lv                         Liveness
}

func sideRulesOf(h *history.History, evs []history.Event, holds []Hold, opts Options, c *carry) sideRules {
	var s sideRules
	srv := serverFactsOf(evs, h, c)
	s.fr = checkForeignRelease(evs, holds, h.Header.InProcess, srv, opts)
	s.fo = checkFenceOrder(evs, h.Header.Fencing, opts, c)
	s.df, s.ft, s.lv = checkLiveness(h, evs, opts, c)
	if c == nil {
		cutShort(&s.df, s.lv, holds, srv, h.End)
	}
	s.ex, s.sb, s.pl = checkServer(srv, evs, holds, h.Header, opts, &s.df)
	return s
}

// checkLiveness judges deadlock-free and fault-tolerant: a whole history
// (c nil) swept and finished, keeping the first violations by time; a
// chunk added to the sweep the carry keeps, with what it settled (the rest
// is settled when the file ends, in Report.finish).
func checkLiveness(h *history.History, evs []history.Event, opts Options, c *carry) (df, ft Result, lv Liveness) {
	if c != nil {
		if c.live == nil {
			c.live = newLive(h.Header, opts.MaxViolations)
		}
		c.live.add(evs, false)
		df, ft = c.live.drain()
		return df, ft, Liveness{}
	}
	l := newLive(h.Header, math.MaxInt)
	l.add(evs, true)
	df, ft, lv = l.finish(h.End)
	for _, r := range []*Result{&df, &ft} {
		slices.SortStableFunc(r.Violations, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
		r.Violations = r.Violations[:min(len(r.Violations), opts.MaxViolations)]
	}
	return df, ft, lv
}

// check is Check over a whole history (c nil) or one chunk of a history
// read in chunks, whose carried state c brings in and takes on.
func check(ctx context.Context, h *history.History, opts Options, c *carry) *Report {
	opts = opts.withDefaults()
	lock := opts.Lock
	if lock == "" {
		lock = h.Header.Lock
	}
	evs := sortedEvents(h)
	holds := holdsOf(evs)
	// The statistics only read the events and holds, and of the carry
	// only their own fields: computed beside the properties, on another
	// core (a tenth of a check).
	stats := make(chan Stats, 1)
	go func() { stats <- computeStats(h, evs, holds, c) }()
	results, lv := properties(ctx, h, evs, holds, opts, c)
	rep := &Report{Lock: lock, Backend: h.Header.Backend, Simulated: h.Header.Simulated,
		Results: results, Liveness: lv, Holds: holds}
	rep.Verdict = Verdict(rep.Results)
	rep.Stats = <-stats
	rep.Stats.Overlaps = rep.Results[0].ViolationCount
	floor := h.Header.Floor
	if opts.Floor != nil {
		floor = opts.Floor
	}
	rep.Evidence = evidenceOf(h, evs, rep.Stats, floor, c)
	if c == nil {
		rep.Incidents = incidentsOf(h, evs, rep.Results)
	} else {
		c.keepWindows(evs)
	}
	for _, r := range rep.Results {
		if !r.Decisive {
			continue
		}
		for _, v := range r.Violations {
			if rep.Stats.FirstViolation < 0 || v.At < rep.Stats.FirstViolation {
				rep.Stats.FirstViolation = v.At
			}
		}
	}
	if n := openOps(evs); n > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d operation(s) have no recorded return (the run ended or "+
			"crashed while they were in flight); they count as indefinite", n))
	}
	if ctx.Err() != nil {
		rep.Warnings = append(rep.Warnings, "check cancelled: "+ctx.Err().Error())
	}
	return rep
}

// fencesChecked says whether the resource checks fences in mode: only the
// modes that say so, so a word no loader would pass (a History built in
// memory) holds the lock to mutual exclusion rather than excuse it.
func fencesChecked(mode string) bool {
	return mode == history.FencingWrites || mode == history.FencingReadsAndWrites || mode == history.FencingTransaction
}

func openOps(evs []history.Event) int {
	n := 0
	for i := range evs {
		e := &evs[i]
		if e.Open {
			n++
		}
	}
	return n
}
