package checker_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// phantomHist is issue 34's run, scaled down: client 1 holds and
// releases; client 3's acquire is called at 100 ms, its SET NX lands
// (heard at 101 ms, PX 3 s) and the lock answers refused at 450 ms;
// client 2 is refused every 100 ms while the key sits taken, until it
// expires at 3.101 s; then client 2 acquires. gone, if not 0, is when
// the server deleted the phantom instead (a lock that cleans up).
func phantomHist(writer history.Outcome, gone int64) *srvHist {
	s := newSrv(1, "node0").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301).
		op(history.Release, 1, "tokA", 50, 52, history.Ok).seen(history.ServerDel, "node0", "tokA", 51, 0).
		op(history.Acquire, 3, "", 100, 450, writer).seen(history.ServerSet, "node0", "tokP", 101, 3101)
	if gone > 0 {
		s.seen(history.ServerDel, "node0", "tokP", gone, 0)
	}
	for t := int64(460); t < 3100; t += 100 {
		s.op(history.Acquire, 2, "", t, t+5, history.Refused)
	}
	return s.op(history.Acquire, 2, "tokB", 3150, 3152, history.Ok).seen(history.ServerSet, "node0", "tokB", 3151, 3451).
		op(history.Release, 2, "tokB", 3200, 3202, history.Ok).seen(history.ServerDel, "node0", "tokB", 3201, 0)
}

func TestPhantomLeaseNamesTheRefusedAcquireAndTheTimeOthersWereKeptOut(t *testing.T) {
	rep := checkSrv(t, phantomHist(history.Refused, 0))
	r := rep.Result(checker.PhantomLease)
	if r == nil || r.Status != checker.Fail || !r.Decisive || r.ViolationCount != 1 {
		t.Fatalf("phantom-lease %+v, want one decisive violation", r)
	}
	for _, want := range []string{
		"client 3's acquire of order:1 (called at 0.100 s, refused at 0.450 s) wrote value \"tokP\" (heard at 0.101 s)",
		"a retried SET NX that found the pod's own key",
		"stayed on node0 until 3.101 s (expired), a lease nobody believed it held for 2.651 s after the refusal",
		"client 2 tried and was refused 27 time(s) while it sat taken",
	} {
		if !strings.Contains(r.Violations[0].Summary, want) {
			t.Errorf("sentence %q\nwant %q", r.Violations[0].Summary, want)
		}
	}
	// The 2.651 s the phantom kept client 2 out is past deadlock-free's
	// 660 ms bound (two TTLs and the retry slack): stuck, as a stopped
	// holder's lease would be.
	df := rep.Result(checker.DeadlockFree)
	if df.Status != checker.Fail || df.Judged != 1 || df.ViolationCount != 1 {
		t.Fatalf("deadlock-free %+v, want the phantom judged and stuck", df)
	}
	if want := "a phantom lease held order:1 for 2.651 s after client 3's acquire was refused at 0.450 s"; !strings.Contains(df.Violations[0].Summary, want) {
		t.Errorf("deadlock-free sentence %q\nwant %q", df.Violations[0].Summary, want)
	}
	if rep.Verdict != checker.Fail || checker.GroupVerdict(rep.Results, checker.GroupLiveness) != checker.Fail {
		t.Errorf("verdict %s, liveness %s: want both fail", rep.Verdict, checker.GroupVerdict(rep.Results, checker.GroupLiveness))
	}
}

// A phantom shorter than the recovery bound is still a phantom (the
// lock's refusal was wrong), but kept nobody out for long: deadlock-free
// judges it and passes.
func TestPhantomLeaseUnderTheBoundLeavesDeadlockFreePassing(t *testing.T) {
	rep := checkSrv(t, phantomHist(history.Refused, 900))
	if r := rep.Result(checker.PhantomLease); r.Status != checker.Fail {
		t.Fatalf("phantom-lease %+v, want the 450 ms phantom found", r)
	}
	if df := rep.Result(checker.DeadlockFree); df.Status != checker.Pass || df.Judged != 1 {
		t.Errorf("deadlock-free %+v, want the phantom judged within the bound", df)
	}
}

// What is not a phantom: a write its lock deleted as it answered
// refused (Redlock short of its quorum), one an acquire that ended
// indefinite may have made (the lock admitted doubt), a lock whose holds
// carry no token, a fence counter beside the lock key.
func TestPhantomLeaseQuietWhereNoPodWasToldAWrongNo(t *testing.T) {
	if r := checkSrv(t, phantomHist(history.Refused, 460)).Result(checker.PhantomLease); r.Status != checker.Pass || r.Operations != 3 {
		t.Errorf("a write deleted 10 ms after its refusal: %+v, want a pass over 3 leases", r)
	}
	rep := checkSrv(t, phantomHist(history.Indefinite, 0))
	if r := rep.Result(checker.PhantomLease); r.Status != checker.Pass || !strings.Contains(r.Note, "ended indefinite") {
		t.Errorf("an indefinite writer: %+v, want a pass that says why", r)
	}

	// A server stalled under load: client 5's acquire gave up (indefinite)
	// 100 ms before its SET, stuck in the server's input, landed while
	// only refused acquires were in flight. It may be client 5's.
	s := newSrv(1, "node0").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301).
		op(history.Release, 1, "tokA", 50, 52, history.Ok).seen(history.ServerDel, "node0", "tokA", 51, 0).
		op(history.Acquire, 5, "", 60, 1000, history.Indefinite).
		op(history.Acquire, 3, "", 1050, 1200, history.Refused).seen(history.ServerSet, "node0", "tokP", 1100, 4100).
		op(history.Acquire, 2, "", 1300, 1305, history.Refused)
	s.h.End = 4200 * msNs
	if r := checkSrv(t, s).Result(checker.PhantomLease); r.Status != checker.Pass || !strings.Contains(r.Note, "ended indefinite") {
		t.Errorf("a write an acquire that gave up 100 ms before may have made: %+v, want not judged", r)
	}

	s = newSrv(1, "node0").
		op(history.Acquire, 1, "", 0, 2, history.Ok).seen(history.ServerSet, "node0", "v1", 1, 301).
		op(history.Release, 1, "", 50, 52, history.Ok).seen(history.ServerDel, "node0", "v1", 51, 0).
		op(history.Acquire, 3, "", 100, 450, history.Refused).seen(history.ServerSet, "node0", "v3", 101, 3101)
	if r := checkSrv(t, s).Result(checker.PhantomLease); r.Status != checker.Pass || !strings.Contains(r.Note, "carry no token") {
		t.Errorf("a token-less lock: %+v, want not judged", r)
	}

	s = newSrv(1, "node0").
		op(history.Acquire, 1, "tokA", 0, 2, history.Ok).seen(history.ServerSet, "node0", "tokA", 1, 301)
	s.add(history.Event{Kind: history.Witness, Client: -1, Key: "order:1", Token: "7", Call: 1 * msNs, Return: 1 * msNs,
		Window: history.WitnessWindow(history.ServerAct{Node: "node0", ServerKey: "order:1:fence", Act: history.ServerSet})})
	s.op(history.Release, 1, "tokA", 50, 52, history.Ok).seen(history.ServerDel, "node0", "tokA", 51, 0).
		op(history.Acquire, 2, "", 900, 905, history.Refused)
	s.h.End = 2000 * msNs
	if r := checkSrv(t, s).Result(checker.PhantomLease); r.Status != checker.Pass || r.Operations != 1 {
		t.Errorf("a fence counter beside the lock key: %+v, want the one lock lease judged and a pass", r)
	}
}

// Checked in chunks (a cut wherever order:1 is quiet: right after the
// refusal, between client 2's refusals), the phantom is carried over
// the cuts and judged where it ends, or at the file's end, as Check
// judges it on the whole history; deadlock-free says it judged it.
func TestPhantomLeaseJudgedInChunksAsOnTheWholeHistory(t *testing.T) {
	for _, cut := range []int64{0, 2000} { // 2000: the file ends while the phantom is still there
		s := phantomHist(history.Refused, 0)
		if cut > 0 {
			var evs []history.Event
			s.h.End = 0 // the last event's return, as a file read in chunks has it
			for _, e := range s.h.Events {
				if e.Return <= cut*msNs {
					evs = append(evs, e)
					s.h.End = max(s.h.End, e.Return)
				}
			}
			s.h.Events = evs
		} else {
			s.h.End += 10 * msNs
		}
		whole := checker.Check(context.Background(), &s.h, checker.Options{})
		path := filepath.Join(t.TempDir(), "h.jsonl")
		if err := history.WriteFile(path, &s.h); err != nil {
			t.Fatal(err)
		}
		rep, sum, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 8})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Chunks < 3 {
			t.Fatalf("%d chunk(s): the history was not cut", sum.Chunks)
		}
		for _, p := range []checker.Property{checker.PhantomLease, checker.DeadlockFree} {
			w, c := whole.Result(p), rep.Result(p)
			if c.Status != checker.Fail || c.ViolationCount != 1 || w.ViolationCount != 1 ||
				c.Violations[0].Summary != w.Violations[0].Summary {
				t.Errorf("cut %d: %s in %d chunks: %s %+v\nwhole: %s %+v", cut, p, sum.Chunks, c.Status, c.Violations, w.Status, w.Violations)
			}
		}
		if df := rep.Result(checker.DeadlockFree); !strings.Contains(df.Note, "1 phantom lease(s) judged") {
			t.Errorf("cut %d: deadlock-free's note %q", cut, df.Note)
		}
	}
}
