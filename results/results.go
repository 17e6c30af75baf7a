// Package results holds what a run learns about its cells: expectations,
// outcomes and the cell result itself. It sits below the runner
// (scenarios) and the writers (reports), so neither imports the other.
package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Cell is everything a run learned about one cell.
type Cell struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Lock        string `json:"lock"`
	LockTraits  string `json:"lock_traits,omitempty"`
	// Expect is the safety expectation (the whole of it before format 2
	// of summary.json), Liveness the liveness one ("" in older summaries:
	// live), MayFail the only properties allowed to fail (Expected puts
	// them together).
	Expect   Expectation        `json:"expectation"`
	Liveness Expectation        `json:"liveness_expectation,omitempty"`
	MayFail  []checker.Property `json:"may_fail,omitempty"`
	// Verdict is over every decisive property; SafetyVerdict and
	// LivenessVerdict over each group's ("" liveness: nothing judged).
	Verdict         checker.Status `json:"verdict,omitempty"`
	SafetyVerdict   checker.Status `json:"safety_verdict,omitempty"`
	LivenessVerdict checker.Status `json:"liveness_verdict,omitempty"`
	// Failed are the properties that failed decisively, over every part.
	FailedProperties []checker.Property `json:"failed_properties,omitempty"`
	// Outcome is the cell's, SafetyOutcome and LivenessOutcome each
	// group's ("" liveness: not judged, and not needed; see
	// Expect.Compare); Why says what the words alone do not.
	Outcome         Outcome `json:"outcome"`
	SafetyOutcome   Outcome `json:"safety_outcome,omitempty"`
	LivenessOutcome Outcome `json:"liveness_outcome,omitempty"`
	Why             string  `json:"why,omitempty"`
	Violations      int     `json:"violations"` // decisive ones
	// Incidents group the violations by cause; their count leads.
	Incidents []checker.Incident `json:"incidents,omitempty"`
	Overlaps  int                `json:"overlaps"`
	Results   []checker.Result   `json:"results,omitempty"`
	Stats     checker.Stats      `json:"stats"`
	// LivenessFigures are what the cell showed of its lock's liveness (each
	// stopped holder's recovery against the bound, the stretches nobody
	// held a key while someone tried), when there was any.
	LivenessFigures *checker.Liveness `json:"liveness,omitempty"`
	RunSeed         int64             `json:"run_seed"`
	CellSeed        int64             `json:"cell_seed"`
	TTL             time.Duration     `json:"ttl_ns,omitempty"`
	Topology        string            `json:"topology,omitempty"`
	Faults          int               `json:"fault_windows"`
	Evidence        checker.Evidence  `json:"evidence"`
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
func (r *Cell) Name() string { return CellName(r.Scenario, r.Lock) }

// NotStartedReason is the Error of a cell run whose context was
// cancelled before it started (scenarios.Execute gives it).
const NotStartedReason = "interrupted before it ran"

// NotStarted says r is a run an interrupt kept from starting: the table
// counts such runs in one line rather than a row each.
func (r *Cell) NotStarted() bool { return r.Outcome == Skipped && r.Error == NotStartedReason }

// CellName is the one spelling of a cell's name, "scenario/lock": the
// plan's, the result's and the reports' names of a cell must match.
func CellName(scenario, lock string) string { return scenario + "/" + lock }

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

// Summary is one line for people: "gc-pause/token: fail (expected
// unsafe): met, ..." while liveness is live and judged nothing, else each
// group with its expectation: "pod-crash/no-ttl: safety pass (safe),
// liveness fail (stuck): met".
func (r *Cell) Summary() string {
	s := fmt.Sprintf("%s/%s: %s (expected %s): %s", r.Scenario, r.Lock, r.ShownVerdict(), r.Expect, r.Outcome)
	if r.Grouped() {
		s = fmt.Sprintf("%s/%s: safety %s, liveness %s: %s", r.Scenario, r.Lock, r.SafetyText(), r.LivenessText(), r.Outcome)
	}
	if r.Why != "" {
		s += ": " + r.Why
	}
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
		// A skip reason starts "skipped: ": the outcome is said once.
		s += ": " + strings.TrimPrefix(r.Error, string(r.Outcome)+": ")
	}
	return s
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
