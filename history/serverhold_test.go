package history_test

import (
	"slices"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// witnessAt is a witness event on node0's order:1 at t (ns).
func witnessAt(id int64, op, value string, t, deadline int64) history.Event {
	return history.Event{ID: id, Kind: history.Witness, Client: -1, Key: "order:1", Token: value,
		Call: t, Return: t, Outcome: history.Ok, Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: op, Deadline: deadline})}
}

// The run of issue 34: a lock that reports no token, client 5's acquire
// in flight while the witness heard another pod's value set and deleted
// (late, 19 µs apart), then client 5's ok and its own value heard 10 µs
// after. The first write after the acquire began is the other pod's,
// gone before client 5's acquire returned: it is not client 5's lease.
func TestLeaseForTokenlessSkipsAValueGoneBeforeTheAcquireReturned(t *testing.T) {
	const ttl = int64(300_000_000)
	evs := []history.Event{
		{ID: 0, Kind: history.Witness, Client: -1, Outcome: history.Ok, Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.WitnessWatches})},
		{ID: 1, Kind: history.Acquire, Client: 5, Key: "order:1", Call: 2_537_314_000, Return: 2_537_719_000, Outcome: history.Ok},
		witnessAt(2, history.ServerSet, "other-pod", 2_537_492_000, 2_537_492_000+ttl),
		witnessAt(3, history.ServerDel, "other-pod", 2_537_511_000, 0),
		witnessAt(4, history.ServerSet, "client-5", 2_537_729_000, 2_537_729_000+ttl),
		{ID: 5, Kind: history.Release, Client: 5, Key: "order:1", Call: 2_600_000_000, Return: 2_600_100_000, Outcome: history.Ok},
		witnessAt(6, history.ServerDel, "client-5", 2_600_050_000, 0),
	}
	h := &history.History{Events: evs, End: 3_000_000_000}
	holds := history.Holds(h)
	if len(holds) != 1 || holds[0].Token != "" {
		t.Fatalf("holds %+v, want client 5's one token-less hold", holds)
	}
	sh, ok := history.ServerViewOf(evs, h.End).LeaseFor(holds[0], 1)
	if !ok {
		t.Fatal("no lease found for client 5's hold")
	}
	if c := sh.Copies[0]; c.Value != "client-5" || sh.Start != 2_537_729_000 || sh.Ended != history.LeaseDeleted {
		t.Errorf("client 5's lease is %+v, want its own value, set at 2.537729 s and deleted by its release", c)
	}

	// Without client 5's own write, nothing the server held is its lease:
	// none, and the caller assumes one from the TTL.
	alone := slices.Concat(evs[:4], evs[5:6])
	if sh, ok := history.ServerViewOf(alone, h.End).LeaseFor(holds[0], 1); ok {
		t.Errorf("matched %+v, a value deleted before client 5's acquire returned", sh.Copies)
	}
}
