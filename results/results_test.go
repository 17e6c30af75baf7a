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
	for _, c := range cases {
		if got := results.Compare(c.e, c.v); got != c.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", c.e, c.v, got, c.want)
		}
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
