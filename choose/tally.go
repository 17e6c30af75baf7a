package choose

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// The checker's causes of a stopped holder (checker.Recovery.Cause).
const (
	causeCrashed   = "crashed"
	causeAbandoned = "abandoned"
	causeCutOff    = "cut off"
)

// Add counts one run in its row and cell; a run of a cell the plan does
// not know is ignored. It returns the disagreement the run is, if any.
func (p *Plan) Add(r *results.Cell) *Disagreement {
	cell, row := p.where[r.Name()], p.rowOf[r.Name()]
	if cell == nil || r.NotStarted() {
		return nil // an interrupt kept it from running: it is in no figure
	}
	unsafe, decided := safetyDecided(r)
	if decided {
		cell.Runs++
		if unsafe {
			cell.Unsafe++
			if cell.Violation == "" {
				cell.Violation = fmt.Sprintf("%s (seed %d): %s", r.Scenario, r.RunSeed, r.Rerun)
			}
		}
	}
	switch r.LivenessVerdict {
	case checker.Pass, checker.Fail:
		cell.LivenessRuns++
		if r.LivenessVerdict == checker.Fail {
			cell.Stuck++
		}
	}
	if !undecided(r) {
		cell.Decided++
	}
	if !decided {
		cell.Undecided++
		if len(cell.Notes) < 3 {
			cell.Notes = append(cell.Notes, note(r))
		}
	}
	row.addLiveness(r)
	if r.Outcome != results.Regression && r.Outcome != results.Missed {
		return nil
	}
	cell.Disagree = true
	return &Disagreement{Row: row.Name, Family: cell.Family, Cell: r.Name(), Seed: r.RunSeed, Out: r.Outcome,
		Why: r.Summary(), Rerun: r.Rerun}
}

// note is an undecided run in a few words.
func note(r *results.Cell) string {
	why := r.Why
	if r.Error != "" {
		why = r.Error
	}
	return fmt.Sprintf("%s seed %d: %s: %s", r.Scenario, r.RunSeed, r.Outcome, why)
}

// addLiveness adds a run's recoveries and its tolerance of a minority down.
func (row *Row) addLiveness(r *results.Cell) {
	lf := r.LivenessFigures
	if lf == nil {
		return
	}
	for _, rec := range lf.Recoveries {
		if !rec.Judged {
			continue
		}
		var to *Recovery
		switch rec.Cause {
		case causeCrashed:
			to = &row.Liveness.Crash
		case causeAbandoned:
			to = &row.Liveness.Hang
		case causeCutOff:
			to = &row.Liveness.Partition
		default:
			continue
		}
		to.add(rec, r.TTL)
	}
	if lf.FreeWhileTrying >= 0 {
		m := &row.Liveness.Minority
		m.Applicable = true
		m.Runs++
		switch {
		case slices.Contains(r.FailedProperties, checker.FaultTolerant):
			m.Stuck++
		case r.LivenessVerdict == checker.Pass && r.Evidence.Enough:
			m.Live++
		}
		m.FreeWhileTrying = max(m.FreeWhileTrying, lf.FreeWhileTrying)
	}
}

// add counts one judged recovery of a cell whose TTL was ttl.
func (rc *Recovery) add(rec checker.Recovery, ttl time.Duration) {
	rc.N++
	if rec.Stuck {
		rc.Stuck++
	}
	if !rec.Recovered {
		// Nobody got the key before the cell ended: no recovery time
		// (After runs to the history's end), counted on its own.
		rc.NeverFreed++
		return
	}
	rc.All = append(rc.All, rec.After)
	rc.ttls = append(rc.ttls, ttl)
}

// finish sorts what the runs added into figures: medians, maxima, each
// row's verdict, the tolerance a one-node lock cannot have.
func (p *Plan) finish() {
	for _, row := range p.Rows {
		for _, rc := range []*Recovery{&row.Liveness.Crash, &row.Liveness.Hang, &row.Liveness.Partition} {
			rc.summarize()
		}
		m := &row.Liveness.Minority
		switch spec := p.Specs[row.Name]; {
		case m.Applicable:
		case spec.Nodes <= 1 && row.Place == "":
			m.Why = "one server: no minority to lose"
		default:
			m.Why = "no scenario here took a minority down"
		}
		row.Verdict = verdictOf(row)
		row.Sentence = sentence(row, p.Specs[row.Name])
	}
}

// summarize makes the median and maximum, in time and in TTLs.
func (rc *Recovery) summarize() {
	if len(rc.All) == 0 {
		return
	}
	inTTL := make([]float64, len(rc.All))
	for i, d := range rc.All {
		inTTL[i] = float64(d) / float64(max(rc.ttls[i], time.Millisecond))
	}
	all := slices.Clone(rc.All)
	slices.Sort(all)
	slices.Sort(inTTL)
	rc.Median, rc.Max = all[len(all)/2], all[len(all)-1]
	rc.MedianTTL, rc.MaxTTL = inTTL[len(inTTL)/2], inTTL[len(inTTL)-1]
	rc.All, rc.AllTTL = all, inTTL
}

// verdictOf is a row in one word: unsafe when some run broke it; safe
// when every cell decided, none broke, and the lock's design says safe in
// every family; unproven when none broke but the design allows a
// violation somewhere (or nothing says what it should do: a user's lock);
// undecided when some cell decided nothing.
func verdictOf(row *Row) string {
	decided, designSafe := true, true
	for _, c := range row.Safety {
		if c.Unsafe > 0 {
			return VerdictUnsafe
		}
		if c.Runs == 0 {
			decided = false
		}
		if c.Expect != results.Safe {
			designSafe = false
		}
	}
	switch {
	case !decided:
		return VerdictUndecided
	case !designSafe:
		return VerdictUnproven
	}
	return VerdictSafe
}

// A row's verdicts.
const (
	VerdictSafe      = "safe"
	VerdictUnsafe    = "unsafe"
	VerdictUnproven  = "unproven"
	VerdictUndecided = "undecided"
)
