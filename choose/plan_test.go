package choose

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// catalogCells are the built-in catalog's cells of locks.
func catalogCells(t *testing.T, locks ...string) []scenarios.Cell {
	t.Helper()
	cells, err := scenarios.Select(scenarios.Catalog(), nil, locks)
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

// The catalog lays out as rows per lock and place, columns per family:
// the token lock on Redis and on Redis Cluster are two rows, the no-fault
// column comes first, and quick keeps one scenario per row and family.
func TestPlanLaysTheCatalogOutByLockPlaceAndFamily(t *testing.T) {
	p := NewPlan(catalogCells(t, lockimpl.NameToken, lockimpl.NameEtcdMutex, lockimpl.NamePGRowTuned), false)
	var names []string
	for _, r := range p.Rows {
		names = append(names, r.Name)
	}
	want := []string{"token", "token @ Redis Cluster", "pg-row-tuned", "etcd-mutex"}
	if !slices.Equal(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	token := p.Rows[0]
	if token.Safety[0].Family != NoFaults {
		t.Errorf("first column %q, want %q", token.Safety[0].Family, NoFaults)
	}
	crash := token.Cell("holder crashed")
	if crash == nil || !slices.Equal(crash.Scenarios, []string{"pod-crash", "pod-crash-restart"}) {
		t.Fatalf("token's holder-crashed cell: %+v", crash)
	}
	if c := token.Cell("paused holder"); c == nil || c.Expect != results.Unsafe {
		t.Errorf("token's paused-holder cell %+v: want expected unsafe", c)
	}
	if got := p.Rows[1].Needs.Servers; !strings.HasPrefix(got, "Redis Cluster") {
		t.Errorf("cluster row needs %q", got)
	}
	if got := p.Rows[2].Needs; got.Resource != "in the lock's transaction" || got.Settings == "" {
		t.Errorf("pg-row-tuned needs %+v", got)
	}
	if got := p.Rows[3].Needs.Servers; got != "3 etcd members" {
		t.Errorf("etcd-mutex needs %q", got)
	}
	if c := p.Cost["token"]; c.Scenario.Name != "baseline" {
		t.Errorf("token's cost cell %s, want baseline", c.Name())
	}
	quick := NewPlan(catalogCells(t, lockimpl.NameToken), true)
	if c := quick.Rows[0].Cell("holder crashed"); len(c.Scenarios) != 1 {
		t.Errorf("quick: holder crashed from %v, want one scenario", c.Scenarios)
	}
	if len(quick.Cells) >= len(NewPlan(catalogCells(t, lockimpl.NameToken), false).Cells) {
		t.Error("quick runs as many cells as the full table")
	}
}

// run is a finished run of scenario/lock as the matrix returns it.
func run(scenario, lock string, safety, liveness checker.Status, outcome results.Outcome, seed int64) *results.Cell {
	return &results.Cell{Scenario: scenario, Lock: lock, SafetyVerdict: safety, LivenessVerdict: liveness, Outcome: outcome,
		RunSeed: seed, TTL: 300 * time.Millisecond, Evidence: checker.Evidence{Enough: true}, Rerun: "lockchaos run ..."}
}

// Runs count in their cell: unsafe k/n, stuck, undecided, and a run that
// disagrees with its expectation is named; the row's verdict, its
// recoveries in TTLs and its sentence follow from them alone.
func TestRunsFoldIntoCellsFiguresAndSentences(t *testing.T) {
	p := NewPlan(catalogCells(t, lockimpl.NameToken, lockimpl.NameFenced), false)
	var disagree []*Disagreement
	add := func(r *results.Cell) {
		if d := p.Add(r); d != nil {
			disagree = append(disagree, d)
		}
	}
	add(run("gc-pause", "token", checker.Fail, "", results.Met, 1))
	add(run("gc-pause", "token", checker.Fail, "", results.Met, 2))
	add(run("gc-pause", "fenced", checker.Pass, "", results.Met, 1))
	add(run("baseline", "fenced", checker.Fail, "", results.Regression, 3))
	unknown := run("gc-pause", "fenced", checker.Unknown, "", results.Unknown, 2)
	unknown.Why = "porcupine timed out"
	add(unknown)
	crash := run("pod-crash", "token", checker.Pass, checker.Pass, results.Met, 1)
	crash.LivenessFigures = &checker.Liveness{FreeWhileTrying: -1, Recoveries: []checker.Recovery{
		{Cause: "crashed", Judged: true, Recovered: true, After: 300 * time.Millisecond},
		{Cause: "crashed", Judged: true, Recovered: true, After: 450 * time.Millisecond},
		{Cause: "crashed", Judged: true, Recovered: true, After: 330 * time.Millisecond},
		{Cause: "crashed", Judged: false, After: 10 * time.Second},
	}}
	add(crash)
	p.finish()

	token, fenced := rowNamed(t, p, "token"), rowNamed(t, p, "fenced")
	if got := token.Cell("paused holder").Text(); got != "unsafe 2/2" {
		t.Errorf("token paused holder %q", got)
	}
	if got := fenced.Cell("paused holder").Text(); got != "safe 0/1 +1 undecided" {
		t.Errorf("fenced paused holder %q", got)
	}
	if got := fenced.Cell(NoFaults).Text(); got != "unsafe 1/1 !" {
		t.Errorf("fenced baseline %q", got)
	}
	if len(disagree) != 1 || disagree[0].Cell != "baseline/fenced" || disagree[0].Seed != 3 {
		t.Fatalf("disagreements %+v, want baseline/fenced seed 3", disagree)
	}
	c := token.Liveness.Crash
	if c.N != 3 || c.Median != 330*time.Millisecond || c.Max != 450*time.Millisecond || c.MaxTTL != 1.5 {
		t.Errorf("crash recovery %+v: want 3 judged, median 330 ms, max 450 ms = 1.5 TTL", c)
	}
	if token.Verdict != VerdictUnsafe || !strings.Contains(token.Sentence, "Unsafe under paused holder (2/2)") ||
		!strings.Contains(token.Sentence, "for efficiency only") {
		t.Errorf("token: %s: %s", token.Verdict, token.Sentence)
	}
	if token.Liveness.Minority.Applicable || !strings.Contains(token.Liveness.Minority.Why, "one server") {
		t.Errorf("token's minority: %+v", token.Liveness.Minority)
	}
}

// The sentence is one rule for every row: a lock safe under every family
// with a fence is fit for billing if its resource checks the fence; one
// broken by a server fault is for harmless duplicates only; a stuck key
// is said.
func TestSentencesFollowTheFiguresAndTraits(t *testing.T) {
	safeCells := func() []*Cell {
		return []*Cell{{Family: NoFaults, Runs: 3, Expect: results.Safe}, {Family: "paused holder", Runs: 3, Expect: results.Safe}}
	}
	safe := &Row{Needs: Needs{Resource: "checks a fence"}, Safety: safeCells()}
	safe.Verdict = verdictOf(safe)
	if s := sentence(safe, lockimpl.Spec{Nodes: 1}); safe.Verdict != VerdictSafe ||
		!strings.Contains(s, "fit for billing, if the resource checks") {
		t.Errorf("safe fenced row (%s): %s", safe.Verdict, s)
	}
	// The same runs, but the design allows a violation under one family:
	// no violation seen is not safe.
	allowed := &Row{Needs: Needs{Resource: "checks a fence"}, Safety: safeCells()}
	allowed.Safety[1].Expect = results.Either
	allowed.Verdict = verdictOf(allowed)
	if s := sentence(allowed, lockimpl.Spec{Nodes: 1}); allowed.Verdict != VerdictUnproven || strings.Contains(s, "fit for") ||
		!strings.Contains(s, "allows one under paused holder") || allowed.Safety[1].Text() != "allowed 0/3" {
		t.Errorf("allowed row (%s, %q): %s", allowed.Verdict, allowed.Safety[1].Text(), s)
	}
	user := &Row{User: true, Safety: safeCells()}
	for _, c := range user.Safety {
		c.Expect = results.Either
	}
	user.Verdict = verdictOf(user)
	if s := sentence(user, lockimpl.Spec{Nodes: 1}); strings.Contains(s, "fit for") || !strings.Contains(s, "cannot show it safe") {
		t.Errorf("a user's lock with no violation: %s", s)
	}
	server := &Row{Needs: Needs{Resource: "nothing"}, Safety: []*Cell{
		{Family: "failover", Runs: 3, Unsafe: 2}, {Family: "holder hung", Runs: 3, LivenessRuns: 3, Stuck: 3}}}
	server.Verdict = verdictOf(server)
	s := sentence(server, lockimpl.Spec{Nodes: 1})
	for _, want := range []string{"failover (2/3)", "a server fault among them", "Stuck", "holder hung (3/3)"} {
		if !strings.Contains(s, want) {
			t.Errorf("server-broken row: %q lacks %q", s, want)
		}
	}
	cost := &Row{Safety: []*Cell{{Family: NoFaults, Runs: 1}}, Cost: &Cost{FloorOp: "PING", FloorP50: 100 * time.Microsecond,
		CycleP50: 250 * time.Microsecond, RatioP50: 2.5, Contended: 400, Share: 0.8}}
	if s := sentence(cost, lockimpl.Spec{Nodes: 1}); !strings.Contains(s, "2.5x a bare PING") || !strings.Contains(s, "80%") {
		t.Errorf("cost: %s", s)
	}
}

// The gate: a disagreement exits 1, a table cell that decided nothing 4,
// nothing decided at all 3.
func TestExitCodes(t *testing.T) {
	ok := &Table{Runs: 2, Rows: []*Row{{Safety: []*Cell{{Runs: 2, Decided: 2}}}}}
	hole := &Table{Runs: 2, Undecided: 1, Rows: []*Row{{Safety: []*Cell{{Runs: 1, Decided: 1}, {Undecided: 1}}}}}
	none := &Table{Runs: 2, Undecided: 2}
	bad := &Table{Runs: 2, Disagreements: []Disagreement{{}}}
	for _, c := range []struct {
		t    *Table
		want int
	}{{ok, 0}, {bad, 1}, {none, 3}, {hole, 4}} {
		if got := c.t.ExitCode(); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c.t, got, c.want)
		}
	}
}

func rowNamed(t *testing.T, p *Plan, name string) *Row {
	t.Helper()
	for _, r := range p.Rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %s", name)
	return nil
}
