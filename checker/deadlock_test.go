package checker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// dfCase is a history and what deadlock-free must make of it.
type dfCase struct {
	name   string
	h      *history.History
	status checker.Status
	judged int
	// rc is the one recovery expected (Client, Key, Cause, Recovered, By,
	// After, Stuck, Judged are compared); why and sentence are substrings
	// of its Why and of the violation's sentence.
	rc       checker.Recovery
	why      string
	sentence string
}

func dfCases() []dfCase {
	const k = "order:1"
	ok, refused := history.Ok, history.Refused
	return []dfCase{
		{name: "crash recovered within the bound",
			h:      crashed().tries(k, 420, 700, 40, 1, 2).acq(1, k, 740, 741, ok).rel(1, k, 760, 761, ok).done(),
			status: checker.Pass, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, Recovered: true, By: 1,
				After: 331 * time.Millisecond, Judged: true}},
		{name: "crash never recovered, others trying past the bound: stuck",
			h:      crashed().tries(k, 420, 1990, 30, 1, 2, 5).end(2000).done(),
			status: checker.Fail, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, By: -1, After: 1590 * time.Millisecond,
				Stuck: true, Judged: true},
			sentence: "client 3 crashed at 0.410 s holding order:1 (TTL 300 ms); clients 1, 2 and 5 kept trying; " +
				"nobody acquired order:1 for 1.590 s, to the end of the cell (bound 660 ms): stuck"},
		{name: "recovered after the bound: slow",
			h:      crashed().tries(k, 420, 1580, 30, 1, 2, 5).acq(5, k, 1600, 1610, ok).end(1700).done(),
			status: checker.Fail, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, Recovered: true, By: 5,
				After: 1200 * time.Millisecond, Stuck: true, Judged: true},
			sentence: "client 5 acquired order:1 only 1.200 s later (bound 660 ms): slow to recover"},
		{name: "nobody else tried: not judged",
			h:      crashed().tries(k, 200, 400, 50, 1).end(2000).done(),
			status: checker.Pass, judged: 0,
			rc:  checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, By: -1, After: 1590 * time.Millisecond},
			why: "nobody else tried order:1 after client 3 stopped"},
		{name: "the cell ended before the bound: not judged",
			h:      crashed().tries(k, 420, 600, 30, 1, 2).end(610).done(),
			status: checker.Pass, judged: 0,
			rc:  checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, By: -1, After: 200 * time.Millisecond},
			why: "the cell ended 200 ms after client 3 crashed, before the 660 ms bound"},
		{name: "nobody still trying when the bound passed: not judged",
			h:      crashed().tries(k, 420, 600, 30, 1, 2).end(2000).done(),
			status: checker.Pass, judged: 0,
			rc:  checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, By: -1, After: 1590 * time.Millisecond},
			why: "nobody was still trying order:1 when the 660 ms bound had passed"},
		{name: "a partition (no abandon) is cut off; its hold runs on",
			h: newLB(crashHeader()).acq(3, k, 100, 101, ok).
				window("client-partition", 410, 900, history.Hit{Pods: []int{3}, StopsHolder: true}).
				tries(k, 420, 700, 40, 1, 2).point(history.Lost, 3, k, 710, "").
				acq(2, k, 720, 721, ok).rel(2, k, 760, 761, ok).
				rel(3, k, 950, 951, refused).done(),
			status: checker.Pass, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: checker.CutOff, Recovered: true, By: 2,
				After: 311 * time.Millisecond, Judged: true}},
		{name: "the restarted pod re-acquires: a recovery",
			h: newLB(crashHeader()).acq(3, k, 100, 101, ok).
				window("pod-crash", 410, 610, history.Hit{Pods: []int{3}, StopsHolder: true, Restart: 200 * time.Millisecond}).
				point(history.Abandon, 3, k, 411, history.Crashed).
				tries(k, 420, 700, 40, 1).acq(3, k, 715, 720, ok).rel(3, k, 760, 761, ok).done(),
			status: checker.Pass, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: history.Crashed, Recovered: true, By: 3,
				After: 310 * time.Millisecond, Judged: true}},
		{name: "an abandoned lease never freed: stuck",
			h: newLB(crashHeader()).acq(3, k, 100, 101, ok).
				window("abandoned-lease", 410, 412, history.Hit{Pods: []int{3}, StopsHolder: true}).
				point(history.Abandon, 3, k, 411, history.Abandoned).
				tries(k, 420, 1990, 30, 1).end(2000).done(),
			status: checker.Fail, judged: 1,
			rc: checker.Recovery{Client: 3, Key: k, Cause: history.Abandoned, By: -1, After: 1590 * time.Millisecond,
				Stuck: true, Judged: true},
			sentence: "client 3 hung (its lease abandoned) at 0.410 s holding order:1 (TTL 300 ms); client 1 kept trying"},
		{name: "the stopped pod held nothing: not judged",
			h: newLB(crashHeader()).acq(3, k, 100, 101, ok).rel(3, k, 300, 301, ok).
				window("pod-crash", 410, 412, history.Hit{Pods: []int{3}, StopsHolder: true}).
				tries(k, 420, 1990, 30, 1).end(2000).done(),
			status: checker.Pass, judged: 0,
			rc:  checker.Recovery{Client: 3, Cause: checker.CutOff, By: -1},
			why: "client 3 held nothing when the window opened"},
	}
}

func TestDeadlockFree(t *testing.T) {
	for _, c := range dfCases() {
		t.Run(c.name, func(t *testing.T) {
			rep := checker.Check(context.Background(), c.h, checker.Options{})
			r := rep.Result(checker.DeadlockFree)
			if r == nil || r.Status != c.status || r.Judged != c.judged || !r.Decisive {
				t.Fatalf("deadlock-free %+v, want %s judged %d", r, c.status, c.judged)
			}
			if (c.status == checker.Fail) != (rep.Verdict == checker.Fail) {
				t.Errorf("verdict %s with deadlock-free %s", rep.Verdict, r.Status)
			}
			if c.judged == 0 && !strings.Contains(r.Note, "nothing to judge") {
				t.Errorf("note %q: want it to say nothing was judged", r.Note)
			}
			lv := rep.Liveness
			if len(lv.Recoveries) != 1 {
				t.Fatalf("recoveries %+v, want one", lv.Recoveries)
			}
			got := lv.Recoveries[0]
			if w := c.rc; got.Client != w.Client || got.Key != w.Key || got.Cause != w.Cause || got.Recovered != w.Recovered ||
				got.By != w.By || got.Stuck != w.Stuck || got.Judged != w.Judged || (w.After != 0 && got.After != w.After) {
				t.Errorf("recovery %+v\nwant     %+v", got, w)
			}
			if got.At != ms(410) || got.Bound != 660*time.Millisecond || lv.RecoverWithin != 660*time.Millisecond {
				t.Errorf("recovery at %d bound %s (liveness bound %s), want 0.410 s and 660 ms", got.At, got.Bound, lv.RecoverWithin)
			}
			if !strings.Contains(got.Why, c.why) || (c.why == "") != (got.Why == "") {
				t.Errorf("why %q, want %q", got.Why, c.why)
			}
			if c.status == checker.Fail {
				if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Summary, c.sentence) {
					t.Fatalf("violations %+v, want one saying %q", r.Violations, c.sentence)
				}
				v := r.Violations[0]
				if v.Start != ms(410) || v.At != ms(410)+int64(660*time.Millisecond) || v.Clients[0] != 3 {
					t.Errorf("violation spans %d..%d at %d clients %v", v.Start, v.End, v.At, v.Clients)
				}
				if rep.Stats.FirstViolation != v.At {
					t.Errorf("first violation %d, want %d", rep.Stats.FirstViolation, v.At)
				}
			}
			var wantMax, wantMedian time.Duration
			if got.Judged {
				wantMax = got.After
			}
			if got.Judged && got.Recovered {
				wantMedian = got.After
			}
			if lv.MaxRecovery != wantMax || lv.MedianRecovery != wantMedian {
				t.Errorf("median %s max %s for %+v", lv.MedianRecovery, lv.MaxRecovery, got)
			}
		})
	}
}

// The violation names the window that stopped the holder, its abandon and
// the acquire that came too late; the incident is put down to the window.
func TestDeadlockFreeViolationNamesItsEvents(t *testing.T) {
	c := dfCases()[2] // recovered late
	rep := checker.Check(context.Background(), c.h, checker.Options{})
	v := rep.Result(checker.DeadlockFree).Violations[0]
	kinds := []history.Kind{}
	for _, id := range v.Events {
		kinds = append(kinds, c.h.Events[id].Kind)
	}
	if len(kinds) != 3 || kinds[0] != history.Fault || kinds[1] != history.Abandon || kinds[2] != history.Acquire ||
		c.h.Events[v.Events[2]].Client != 5 {
		t.Fatalf("events %v (%v), want the window, the abandon and client 5's acquire", v.Events, kinds)
	}
	if len(rep.Incidents) != 1 || rep.Incidents[0].Window != v.Events[0] || rep.Incidents[0].Fault != "pod-crash" {
		t.Fatalf("incidents %+v, want one put down to the crash", rep.Incidents)
	}
	if lv := rep.Liveness; len(lv.Stretches) != 1 || !lv.Stretches[0].Stuck || lv.Stretches[0].Start != ms(410) ||
		lv.Stretches[0].End != ms(1610) {
		t.Fatalf("stretches %+v, want the stuck one from 0.410 s to 1.610 s", lv.Stretches)
	}
}

// Nothing to judge leaves the liveness group without a verdict; a stuck
// key fails it, and Decide (the supervisor's look) fails the cell.
func TestLivenessGroupVerdict(t *testing.T) {
	quiet := load(t, "pass.jsonl")
	rep := check(t, quiet)
	if g := checker.GroupVerdict(rep.Results, checker.GroupLiveness); g != "" {
		t.Errorf("liveness verdict of a history with nothing to judge: %q, want none", g)
	}
	if g := checker.GroupVerdict(rep.Results, checker.GroupSafety); g != checker.Pass {
		t.Errorf("safety verdict %q, want pass", g)
	}
	for _, p := range []checker.Property{checker.DeadlockFree, checker.FaultTolerant} {
		if r := rep.Result(p); r == nil || r.Status != checker.Pass || r.Judged != 0 || r.Note == "" {
			t.Errorf("%s on a quiet history: %+v, want a pass judging nothing, with a note", p, r)
		}
	}
	stuck := dfCases()[1].h
	rep = check(t, stuck)
	if g := checker.GroupVerdict(rep.Results, checker.GroupLiveness); g != checker.Fail {
		t.Errorf("liveness verdict of a stuck key: %q, want fail", g)
	}
	if g := checker.GroupVerdict(rep.Results, checker.GroupSafety); g != checker.Pass {
		t.Errorf("safety verdict of a stuck key: %q, want pass", g)
	}
	if v := checker.Decide(context.Background(), stuck, checker.Options{}); v != checker.Fail {
		t.Errorf("Decide on a stuck key: %s, want fail", v)
	}
	if rep.Stats.Abandoned != 1 {
		t.Errorf("abandoned %d, want 1", rep.Stats.Abandoned)
	}
}

// Two keys, two crashes, one recovered and one stuck: the figures are
// over both, the median over the recovered one.
func TestRecoveryFigures(t *testing.T) {
	h := crashed().tries("order:1", 420, 700, 40, 1).acq(1, "order:1", 710, 711, history.Ok).
		acq(4, "order:2", 100, 101, history.Ok).
		window("pod-crash", 800, 801, history.Hit{Pods: []int{4}, StopsHolder: true}).
		point(history.Abandon, 4, "order:2", 800.5, history.Crashed).
		tries("order:2", 810, 2990, 50, 2).end(3000).done()
	lv := check(t, h).Liveness
	if len(lv.Recoveries) != 2 || lv.MedianRecovery != 301*time.Millisecond || lv.MaxRecovery != 2200*time.Millisecond {
		t.Fatalf("recoveries %+v median %s max %s, want 301 ms and 2.2 s", lv.Recoveries, lv.MedianRecovery, lv.MaxRecovery)
	}
	if lv.Recoveries[0].Key != "order:1" || lv.Recoveries[1].Key != "order:2" || !lv.Recoveries[1].Stuck {
		t.Fatalf("recoveries out of order or not stuck: %+v", lv.Recoveries)
	}
}

// A crash or a hang is judged from the pod's abandon, for the hold it
// abandoned: a hung worker that released its lease when the window opened
// and abandoned the next one leaves that one stuck. An acquire that ended
// indefinite may have won the key for a pod that never heard so (and so
// never releases it): the key is taken for certain only from there.
func TestDeadlockFreeFromAbandonsAndIndefiniteAcquires(t *testing.T) {
	const k = "order:1"
	ok, ind := history.Ok, history.Indefinite
	crash := func() *lb {
		return newLB(crashHeader()).acq(3, k, 100, 101, ok).
			window("pod-crash", 410, 412, history.Hit{Pods: []int{3}, StopsHolder: true, Abandons: true}).
			point(history.Abandon, 3, k, 411, history.Crashed)
	}
	for _, c := range []struct {
		name     string
		h        *history.History
		at       int64
		stuck    bool
		judged   bool
		text     string // in the violation's sentence, or the recovery's Why
		wantNote bool
	}{
		{name: "the next lease abandoned",
			h: newLB(crashHeader()).acq(3, k, 100, 101, ok).
				window("abandoned-lease", 410, 445, history.Hit{Pods: []int{3}, StopsHolder: true, Abandons: true}).
				rel(3, k, 420, 421, ok).acq(2, k, 425, 426, ok).rel(2, k, 430, 431, ok).
				acq(3, k, 440, 441, ok).point(history.Abandon, 3, k, 442, history.Abandoned).
				tries(k, 450, 1990, 30, 1, 2).end(2000).done(),
			at: ms(442), stuck: true, judged: true, text: "client 3 hung (its lease abandoned) at 0.442 s holding order:1"},
		{name: "an indefinite acquire restarts the bound, and the cell ends within it",
			h:  crash().tries(k, 420, 700, 40, 1).acq(2, k, 720, 1000, ind).tries(k, 1010, 1300, 40, 1).end(1310).done(),
			at: ms(411), text: "client 2's acquire at 0.720 s may have won order:1"},
		{name: "an indefinite acquire, then the key stays taken past the bound",
			h:  crash().tries(k, 420, 700, 40, 1).acq(2, k, 720, 1000, ind).tries(k, 1010, 1990, 40, 1).end(2000).done(),
			at: ms(411), stuck: true, judged: true, text: "(counted from 0.720 s, when client 2's acquire, which ended indefinite, may have won it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := checker.Check(context.Background(), c.h, checker.Options{})
			lv := rep.Liveness
			if len(lv.Recoveries) != 1 {
				t.Fatalf("recoveries %+v, want one", lv.Recoveries)
			}
			rc := lv.Recoveries[0]
			if rc.At != c.at || rc.Stuck != c.stuck || rc.Judged != c.judged {
				t.Fatalf("recovery %+v, want at %d stuck %v judged %v", rc, c.at, c.stuck, c.judged)
			}
			r := rep.Result(checker.DeadlockFree)
			got := rc.Why
			if c.stuck {
				if r.Status != checker.Fail || len(r.Violations) != 1 {
					t.Fatalf("deadlock-free %+v, want one violation", r)
				}
				got = r.Violations[0].Summary
			} else if r.Status != checker.Pass {
				t.Fatalf("deadlock-free %s, want pass (nothing certain to judge)", r.Status)
			}
			if !strings.Contains(got, c.text) {
				t.Errorf("%q lacks %q", got, c.text)
			}
		})
	}
}
