package results_test

import (
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

func TestCompare(t *testing.T) {
	cases := []struct {
		e    results.Expectation
		v    checker.Status
		want results.Outcome
	}{
		{results.Safe, checker.Pass, results.Met},
		{results.Safe, checker.Fail, results.Regression},
		{results.Unsafe, checker.Fail, results.Met},
		{results.Unsafe, checker.Pass, results.Missed},
		{results.Either, checker.Fail, results.Met},
		{results.Safe, checker.Unknown, results.Unknown},
		{results.Unsafe, checker.Unknown, results.Unknown},
	}
	enough := checker.Evidence{Enough: true}
	for _, c := range cases {
		if got := results.Compare(c.e, c.v, enough); got != c.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", c.e, c.v, got, c.want)
		}
	}
	// Below the floor a pass is no verdict; a violation still is.
	short := checker.Evidence{Enough: false}
	for _, e := range []results.Expectation{results.Safe, results.Unsafe, results.Either} {
		if got := results.Compare(e, checker.Pass, short); got != results.Inconclusive {
			t.Errorf("%s pass below the floor: %s, want inconclusive", e, got)
		}
	}
	if got := results.Compare(results.Unsafe, checker.Fail, short); got != results.Met {
		t.Errorf("unsafe detected below the floor: %s, want met", got)
	}
	if got := results.Compare(results.Safe, checker.Fail, short); got != results.Regression {
		t.Errorf("safe failing below the floor: %s, want regression", got)
	}
}

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
