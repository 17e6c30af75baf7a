// Package choose is the answer to "which lock should I use?": every lock
// (built in, from a library, or the user's own) run through the same
// fault families on the services it needs, over the same seeds, with its
// liveness, its margins and its cost beside a bare round trip to its
// service, in one table a design review can read. Each cell of the table
// is a set of ordinary cells of the matrix (scenarios), judged by the one
// checker and held to their lock's expectation; a disagreement is the
// table's gate.
package choose

import (
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// FormatVersion is the version of choose.json (docs/schema/choose.v1.json).
const FormatVersion = 1

// Table is the whole comparison: choose.json.
type Table struct {
	Format  int       `json:"format"`
	Tool    string    `json:"tool"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Elapsed is the whole run; Phases what each part of it took.
	Elapsed time.Duration            `json:"elapsed_ns"`
	Phases  map[string]time.Duration `json:"phases_ns"`
	Command string                   `json:"command,omitempty"`
	Backend string                   `json:"backend"`
	// Servers are the servers' versions ("redis-server 7.0.15").
	Servers []string `json:"servers,omitempty"`
	// Seed is the first run seed; every cell runs Seeds times with seeds
	// Seed, Seed+1, ...
	Seed  int64 `json:"seed"`
	Seeds int   `json:"seeds"`
	// Quick says the short form ran: one scenario per row and family.
	Quick bool `json:"quick"`
	// TimeScale is the factor every cell's times were stretched by on
	// this machine (1: as designed); Calibration says why.
	TimeScale   float64 `json:"time_scale"`
	Calibration string  `json:"calibration,omitempty"`
	// Families are the columns of the safety part, in order, each with
	// what it means.
	Families []Family `json:"families"`
	// MarginFamilies are the columns of the margins part.
	MarginFamilies []string `json:"margin_families"`
	// MarginsFrom says where the margins came from (a search run here, a
	// file), or why there are none.
	MarginsFrom string `json:"margins_from"`
	Rows        []*Row `json:"rows"`
	// Disagreements are the cells whose runs disagreed with their lock's
	// expectation: the gate (exit 1 when there is one).
	Disagreements []Disagreement `json:"disagreements"`
	// Undecided counts runs that decided nothing (unknown, inconclusive,
	// a harness error): they neither pass nor fail the gate, and every
	// cell that had one says so.
	Undecided int `json:"undecided"`
	// Skipped are the cells the backend could not run, with why: not
	// in the table.
	Skipped []string `json:"skipped,omitempty"`
	// Runs is how many cell runs the table rests on.
	Runs        int  `json:"runs"`
	Interrupted bool `json:"interrupted,omitempty"`
}

// Family is a column: a fault family and what it does.
type Family struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// Row is one lock on one deployment: a lock on single Redis and the same
// lock on Redis Cluster are two rows.
type Row struct {
	// Name is the lock's, with the place when it is not the lock's own
	// deployment ("token @ Redis Cluster").
	Name  string `json:"name"`
	Lock  string `json:"lock"`
	Doc   string `json:"doc"`
	Place string `json:"place,omitempty"`
	// User says the lock is not built in (a driver process, a library, a
	// Go lock given to lockchaostest.Choose).
	User  bool  `json:"user_lock,omitempty"`
	Needs Needs `json:"needs"`
	// Safety has a cell per family the row meets (the baseline, no
	// faults, first), in Families' order.
	Safety   []*Cell  `json:"safety"`
	Liveness Liveness `json:"liveness"`
	// Margins has a cell per margin family searched for the lock.
	Margins []Margin `json:"margins,omitempty"`
	Cost    *Cost    `json:"cost,omitempty"`
	// Verdict is the row in one word: safe (no run broke it, and its
	// design says safe under every family it met), unsafe (some run broke
	// it), unproven (no run broke it, but its design allows a violation
	// under some family, or nothing says what it should do: a user's
	// lock), undecided (some family decided nothing).
	Verdict string `json:"verdict"`
	// Sentence says when to use the lock and what it costs, derived from
	// the figures and the lock's traits.
	Sentence string `json:"sentence"`
}

// Needs is what a lock asks of its users.
type Needs struct {
	// Servers: "1 Redis", "3 independent Redis", "Redis Cluster (3 shards)",
	// "PostgreSQL", "3 etcd members", or "none (in-process)".
	Servers string `json:"servers"`
	// Resource is the protected resource's part: "checks a fence",
	// "in the lock's transaction", or "nothing".
	Resource string `json:"resource"`
	// Settings are server settings the lock relies on ("" for defaults).
	Settings string `json:"settings,omitempty"`
	// Traits are the lock's traits in words (lockimpl.Spec.Describe).
	Traits string `json:"traits"`
}

// Cell is one family of one row: every run of every scenario of that
// family on that row's lock.
type Cell struct {
	Family string `json:"family"`
	// Scenarios are the matrix's scenarios behind the cell.
	Scenarios []string `json:"scenarios"`
	// Expect is the lock's safety expectation here (the strictest of
	// its scenarios': unsafe if any says unsafe, else either, else
	// safe); Liveness likewise (stuck, either, live).
	Expect   results.Expectation `json:"expect"`
	Liveness results.Expectation `json:"liveness_expect"`
	// Runs decided safety: Unsafe of them found a decisive safety
	// violation (two holders at once, a lost update, a release of
	// another's lock, a fence out of order).
	Runs   int `json:"runs"`
	Unsafe int `json:"unsafe"`
	// LivenessRuns judged liveness: Stuck of them found the lock stuck.
	LivenessRuns int `json:"liveness_runs"`
	Stuck        int `json:"stuck"`
	// Undecided runs decided no safety verdict (unknown, inconclusive, an
	// error), with why in Notes; Decided runs met or failed their
	// expectation in either group (a stuck lock's run may decide its
	// liveness alone).
	Undecided int      `json:"undecided"`
	Decided   int      `json:"decided"`
	Notes     []string `json:"notes,omitempty"`
	// Disagree says some run disagreed with the expectation.
	Disagree bool `json:"disagree,omitempty"`
	// Why is the expectation's reason, where the catalog gives one.
	Why string `json:"why,omitempty"`
	// Violation names a run that found one, to look at: its scenario
	// and rerun line.
	Violation string `json:"violation,omitempty"`
}

// Liveness is what the row showed of its lock's liveness: how long a
// stopped holder's key stayed taken, per cause, and whether the lock
// acquires while a minority of its nodes is gone.
type Liveness struct {
	Crash     Recovery  `json:"crash"`
	Hang      Recovery  `json:"hang"`
	Partition Recovery  `json:"partition"`
	Minority  Tolerance `json:"minority"`
}

// Recovery is every judged recovery of one cause over the row's runs.
type Recovery struct {
	Cause string `json:"cause"` // as the checker says it: crashed, abandoned, cut off
	// N recoveries were judged; Stuck of them stayed taken past their
	// bound; NeverFreed were not acquired again before the cell ended
	// (no recovery time: the figures are over the others).
	N          int `json:"n"`
	Stuck      int `json:"stuck"`
	NeverFreed int `json:"never_freed"`
	// Median and Max are in real time, MedianTTL and MaxTTL in TTLs of
	// their cells (each recovery over its own cell's TTL, time scale
	// included).
	Median    time.Duration `json:"median_ns,omitempty"`
	Max       time.Duration `json:"max_ns,omitempty"`
	MedianTTL float64       `json:"median_ttl,omitempty"`
	MaxTTL    float64       `json:"max_ttl,omitempty"`
	// All are every judged recovery, for the plots; AllTTL the same in
	// TTLs of their cells, each sorted.
	All    []time.Duration `json:"all_ns,omitempty"`
	AllTTL []float64       `json:"all_ttl,omitempty"`

	ttls []time.Duration // each recovery's cell's TTL, as All was added
}

// Tolerance is whether the lock kept granting while a minority of its
// nodes was down or cut off.
type Tolerance struct {
	// Applicable is false for a lock on one node (there is no minority
	// to lose), or where no scenario took one; Why says which.
	Applicable bool   `json:"applicable"`
	Why        string `json:"why,omitempty"`
	// Runs took a minority down: Live of them judged liveness and passed
	// with the evidence floor met, Stuck failed fault tolerance; the rest
	// decided nothing.
	Runs  int `json:"runs"`
	Live  int `json:"live"`
	Stuck int `json:"stuck"`
	// FreeWhileTrying is the largest share of node-down time a key was
	// free while a pod that reached a majority tried for it.
	FreeWhileTrying float64 `json:"free_while_trying"`
}

// Margin is the smallest magnitude of a family that broke the lock.
type Margin struct {
	Family string `json:"family"`
	// Broke says the lock broke within the search's cap; AtTTL is the
	// smallest breaking magnitude in TTLs, HeldTTL the largest below it
	// that held. BreaksBelow: it breaks at or below AtTTL (a restart
	// delay) and holds above.
	Broke       bool    `json:"broke"`
	AtTTL       float64 `json:"at_ttl,omitempty"`
	HeldTTL     float64 `json:"held_ttl,omitempty"`
	CapTTL      float64 `json:"cap_ttl"`
	BreaksBelow bool    `json:"breaks_below,omitempty"`
	// Agrees says the boundary is where the lock's design predicts.
	Agrees bool   `json:"agrees"`
	Note   string `json:"note,omitempty"`
}

// Cost is a lock cycle's price beside its service's floor, both measured
// in the same run, through the same links.
type Cost struct {
	// Floor is the bare round trip (Redis PING, PostgreSQL SELECT 1, etcd
	// Get) and its latency.
	FloorOp  string        `json:"floor_op,omitempty"`
	FloorP50 time.Duration `json:"floor_p50_ns,omitempty"`
	FloorP99 time.Duration `json:"floor_p99_ns,omitempty"`
	// Cycle is one uncontended acquire, resource read and write (in the
	// lock's transaction where it has one), release; Samples of them.
	CycleP50 time.Duration `json:"cycle_p50_ns,omitempty"`
	CycleP99 time.Duration `json:"cycle_p99_ns,omitempty"`
	Samples  int           `json:"samples,omitempty"`
	// RatioP50 and RatioP99 are the cycle over the floor.
	RatioP50 float64 `json:"ratio_p50,omitempty"`
	RatioP99 float64 `json:"ratio_p99,omitempty"`
	// Contended is cycles per second with 8 pods on one key and 2 ms
	// critical sections; Ceiling the most one key allows (one 2 ms
	// section after another: 500/s), Share Contended over Ceiling.
	Contended         float64 `json:"contended_per_s,omitempty"`
	ContendedScenario string  `json:"contended_scenario,omitempty"`
	Ceiling           float64 `json:"ceiling_per_s,omitempty"`
	Share             float64 `json:"share,omitempty"`
	// Error says why a part was not measured.
	Error string `json:"error,omitempty"`
}

// Disagreement is a run that disagreed with its lock's expectation.
type Disagreement struct {
	Row    string          `json:"row"`
	Family string          `json:"family"`
	Cell   string          `json:"cell"` // scenario/lock
	Seed   int64           `json:"seed"`
	Out    results.Outcome `json:"outcome"`
	Why    string          `json:"why"`
	Rerun  string          `json:"rerun"`
}

// undecided says a run decided nothing the gate can hold it to.
func undecided(r *results.Cell) bool {
	switch r.Outcome {
	case results.Met, results.Regression, results.Missed:
		return false
	}
	return true
}

// safetyDecided is the run's safety verdict when it decided one.
func safetyDecided(r *results.Cell) (unsafe, ok bool) {
	if r.Outcome == results.HarnessError || r.Outcome == results.Skipped {
		return false, false
	}
	switch r.SafetyVerdict {
	case checker.Fail:
		return true, true
	case checker.Pass:
		return false, r.Evidence.Enough
	}
	return false, false
}
