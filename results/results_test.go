package results_test

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

func TestAggregates(t *testing.T) {
	rs := []*results.Cell{
		{Scenario: "s", Lock: "l", Verdict: "fail", Outcome: results.Met, Stats: checker.Stats{FirstViolation: 300}},
		{Scenario: "s", Lock: "l", Verdict: "fail", Outcome: results.Met, Stats: checker.Stats{FirstViolation: 100}},
		{Scenario: "s", Lock: "l", Verdict: "pass", Outcome: results.Missed},
	}
	a := results.Aggregates(rs)
	if len(a) != 1 || a[0].Runs != 3 || a[0].Failed != 2 || a[0].Met != 2 || a[0].MedianFirstViolation != 300 {
		t.Fatalf("%+v", a)
	}
}

// TestAggregatesSameSeed counts how often runs that share a seed agree on
// the verdict, and on the verdict with the evidence counts; runs of other
// seeds and skipped runs are not compared.
func TestAggregatesSameSeed(t *testing.T) {
	run := func(seed int64, v checker.Status, cycles int) *results.Cell {
		return &results.Cell{Scenario: "gc-pause", Lock: "token", RunSeed: seed, Verdict: v, Outcome: results.Met,
			Evidence: checker.Evidence{Fired: 1, Exercised: 1, Cycles: cycles}}
	}
	cells := []*results.Cell{run(7, checker.Fail, 31), run(7, checker.Fail, 31), run(7, checker.Fail, 32), run(7, checker.Pass, 31),
		run(8, checker.Pass, 40), {Scenario: "gc-pause", Lock: "token", RunSeed: 7, Outcome: results.Skipped}}
	a := results.Aggregates(cells)[0]
	if a.SameSeedRuns != 4 || a.SameVerdict != 3 || a.SameEvidence != 2 {
		t.Errorf("same seed: %d runs, %d same verdict, %d same evidence; want 4, 3, 2", a.SameSeedRuns, a.SameVerdict, a.SameEvidence)
	}
	if b := results.Aggregates(cells[3:5])[0]; b.SameSeedRuns != 0 {
		t.Errorf("runs of different seeds compared: %+v", b)
	}
}

// TestHarnessErrorHasNoVerdict: a cell the harness could not run shows no
// verdict, even where the history it left (empty, or cut short) checked as
// a pass: a harness error is never a pass.
func TestHarnessErrorHasNoVerdict(t *testing.T) {
	broken := &results.Cell{Scenario: "baseline", Lock: "rb", Expect: results.Either, Verdict: checker.Pass,
		Outcome: results.HarnessError, Error: "driver rb (pod 0) exited before its hello line (exit status 3)"}
	if got := broken.ShownVerdict(); got != results.NoVerdict {
		t.Errorf("ShownVerdict of a harness error = %q, want %q", got, results.NoVerdict)
	}
	want := "baseline/rb: - (expected either): error: driver rb (pod 0) exited before its hello line (exit status 3)"
	if got := broken.Summary(); got != want {
		t.Errorf("Summary:\n got %s\nwant %s", got, want)
	}
	for _, c := range []results.Cell{
		{Verdict: checker.Pass, Outcome: results.Met},
		{Verdict: checker.Fail, Outcome: results.Interrupted},
	} {
		if got := c.ShownVerdict(); got != string(c.Verdict) {
			t.Errorf("%s cell: ShownVerdict %q, want %q", c.Outcome, got, c.Verdict)
		}
	}
	if got := (&results.Cell{Outcome: results.Skipped}).ShownVerdict(); got != results.NoVerdict {
		t.Errorf("skipped cell: ShownVerdict %q", got)
	}
}

// A skipped cell's line says "skipped" once: the reason the plan gives
// starts with the word too ("skipped: skipped: the sim backend ...").
func TestSkippedCellSaysSkippedOnce(t *testing.T) {
	c := &results.Cell{Scenario: "failover", Lock: "token", Expect: results.Unsafe, Outcome: results.Skipped,
		Error: "skipped: the sim backend cannot model replication"}
	if got := c.Summary(); strings.Count(got, "skipped") != 1 || !strings.HasSuffix(got, ": skipped: the sim backend cannot model replication") {
		t.Errorf("%q", got)
	}
}
