package checker_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// evidenceHistory is two pods on order:1 with three gc-pause windows,
// judged: the first exercised on a lease end the witness observed, the
// second not exercised on one assumed from the TTL, the third exercised
// on no lease at all. With overlap, client 1 acquires while client 0
// still holds: a decisive mutual-exclusion violation. The floor asks for
// 3 exercised moments: 2 is short of it.
func evidenceHistory(overlap bool) *history.History {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "gc-pause", Lock: "token",
		Clients: 2, TTL: 300 * time.Millisecond, Faults: []string{"gc-pause"},
		Floor: &history.Floor{MinExercised: 3, MinCycles: 1, MaxIndefinite: 0.5}}}
	add := func(e history.Event) int64 {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
		return e.ID
	}
	cycle := func(c int, tok string, at, until int64) {
		add(history.Event{Kind: history.Acquire, Client: c, Key: "order:1", Token: tok, Call: ms(at), Return: ms(at + 1), Outcome: history.Ok})
		add(history.Event{Kind: history.Release, Client: c, Key: "order:1", Token: tok, Call: ms(until), Return: ms(until + 1),
			Outcome: history.Ok})
	}
	cycle(0, "a", 0, 100)
	if overlap {
		cycle(1, "b", 50, 150)
	} else {
		cycle(1, "b", 200, 250)
	}
	for i, lease := range []string{history.LeaseObserved, history.LeaseAssumed, ""} {
		at := int64(300 + 100*i)
		w := history.Event{Kind: history.Fault, Client: -1, Call: ms(at), Return: ms(at + 50), Outcome: history.Ok,
			Window: history.FaultWindow("gc-pause", history.Hit{Pods: []int{0}})}
		w.ID = add(w)
		add(history.Judgment{Fault: "gc-pause", Window: w.ID, Exercised: lease != history.LeaseAssumed, Lease: lease, Of: w,
			Detail: "judged"}.Event())
	}
	return h
}

// The evidence counts the judged windows whose lease end was observed on
// the server and those assumed from the TTL, whole or in chunks (Add sums
// them), and says so in one line.
func TestEvidenceCountsObservedAndAssumedLeaseEnds(t *testing.T) {
	h := evidenceHistory(false)
	ev := checker.Check(context.Background(), h, checker.Options{}).Evidence
	if ev.Judged != 3 || ev.Observed != 1 || ev.Assumed != 1 {
		t.Fatalf("judged %d, observed %d, assumed %d; want 3, 1, 1", ev.Judged, ev.Observed, ev.Assumed)
	}
	want := "lease ends: 1 observed on the server, 1 assumed from the TTL (of 3 judged window(s); 1 depend(s) on no lease's end)"
	if got := ev.LeaseEnds(); got != want {
		t.Errorf("LeaseEnds %q, want %q", got, want)
	}
	sum := ev.Add(ev)
	if sum.Observed != 2 || sum.Assumed != 2 {
		t.Errorf("Add: observed %d, assumed %d; want 2 and 2", sum.Observed, sum.Assumed)
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	rep, fs, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 2})
	if err != nil || fs.Chunks < 2 {
		t.Fatalf("CheckFile: %v, %d chunks", err, fs.Chunks)
	}
	if rep.Evidence.Observed != 1 || rep.Evidence.Assumed != 1 {
		t.Errorf("in %d chunks: observed %d, assumed %d; want 1 and 1", fs.Chunks, rep.Evidence.Observed, rep.Evidence.Assumed)
	}
	if got := (checker.Evidence{}).LeaseEnds(); got != "" {
		t.Errorf("nothing judged, yet %q", got)
	}
	if got := (checker.Evidence{Judged: 2}).LeaseEnds(); got != "lease ends: none of the 2 judged window(s) depended on a lease's end" {
		t.Errorf("no lease judged: %q", got)
	}
}

// A cell caught by a decisive violation needs no floor: its evidence
// reads so, never "not exercised ... the floor is 3". The floor's
// shortfall still stands (it decides whether a pass counts) and a passing
// cell still reads it; a group that passed beside one that failed is
// still held to it, and says which group.
func TestEvidenceOfADecisiveViolationNeedsNoFloor(t *testing.T) {
	rep := checker.Check(context.Background(), evidenceHistory(true), checker.Options{})
	if rep.Verdict != checker.Fail {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	if rep.Evidence.Enough || len(rep.Evidence.Short) != 1 || !strings.HasPrefix(rep.Evidence.Short[0], "not exercised: 2 of 3") {
		t.Fatalf("the floor's shortfall changed: enough %v, %q", rep.Evidence.Enough, rep.Evidence.Short)
	}
	p := rep.Evidence.Against(rep.Results)
	if len(p.Short) != 0 || len(p.Failed) != 2 || p.Failed[0] != checker.MutualExclusion || p.Failed[1] != checker.ForeignRelease {
		t.Errorf("failed %v, short %q: want mutual-exclusion and foreign-release, no shortfall", p.Failed, p.Short)
	}
	if want := "no floor needed: decisive violations of mutual-exclusion and foreign-release are proof on their own " +
		"(the floor is what a pass must show)"; p.Sentence != want {
		t.Errorf("sentence %q, want %q", p.Sentence, want)
	}

	pass := checker.Check(context.Background(), evidenceHistory(false), checker.Options{})
	p = pass.Evidence.Against(pass.Results)
	if pass.Verdict != checker.Pass || p.Sentence != "" || len(p.Short) != 1 || !strings.Contains(p.Short[0], "the floor is 3") {
		t.Errorf("a pass below the floor: verdict %s, sentence %q, short %q", pass.Verdict, p.Sentence, p.Short)
	}

	// Safety failed, liveness judged a moment and passed.
	rs := []checker.Result{
		{Property: checker.MutualExclusion, Status: checker.Fail, Decisive: true, ViolationCount: 1},
		{Property: checker.DeadlockFree, Status: checker.Pass, Decisive: true, Judged: 1},
	}
	p = rep.Evidence.Against(rs)
	if p.Sentence == "" || len(p.Short) != 1 || !strings.HasPrefix(p.Short[0], "liveness passed below the floor: not exercised: 2 of 3") {
		t.Errorf("liveness pass beside a safety failure: sentence %q, short %q", p.Sentence, p.Short)
	}
	// A violation with enough evidence: nothing to say of the floor.
	enough := checker.Evidence{Enough: true}
	if p := enough.Against(rs); p.Sentence != "" || len(p.Short) != 0 {
		t.Errorf("enough evidence: sentence %q, short %q", p.Sentence, p.Short)
	}
	// A violation of a property that does not decide is no proof.
	rs[0].Decisive = false
	if p := rep.Evidence.Against(rs); p.Sentence != "" || len(p.Short) != 1 || strings.Contains(p.Short[0], "passed below") {
		t.Errorf("a non-decisive violation: sentence %q, short %q", p.Sentence, p.Short)
	}
}

// TestEvidenceShortOfWindowsThatAllReachedTheMoment: a cell that ended
// with too few windows, every one of which reached its moment, says so,
// not "not exercised: 2 of 2".
func TestEvidenceShortOfWindowsThatAllReachedTheMoment(t *testing.T) {
	floor := &history.Floor{MinExercised: 3}
	cases := []struct {
		fired, exercised int
		want             string
	}{
		{2, 2, "too few fault windows: 2 fired, each reached the dangerous moment; the floor is 3"},
		{3, 2, "not exercised: 2 of 3 fault window(s) reached the dangerous moment; the floor is 3"},
		{0, 0, "not exercised: 0 of 0 fault window(s) reached the dangerous moment; the floor is 3"},
	}
	for _, c := range cases {
		ev := checker.Evidence{Fired: c.fired, Exercised: c.exercised}.Hold(floor, true)
		if len(ev.Short) != 1 || ev.Short[0] != c.want {
			t.Errorf("%d of %d: short %q, want %q", c.exercised, c.fired, ev.Short, c.want)
		}
	}
}
