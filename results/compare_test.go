package results_test

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

const (
	pass    = checker.Pass
	fail    = checker.Fail
	unknown = checker.Unknown
	none    = checker.Status("")
)

var (
	enough = checker.Evidence{Enough: true}
	short  = checker.Evidence{Enough: false, Short: []string{"too few cycles: 15 completed"}}
)

// TestCompareGroups walks every group outcome and how the two combine:
// each group as the one-group Compare would have it, a liveness group that
// judged nothing left out when live (or either) was expected and
// inconclusive when stuck was, and an inconclusive group excused only by a
// decisive expected failure of the other.
func TestCompareGroups(t *testing.T) {
	exp := func(s, l results.Expectation) results.Expect { return results.Expect{Safety: s, Liveness: l} }
	cases := []struct {
		name             string
		e                results.Expect
		safety, liveness checker.Status
		ev               checker.Evidence
		wantS, wantL     results.Outcome
		want             results.Outcome
		why              string
	}{
		{"safe, live, nothing judged of liveness", exp(results.Safe, results.Live), pass, none, enough, results.Met, "", results.Met, ""},
		{"default liveness is live", exp(results.Safe, ""), pass, none, enough, results.Met, "", results.Met, ""},
		{"safe and live, both pass", exp(results.Safe, results.Live), pass, pass, enough, results.Met, results.Met, results.Met, ""},
		{"live lock stuck", exp(results.Safe, results.Live), pass, fail, enough, results.Met, results.Regression, results.Regression, ""},
		{"safe lock unsafe", exp(results.Safe, results.Live), fail, pass, enough, results.Regression, results.Met, results.Regression, ""},
		{"unsafe detected, live", exp(results.Unsafe, results.Live), fail, pass, enough, results.Met, results.Met, results.Met, ""},
		{"unsafe missed", exp(results.Unsafe, results.Live), pass, none, enough, results.Missed, "", results.Missed, ""},
		{"stuck caught", exp(results.Safe, results.Stuck), pass, fail, enough, results.Met, results.Met, results.Met, ""},
		{"stuck missed", exp(results.Safe, results.Stuck), pass, pass, enough, results.Met, results.Missed, results.Missed, ""},
		{"stuck, liveness not judged", exp(results.Safe, results.Stuck), pass, none, enough, results.Met, results.Inconclusive,
			results.Inconclusive, "liveness not judged: nothing showed the lock stuck"},
		{"regression beats missed", exp(results.Unsafe, results.Live), pass, fail, enough, results.Missed, results.Regression,
			results.Regression, ""},
		{"missed beats unknown", exp(results.Unsafe, results.Live), pass, unknown, enough, results.Missed, results.Unknown,
			results.Missed, ""},
		{"unknown liveness", exp(results.Safe, results.Live), pass, unknown, enough, results.Met, results.Unknown, results.Unknown, ""},
		{"unknown safety", exp(results.Safe, results.Stuck), unknown, fail, enough, results.Unknown, results.Met, results.Unknown, ""},
		{"either liveness fails", exp(results.Safe, results.Either), pass, fail, enough, results.Met, results.Met, results.Met, ""},
		{"either safety passes below the floor", exp(results.Either, results.Live), pass, none, short, results.Inconclusive, "",
			results.Inconclusive, ""},
		// The lock deadlocked after its first crash: too few cycles for
		// safety, and the deadlock is the finding.
		{"stuck caught, safety below the floor", exp(results.Safe, results.Stuck), pass, fail, short, results.Inconclusive,
			results.Met, results.Met, "safety not judged: too few cycles: 15 completed"},
		{"stuck caught, safety unsafe below the floor", exp(results.Unsafe, results.Stuck), pass, fail, short,
			results.Inconclusive, results.Met, results.Met, "safety not judged"},
		{"unsafe caught, stuck not judged", exp(results.Unsafe, results.Stuck), fail, none, short, results.Met,
			results.Inconclusive, results.Met, "liveness not judged: nothing showed"},
		{"live pass below the floor, safety caught", exp(results.Unsafe, results.Live), fail, pass, short, results.Met,
			results.Inconclusive, results.Met, "liveness not judged: too few cycles"},
		// A pass is no excuse: only an expected failure is decisive.
		{"live lock passes, safety below the floor", exp(results.Safe, results.Live), pass, pass, short, results.Inconclusive,
			results.Inconclusive, results.Inconclusive, ""},
		{"either liveness fails, safety below the floor", exp(results.Safe, results.Either), pass, fail, short,
			results.Inconclusive, results.Met, results.Inconclusive, ""},
		{"both inconclusive", exp(results.Safe, results.Stuck), pass, none, short, results.Inconclusive, results.Inconclusive,
			results.Inconclusive, "liveness not judged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.e.Compare(results.Verdicts{Safety: c.safety, Liveness: c.liveness}, c.ev)
			if got.Safety != c.wantS || got.Liveness != c.wantL || got.Outcome != c.want {
				t.Errorf("safety %s, liveness %s: got %s/%s -> %s, want %s/%s -> %s", c.safety, c.liveness,
					got.Safety, got.Liveness, got.Outcome, c.wantS, c.wantL, c.want)
			}
			if c.why == "" && got.Why != "" || !strings.Contains(got.Why, c.why) {
				t.Errorf("why %q, want %q", got.Why, c.why)
			}
		})
	}
}

// TestCompareMayFail: the properties allowed to fail may fail; any other
// decisive failure is a regression that names it, whatever else failed.
func TestCompareMayFail(t *testing.T) {
	e := results.Expect{MayFail: []checker.Property{checker.MutualExclusion}}
	allowed := results.Verdicts{Safety: fail, Failed: []checker.Property{checker.MutualExclusion}}
	if c := e.Compare(allowed, enough); c.Outcome != results.Met || c.Safety != results.Met || c.Why != "" {
		t.Errorf("only mutual-exclusion failed: %+v, want met", c)
	}
	both := results.Verdicts{Safety: fail, Failed: []checker.Property{checker.MutualExclusion, checker.ForeignRelease}}
	c := e.Compare(both, enough)
	want := "foreign-release failed, not among the properties expected to fail [mutual-exclusion]"
	if c.Outcome != results.Regression || c.Safety != results.Regression || c.Why != want {
		t.Errorf("a foreign release besides: %+v, want regression: %s", c, want)
	}
	// Two holders at once lose the resource's updates: mutual exclusion
	// allows resource-linearizable to fail with it.
	lost := results.Verdicts{Safety: fail, Failed: []checker.Property{checker.MutualExclusion, checker.ResourceLinearizable}}
	if c := e.Compare(lost, enough); c.Outcome != results.Met {
		t.Errorf("mutual-exclusion and its lost updates: %+v, want met", c)
	}
	fenced := results.Expect{MayFail: []checker.Property{checker.FenceOrder}}
	if c := fenced.Compare(lost, enough); c.Outcome != results.Regression ||
		c.Why != "mutual-exclusion, resource-linearizable failed, not among the properties expected to fail [fence-order]" {
		t.Errorf("fence-order allowed, the rest failed: %+v", c)
	}
	// A failure outside the list is decisive even below the floor.
	if c := e.Compare(both, short); c.Outcome != results.Regression {
		t.Errorf("below the floor: %s, want regression", c.Outcome)
	}
	if c := e.Compare(results.Verdicts{Safety: pass}, enough); c.Outcome != results.Missed {
		t.Errorf("nothing failed: %s, want missed (MayFail implies unsafe)", c.Outcome)
	}
	// A liveness failure is the liveness group's to judge, not MayFail's.
	stuck := results.Verdicts{Safety: fail, Liveness: fail, Failed: []checker.Property{checker.MutualExclusion, checker.DeadlockFree}}
	if c := e.Compare(stuck, enough); c.Safety != results.Met || c.Liveness != results.Regression {
		t.Errorf("deadlock-free failed on a live cell: %+v, want safety met, liveness regression", c)
	}
}

// TestOneGroupCompare keeps the one-group comparison of before, for both
// groups' words.
func TestOneGroupCompare(t *testing.T) {
	cases := []struct {
		e    results.Expectation
		v    checker.Status
		want results.Outcome
	}{
		{results.Safe, pass, results.Met}, {results.Safe, fail, results.Regression},
		{results.Unsafe, fail, results.Met}, {results.Unsafe, pass, results.Missed},
		{results.Live, pass, results.Met}, {results.Live, fail, results.Regression},
		{results.Stuck, fail, results.Met}, {results.Stuck, pass, results.Missed},
		{results.Either, fail, results.Met}, {results.Safe, unknown, results.Unknown}, {results.Stuck, unknown, results.Unknown},
	}
	for _, c := range cases {
		if got := results.Compare(c.e, c.v, enough); got != c.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", c.e, c.v, got, c.want)
		}
	}
	for _, e := range []results.Expectation{results.Safe, results.Unsafe, results.Either, results.Live, results.Stuck} {
		if got := results.Compare(e, pass, short); got != results.Inconclusive {
			t.Errorf("%s pass below the floor: %s, want inconclusive", e, got)
		}
	}
	if got := results.Compare(results.Unsafe, fail, short); got != results.Met {
		t.Errorf("unsafe detected below the floor: %s, want met", got)
	}
	if got := results.Compare(results.Safe, fail, short); got != results.Regression {
		t.Errorf("safe failing below the floor: %s, want regression", got)
	}
}

// TestVerdictsOf reads group verdicts off checker results, and adds parts.
func TestVerdictsOf(t *testing.T) {
	rs := []checker.Result{
		{Property: checker.MutualExclusion, Status: fail, Decisive: false}, // fenced: shown, not counted
		{Property: checker.ResourceLinearizable, Status: pass, Decisive: true},
		{Property: checker.ForeignRelease, Status: fail, Decisive: true},
		{Property: checker.DeadlockFree, Status: pass, Decisive: true}, // judged nothing
		{Property: checker.FaultTolerant, Status: pass, Decisive: true},
	}
	v := results.VerdictsOf(rs)
	if v.Safety != fail || v.Liveness != none || len(v.Failed) != 1 || v.Failed[0] != checker.ForeignRelease {
		t.Errorf("%+v, want safety fail, liveness not judged, foreign-release failed", v)
	}
	rs[3] = checker.Result{Property: checker.DeadlockFree, Status: fail, Decisive: true, Judged: 2}
	w := v.Add(results.VerdictsOf(rs))
	if w.Liveness != fail || len(w.Failed) != 2 {
		t.Errorf("added: %+v, want liveness fail and two properties failed", w)
	}
	if u := (results.Verdicts{Safety: unknown}).Add(results.Verdicts{Safety: pass, Liveness: pass}); u.Safety != unknown || u.Liveness != pass {
		t.Errorf("unknown over pass, pass over none: %+v", u)
	}
}

// TestSettled: a look at a running cell ends it on a regression, or once
// every group that expects a failure has one; a cell with properties
// allowed to fail runs on unless it regressed.
func TestSettled(t *testing.T) {
	exp := func(s, l results.Expectation) results.Expect { return results.Expect{Safety: s, Liveness: l} }
	me := []checker.Property{checker.MutualExclusion}
	cases := []struct {
		e    results.Expect
		v    results.Verdicts
		want bool
	}{
		{exp(results.Unsafe, results.Live), results.Verdicts{Safety: fail, Failed: me}, true},
		{exp(results.Unsafe, results.Live), results.Verdicts{Safety: pass, Liveness: fail}, true}, // a regression
		{exp(results.Unsafe, results.Live), results.Verdicts{Safety: pass}, false},
		{exp(results.Safe, results.Live), results.Verdicts{Safety: fail}, true},
		{exp(results.Safe, results.Stuck), results.Verdicts{Safety: pass, Liveness: fail}, true},
		{exp(results.Unsafe, results.Stuck), results.Verdicts{Safety: fail, Failed: me}, false},
		{exp(results.Unsafe, results.Stuck), results.Verdicts{Safety: pass, Liveness: fail}, false},
		{exp(results.Unsafe, results.Stuck), results.Verdicts{Safety: fail, Liveness: fail}, true},
		{exp(results.Either, results.Stuck), results.Verdicts{Safety: fail}, false},
		{exp(results.Either, results.Live), results.Verdicts{Safety: fail}, true},
		// A reported-only liveness failure leaves safety to show its pass.
		{exp(results.Safe, results.Either), results.Verdicts{Safety: pass, Liveness: fail}, false},
		// So does one whose safety may go either way (etcd-member-cut's
		// etcd-mutex ended at 5.7 s of 15 s, inconclusive).
		{exp(results.Either, results.Either), results.Verdicts{Safety: pass, Liveness: fail}, false},
		{exp(results.Either, results.Either), results.Verdicts{Safety: fail, Liveness: fail, Failed: me}, true},
		{exp(results.Unsafe, results.Either), results.Verdicts{Safety: fail, Liveness: fail, Failed: me}, true},
		{results.Expect{MayFail: me}, results.Verdicts{Safety: fail, Failed: me}, false},
		{results.Expect{MayFail: me}, results.Verdicts{Safety: fail, Failed: []checker.Property{checker.FenceOrder}}, true},
	}
	for _, c := range cases {
		if got := c.e.Settled(c.v); got != c.want {
			t.Errorf("%s with %+v: settled %v, want %v", c.e, c.v, got, c.want)
		}
	}
}
