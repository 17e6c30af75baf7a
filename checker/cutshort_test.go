package checker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// witnessed adds to b what a witness on node0 saw: watching from the
// start, and value set at t (ms) with its deadline (ms).
func (b *lb) witnessed(value string, t, deadline float64) *lb {
	b.add(history.Event{Kind: history.Witness, Client: -1, Call: 0, Return: 0, Outcome: history.Ok,
		Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.WitnessWatches})})
	return b.add(history.Event{Kind: history.Witness, Client: -1, Key: "order:1", Token: value,
		Call: ms(t), Return: ms(t), Outcome: history.Ok,
		Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.ServerSet, Deadline: ms(deadline)})})
}

// A cell cut short (a decisive violation ends it) before the crashed
// holder's lease was due on the server: still stuck past the bound, but
// the sentence no longer reads as a lock that never frees the key. It said
// "to the end of the cell" and nothing of the lease the server reported
// due 2.9 s after the history ended.
func TestStuckInACellCutShortSaysWhenTheLeaseWasDue(t *testing.T) {
	const k = "order:1"
	h := crashed().witnessed("t3-100", 100.5, 4900).tries(k, 420, 1990, 30, 1, 2, 5).end(2000).done()
	r := checker.Check(context.Background(), h, checker.Options{}).Result(checker.DeadlockFree)
	if r.Status != checker.Fail || len(r.Violations) != 1 {
		t.Fatalf("deadlock-free %+v, want one stuck holder", r)
	}
	s := r.Violations[0].Summary
	for _, want := range []string{"to the end of the cell (bound 660 ms): stuck",
		"the history ended at 2.000 s, before the server's lease on order:1 was due (4.900 s, 4.490 s after the holder stopped",
		"cut short"} {
		if !strings.Contains(s, want) {
			t.Errorf("sentence %q\nwant it to say %q", s, want)
		}
	}

	// A lease due before the end (or never) adds nothing.
	h = crashed().witnessed("t3-100", 100.5, 1500).tries(k, 420, 1990, 30, 1, 2, 5).end(2000).done()
	r = checker.Check(context.Background(), h, checker.Options{}).Result(checker.DeadlockFree)
	if len(r.Violations) != 1 || strings.Contains(r.Violations[0].Summary, "cut short") {
		t.Errorf("a lease due inside the history: %+v", r.Violations)
	}
}
