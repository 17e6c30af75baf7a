package checker_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// downHeader is a cell on a lock of nodes nodes, TTL 300 ms, fault-tolerant
// bound within (0: the default, 810 ms).
func downHeader(nodes int, within time.Duration) history.Header {
	return history.Header{Scenario: "minority-partition", Clients: 8, Keys: []string{"order:1"}, TTL: 300 * time.Millisecond,
		LockNodes: nodes, AcquireWithin: within, Faults: []string{"minority-partition"}}
}

type ftCase struct {
	name     string
	h        *history.History
	status   checker.Status
	judged   int
	note     string  // a substring of the note ("": none expected)
	sentence string  // a substring of the one violation's sentence
	share    float64 // Liveness.FreeWhileTrying (-1: none)
	stretch  int64   // the start of the first stretch kept, or 0
}

func ftCases() []ftCase {
	const k = "order:1"
	ok, refused, indefinite := history.Ok, history.Refused, history.Indefinite
	node2 := func(nodes int, within time.Duration, to float64) *lb {
		return newLB(downHeader(nodes, within)).window("minority-partition", 400, to, history.Hit{Down: []string{"node2"}})
	}
	// lostThenTries: client 1's hold ends at 0.5 s with end; others try
	// until client 2 gets the key at 1.26 s.
	lostThenTries := func(end func(*lb) *lb) *history.History {
		b := node2(3, 500*time.Millisecond, 1600).acq(1, k, 300, 301, ok)
		return end(b).tries(k, 510, 1200, 50, 2, 3).acq(2, k, 1250, 1260, ok).rel(2, k, 1300, 1301, ok).done()
	}
	return []ftCase{
		{name: "3 nodes, one down, the key free and every try failing past the bound",
			h:      node2(3, 0, 1520).tries(k, 420, 1520, 100, 1, 4, 6).done(),
			status: checker.Fail, judged: 1, share: 1100.0 / 1120, stretch: ms(420),
			sentence: "while node2 was down (2 of 3 lock nodes up), order:1 was free from 0.420 s for 1.100 s while " +
				"clients 1, 4 and 6 tried (12 attempts); nobody acquired it (bound 810 ms)"},
		{name: "Redlock-like: each acquire waits out the down node and succeeds",
			h: node2(3, 0, 1600).acq(1, k, 420, 680, ok).acq(4, k, 430, 440, refused).rel(1, k, 700, 701, ok).
				acq(4, k, 702, 960, ok).acq(6, k, 710, 711, refused).rel(4, k, 980, 981, ok).
				acq(6, k, 985, 1245, ok).rel(6, k, 1260, 1261, ok).done(),
			status: checker.Pass, judged: 1, share: 778.0 / 1200, stretch: ms(420)},
		{name: "a lock that needs every node: no window outlasts the bound, but nobody acquires in most of them",
			h: node2(3, 0, 800).tries(k, 420, 790, 50, 1, 4).
				window("minority-partition", 1400, 1800, history.Hit{Down: []string{"node2"}}).tries(k, 1420, 1790, 50, 1, 4).
				window("minority-partition", 2400, 2800, history.Hit{Down: []string{"node2"}}).tries(k, 2420, 2790, 50, 1, 4).done(),
			status: checker.Fail, judged: 3, share: 1140.0 / 1200, stretch: ms(420),
			sentence: "over 3 node-down span(s) from 0.400 s to 2.800 s, with a majority of the lock's nodes up and no " +
				"lease left behind for 1.200 s (key by key), pods tried for a free key and nobody acquired it for 1.140 s of it, in stretches " +
				"of 81 ms or more: 95%, over the 50% limit"},
		{name: "a single-node lock whose node is down: not applicable",
			h: newLB(downHeader(1, 0)).window("node-restart", 400, 1000, history.Hit{Down: []string{"node0"}}).
				acq(1, k, 420, 670, indefinite).acq(2, k, 680, 930, indefinite).done(),
			status: checker.Pass, judged: 0, share: -1,
			note: "nothing to judge; not applicable in 1 window(s): node0 down, 0 of 1 lock node up, no majority"},
		{name: "a lost hold keeps the key maybe held for a TTL: not free",
			h:      lostThenTries(func(b *lb) *lb { return b.point(history.Lost, 1, k, 500, "") }),
			status: checker.Pass, judged: 1, share: 450.0 / 1200, stretch: ms(810)},
		{name: "the same hold released: free from the release, and too long",
			h:      lostThenTries(func(b *lb) *lb { return b.rel(1, k, 500, 501, ok) }),
			status: checker.Fail, judged: 1, share: 750.0 / 1200, stretch: ms(510),
			sentence: "order:1 was free from 0.510 s for 750 ms while clients 2 and 3 tried (15 attempts); " +
				"client 2 acquired it only at 1.260 s (bound 500 ms)"},
		{name: "a renewal that returned after an indefinite release: maybe held a TTL past it",
			h: lostThenTries(func(b *lb) *lb {
				return b.renew(1, k, 490, 600).rel(1, k, 500, 750, indefinite)
			}),
			status: checker.Pass, judged: 1, share: 350.0 / 1200, stretch: ms(910)},
		{name: "a pod a window targets is not the lock's to serve",
			h: node2(3, 0, 1600).window("pod-pause", 400, 1600, history.Hit{Pods: []int{2}}).
				tries(k, 420, 1500, 50, 2).done(),
			status: checker.Pass, judged: 0, share: -1, note: "no pod tried"},
		{name: "the lock's node count unknown",
			h:      node2(0, 0, 1600).tries(k, 420, 1500, 50, 1).done(),
			status: checker.Pass, judged: 0, share: -1, note: "node count is unknown"},
		{name: "overlapping windows: judged while a majority was up; two nodes down at once is not applicable",
			h: newLB(downHeader(3, 0)).window("minority-partition", 400, 800, history.Hit{Down: []string{"node1"}}).
				window("minority-partition", 600, 1000, history.Hit{Down: []string{"node2"}}).
				window("node-restart", 1200, 1400, history.Hit{Down: []string{"node1", "node2"}}).
				tries(k, 410, 1390, 50, 1).done(),
			status: checker.Pass, judged: 1, share: 380.0 / 400, stretch: ms(410),
			note: "not applicable in 1 window(s): node1 and node2 down, 1 of 3 lock nodes up, no majority"},
	}
}

func TestFaultTolerant(t *testing.T) {
	for _, c := range ftCases() {
		t.Run(c.name, func(t *testing.T) {
			rep := checker.Check(context.Background(), c.h, checker.Options{})
			r := rep.Result(checker.FaultTolerant)
			if r == nil || r.Status != c.status || r.Judged != c.judged || !r.Decisive {
				t.Fatalf("fault-tolerant %+v, want %s judged %d", r, c.status, c.judged)
			}
			if !strings.Contains(r.Note, c.note) || (c.note == "") != (r.Note == "") {
				t.Errorf("note %q, want %q", r.Note, c.note)
			}
			if c.judged == 0 && !strings.Contains(r.Note, "nothing to judge") {
				t.Errorf("note %q: want it to say nothing was judged", r.Note)
			}
			if c.status == checker.Fail {
				if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Summary, c.sentence) {
					t.Fatalf("violations %+v, want one saying %q", r.Violations, c.sentence)
				}
				if rep.Verdict != checker.Fail || len(rep.Incidents) != 1 || rep.Incidents[0].Fault == "" {
					t.Errorf("verdict %s, incidents %+v: want a failure put down to its window", rep.Verdict, rep.Incidents)
				}
			}
			lv := rep.Liveness
			if math.Abs(lv.FreeWhileTrying-c.share) > 1e-9 {
				t.Errorf("free while trying %v, want %v", lv.FreeWhileTrying, c.share)
			}
			first := int64(0)
			if len(lv.Stretches) > 0 {
				first = lv.Stretches[0].Start
			}
			if first != c.stretch {
				t.Errorf("stretches %+v, want the first from %d", lv.Stretches, c.stretch)
			}
			if lv.AcquireWithin == 0 || rep.Result(checker.DeadlockFree).Judged != 0 {
				t.Errorf("acquire within %s; deadlock-free judged %d", lv.AcquireWithin, rep.Result(checker.DeadlockFree).Judged)
			}
		})
	}
}
