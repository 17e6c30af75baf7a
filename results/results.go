// Package results holds what a run learns about its cells: expectations,
// outcomes and the cell result itself. It sits below the runner
// (scenarios) and the writers (reports), so neither imports the other.
package results

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Expectation is what a cell must show.
type Expectation string

// Expectations.
const (
	// Safe cells must pass every run: a failure is a regression.
	Safe Expectation = "safe"
	// Unsafe cells must be detected: a pass means the harness missed a
	// known bug.
	Unsafe Expectation = "unsafe"
	// Either is reported, not gated.
	Either Expectation = "either"
	// NotApplicable cells are listed but not run.
	NotApplicable Expectation = "n/a"
)

// Expectations lists the valid expectations, for messages.
var Expectations = []Expectation{Safe, Unsafe, Either, NotApplicable}

// Valid reports whether e is one of Expectations.
func (e Expectation) Valid() bool {
	switch e {
	case Safe, Unsafe, Either, NotApplicable:
		return true
	}
	return false
}

// Outcome compares a cell's verdict with its expectation.
type Outcome string

// Outcomes.
const (
	Met          Outcome = "met"          // safe and passed, unsafe and detected, or either
	Regression   Outcome = "regression"   // a safe cell failed
	Missed       Outcome = "missed"       // an unsafe cell passed: the harness missed a known bug
	Unknown      Outcome = "unknown"      // the checker could not decide
	Inconclusive Outcome = "inconclusive" // a pass below the evidence floor: the danger never (or too rarely) happened
	HarnessError Outcome = "error"        // the cell could not run: no verdict (see ShownVerdict)
	Skipped      Outcome = "skipped"      // not applicable, or interrupted before it ran
	Interrupted  Outcome = "interrupted"  // Ctrl-C or SIGTERM mid-cell: partial history, checked
)

// Compare turns a verdict into an outcome for an expectation. A decisive
// violation always counts; a pass counts only with enough evidence.
func Compare(e Expectation, v checker.Status, ev checker.Evidence) Outcome {
	switch {
	case v == checker.Unknown:
		return Unknown
	case v == checker.Pass && !ev.Enough:
		return Inconclusive
	case e == Either:
		return Met
	case e == Safe && v == checker.Pass, e == Unsafe && v == checker.Fail:
		return Met
	case e == Safe:
		return Regression
	}
	return Missed
}

// Cell is everything a run learned about one cell.
type Cell struct {
	Scenario    string         `json:"scenario"`
	Description string         `json:"description,omitempty"`
	Lock        string         `json:"lock"`
	LockTraits  string         `json:"lock_traits,omitempty"`
	Expect      Expectation    `json:"expectation"`
	Verdict     checker.Status `json:"verdict,omitempty"`
	Outcome     Outcome        `json:"outcome"`
	Violations  int            `json:"violations"` // decisive ones
	// Incidents group the violations by cause; their count leads.
	Incidents []checker.Incident `json:"incidents,omitempty"`
	Overlaps  int                `json:"overlaps"`
	Results   []checker.Result   `json:"results,omitempty"`
	Stats     checker.Stats      `json:"stats"`
	RunSeed   int64              `json:"run_seed"`
	CellSeed  int64              `json:"cell_seed"`
	TTL       time.Duration      `json:"ttl_ns,omitempty"`
	Topology  string             `json:"topology,omitempty"`
	Faults    int                `json:"fault_windows"`
	Evidence  checker.Evidence   `json:"evidence"`
	// TimeScale is the factor every time of the cell was stretched by.
	TimeScale float64 `json:"time_scale,omitempty"`
	// Planned is the duration the scenario asked for; Ran is how long the
	// pods really ran (longer when the cell ran on to reach its floor,
	// shorter when a decisive violation ended it early).
	Planned time.Duration `json:"planned_ns,omitempty"`
	Ran     time.Duration `json:"ran_ns,omitempty"`
	History string        `json:"history,omitempty"`
	// HistoryDropped says a sweep deleted this met run's history to save
	// disk (simulated runs only; the seed reruns it, see Rerun).
	HistoryDropped bool `json:"history_dropped,omitempty"`
	// CheckedChunks is how many chunks a long cell's history was checked
	// in as it grew (0: checked whole at the end).
	CheckedChunks int           `json:"checked_chunks,omitempty"`
	Rerun         string        `json:"rerun"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	// Backend names what ran Redis; Simulated says it was a simulation in
	// virtual time (miniredis, in-memory links), never real Redis: a
	// simulated result must not pass for a real one anywhere it is shown.
	Backend   string `json:"backend,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
	Error     string `json:"error,omitempty"`

	// Report and Checked are the checker's full report and the history it
	// checked (History is that history's path), kept in memory so the
	// pages need not load and check again.
	Report  *checker.Report  `json:"-"`
	Checked *history.History `json:"-"`
}

// Name is "scenario/lock".
func (r *Cell) Name() string { return r.Scenario + "/" + r.Lock }

// Failed reports whether the cell did not meet its expectation.
func (r *Cell) Failed() bool { return r.Outcome != Met && r.Outcome != Skipped }

// NoVerdict is how every output shows a cell without a verdict.
const NoVerdict = "-"

// ShownVerdict is the verdict as every output shows it (progress lines, the
// table, JUnit, HTML, lockchaostest): NoVerdict for a cell without one. A
// harness error has none, whatever the history it left behind said: the
// cell that was asked for did not run, so it is never shown as a pass (nor
// a fail; the violations such a history holds are still counted and listed).
// The runner leaves its Verdict empty; this holds for older summaries too.
func (r *Cell) ShownVerdict() string {
	if r.Verdict == "" || r.Outcome == HarnessError {
		return NoVerdict
	}
	return string(r.Verdict)
}

// Summary is one line for people.
func (r *Cell) Summary() string {
	s := fmt.Sprintf("%s/%s: %s (expected %s): %s", r.Scenario, r.Lock, r.ShownVerdict(), r.Expect, r.Outcome)
	if r.Violations > 0 {
		s += fmt.Sprintf(", %d incident(s) (%d violation(s)), first at %s",
			len(r.Incidents), r.Violations, history.Seconds(r.Stats.FirstViolation))
		if len(r.Incidents) > 0 {
			s += ": " + r.Incidents[0].Cause
		}
	}
	if r.Outcome == Inconclusive {
		for _, why := range r.Evidence.Short {
			s += ": " + why
		}
	}
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// Aggregate summarises the repeats of one cell.
type Aggregate struct {
	Scenario string      `json:"scenario"`
	Lock     string      `json:"lock"`
	Expect   Expectation `json:"expectation"`
	Runs     int         `json:"runs"`
	Failed   int         `json:"failed"`  // runs whose verdict was fail
	Unknown  int         `json:"unknown"` // runs the checker could not decide
	Errors   int         `json:"errors"`  // runs the harness could not complete
	Met      int         `json:"met"`
	// Decisive runs had a verdict that counts: a violation, or a pass above
	// the evidence floor. Inconclusive runs did not, and are not in Decisive.
	Decisive     int `json:"decisive"`
	Inconclusive int `json:"inconclusive"`
	// MedianFirstViolation over the failing runs, or -1.
	MedianFirstViolation time.Duration `json:"median_first_violation_ns"`
	// When runs share a seed (run --same-seed): SameSeedRuns is how many
	// ran (not skipped) with the first run's seed, SameVerdict how many of
	// them gave the most common verdict, and SameEvidence how many gave the
	// most common verdict and evidence counts together (fault windows,
	// exercised moments, cycles, decisive violations). Zero otherwise.
	SameSeedRuns int `json:"same_seed_runs,omitempty"`
	SameVerdict  int `json:"same_verdict,omitempty"`
	SameEvidence int `json:"same_evidence,omitempty"`
}

// Aggregates groups results by cell, in order.
func Aggregates(cells []*Cell) []Aggregate {
	var out []Aggregate
	idx := map[string]int{}
	firsts := map[string][]int64{}
	for _, r := range cells {
		k := r.Name()
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Aggregate{Scenario: r.Scenario, Lock: r.Lock, Expect: r.Expect, MedianFirstViolation: -1})
		}
		a := &out[i]
		a.Runs++
		switch {
		case r.Outcome == HarnessError:
			a.Errors++
		case r.Verdict == checker.Fail:
			a.Failed++
			a.Decisive++
			firsts[k] = append(firsts[k], r.Stats.FirstViolation)
		case r.Verdict == checker.Unknown:
			a.Unknown++
		case r.Outcome == Inconclusive:
			a.Inconclusive++
		case r.Verdict == checker.Pass:
			a.Decisive++
		}
		if r.Outcome == Met {
			a.Met++
		}
	}
	for k, fs := range firsts {
		sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
		out[idx[k]].MedianFirstViolation = time.Duration(fs[len(fs)/2])
	}
	sameSeed(cells, idx, out)
	return out
}

// sameSeed fills the agreement counts of cells whose runs share a seed.
func sameSeed(cells []*Cell, idx map[string]int, out []Aggregate) {
	type fingerprint struct {
		verdict                              checker.Status
		fired, exercised, cycles, violations int
	}
	seeds := map[string]int64{}
	verdicts := map[string]map[checker.Status]int{}
	prints := map[string]map[fingerprint]int{}
	runs := map[string]int{}
	for _, r := range cells {
		k := r.Name()
		if r.Outcome == Skipped {
			continue
		}
		if s, ok := seeds[k]; !ok {
			seeds[k] = r.RunSeed
			verdicts[k], prints[k] = map[checker.Status]int{}, map[fingerprint]int{}
		} else if s != r.RunSeed {
			continue
		}
		runs[k]++
		verdicts[k][r.Verdict]++
		prints[k][fingerprint{r.Verdict, r.Evidence.Fired, r.Evidence.Exercised, r.Evidence.Cycles, r.Violations}]++
	}
	for k, n := range runs {
		if n < 2 {
			continue
		}
		a := &out[idx[k]]
		a.SameSeedRuns = n
		for _, c := range verdicts[k] {
			a.SameVerdict = max(a.SameVerdict, c)
		}
		for _, c := range prints[k] {
			a.SameEvidence = max(a.SameEvidence, c)
		}
	}
}

// Replay is a simulated finding rerun on a real backend: the same cell with
// the same run seed (so the same fault schedule), on real Redis.
type Replay struct {
	Scenario string `json:"scenario"`
	Lock     string `json:"lock"`
	RunSeed  int64  `json:"run_seed"`
	// SimFirst is when the simulation saw its first violation.
	SimFirst time.Duration `json:"sim_first_violation_ns"`
	// Backend ran the replay; Verdict, Outcome and Summary are its result.
	Backend    string         `json:"backend"`
	Verdict    checker.Status `json:"verdict,omitempty"`
	Outcome    Outcome        `json:"outcome"`
	Reproduced bool           `json:"reproduced"`
	Summary    string         `json:"summary"`
	History    string         `json:"history,omitempty"`
	Rerun      string         `json:"rerun"`
}
