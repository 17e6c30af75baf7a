package faults

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// seen builds a witness event (times in ms; deadline 0: none).
func seen(op, node, key, value string, at, deadline int64) history.Event {
	return history.Event{Kind: history.Witness, Client: -1, Key: key, Token: value, Call: at * ms,
		Return: at * ms, Outcome: history.Ok, Window: history.WitnessWindow(history.ServerAct{Node: node, Act: op, Deadline: deadline * ms})}
}

func tokAcquire(client int, key, tok string, call, ret int64) history.Event {
	e := ev(history.Acquire, client, key, call, ret, history.Ok)
	e.Token = tok
	return e
}

// A lock whose real lease is longer than the cell's TTL (whole seconds
// plus tolerance: 500 ms at a 300 ms TTL): a 450 ms pause does not outlast
// it, and the witness's view says so; without the witness the same
// history is judged exercised from the TTL, the false claim the witness
// exists to stop.
func TestObservedLeaseLongerThanTheTTLIsNotExercisedByAShorterPause(t *testing.T) {
	evs := []history.Event{
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2), seen(history.ServerSet, "node0", "order:1", "tokA", 1, 501),
		window("client-pause", 10, 460, history.Hit{Pods: []int{1}}),
		ev(history.Acquire, 2, "order:1", 320, 330, history.Refused),
		ev(history.Acquire, 2, "order:1", 440, 450, history.Refused),
		seen(history.ServerExpired, "node0", "order:1", "tokA", 520, 0),
		tokAcquire(2, "order:1", "tokB", 521, 523), seen(history.ServerSet, "node0", "order:1", "tokB", 522, 822),
	}
	js := judge(t, evs...)
	if len(js) != 1 || js[0].Exercised || js[0].Lease != history.LeaseObserved {
		t.Fatalf("judged %+v, want one window not exercised on an observed lease", js)
	}
	if d := js[0].Detail; !strings.Contains(d, "the server removed client 1's lease on order:1 at 0.501 s") ||
		!strings.Contains(d, "the lease outlived the pause") {
		t.Errorf("sentence %q does not say what the server did", d)
	}
	var blind []history.Event
	for _, e := range evs {
		if e.Kind != history.Witness {
			blind = append(blind, e)
		}
	}
	js = judge(t, blind...)
	if len(js) != 1 || !js[0].Exercised || js[0].Lease != history.LeaseAssumed ||
		!strings.Contains(js[0].Detail, "assumed from the TTL: no witness watched the server") {
		t.Errorf("without a witness: %+v, want exercised, assumed and said so", js)
	}
}

// A pause that does outlast the observed lease is exercised, with the
// server's removal in the sentence.
func TestObservedLeaseEndExercisesAPauseThatOutlastsIt(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2), seen(history.ServerSet, "node0", "order:1", "tokA", 1, 301),
		window("client-pause", 10, 460, history.Hit{Pods: []int{1}}),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Ok), seen(history.ServerExpired, "node0", "order:1", "tokA", 306, 0),
	)
	if len(js) != 1 || !js[0].Exercised || js[0].Lease != history.LeaseObserved {
		t.Fatalf("judged %+v, want exercised on an observed lease", js)
	}
	if d := js[0].Detail; !strings.Contains(d, "at 0.301 s (expired on node0") || !strings.Contains(d, "client 2 tried") {
		t.Errorf("sentence %q", d)
	}
}

// The witness watched, but the lock's value was never seen (it keeps its
// keys under a name outside the namespace): assumed, and the sentence
// says why.
func TestUnseenLeaseIsAssumedWithTheReason(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2),
		window("client-pause", 10, 460, history.Hit{Pods: []int{1}}),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Refused),
	)
	if len(js) != 1 || js[0].Lease != history.LeaseAssumed || !strings.Contains(js[0].Detail, "the witness saw no lease of client 1's") {
		t.Errorf("judged %+v", js)
	}
}

// A watchdog's slow holder: the lease was due to lapse during the slow
// section as the server had it when the section began; its renewals
// after that are the lock's defence, so the window is exercised (and the
// lock survives it), and the sentence says the server kept the lease.
func TestRenewalsAfterTheWindowBeganAreTheLocksDefence(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2), seen(history.ServerSet, "node0", "order:1", "tokA", 1, 301),
		window("slow-holder", 10, 460, history.Hit{Pods: []int{1}}),
		seen(history.ServerExpire, "node0", "order:1", "tokA", 101, 401),
		seen(history.ServerExpire, "node0", "order:1", "tokA", 201, 501),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Refused),
		ev(history.Release, 1, "order:1", 470, 471, history.Ok), seen(history.ServerDel, "node0", "order:1", "tokA", 471, 0),
	)
	if len(js) != 1 || !js[0].Exercised || js[0].Lease != history.LeaseObserved {
		t.Fatalf("judged %+v, want exercised on an observed lease", js)
	}
	want := "the server had client 1's lease on order:1 due to lapse at 0.301 s when the fault began (on node0, seen by the witness); " +
		"renewed while it lasted, it kept it until 0.471 s"
	if !strings.Contains(js[0].Detail, want) {
		t.Errorf("sentence %q\nwant %q", js[0].Detail, want)
	}
}

// A window that opens as the acquire returns, before the witness heard of
// the write: the write's own expiry still holds.
func TestAWindowOpenedBeforeTheWitnessHeardTheWrite(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2),
		window("slow-holder", 2, 452, history.Hit{Pods: []int{1}}),
		seen(history.ServerSet, "node0", "order:1", "tokA", 3, 301),
		seen(history.ServerExpire, "node0", "order:1", "tokA", 101, 401),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Refused),
		ev(history.Release, 1, "order:1", 452, 453, history.Ok), seen(history.ServerDel, "node0", "order:1", "tokA", 453, 0),
	)
	if len(js) != 1 || !js[0].Exercised || !strings.Contains(js[0].Detail, "due to lapse at 0.301 s when the fault began") {
		t.Fatalf("judged %+v, want exercised, due at the write's own expiry", js)
	}
}

// A key with no expiry outlives any partition, and the sentence says so
// without a nonsense span; a node lost before the witness heard the
// write is named as the reason its lease end is assumed.
func TestNoExpiryAndLostSightSentences(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2), seen(history.ServerSet, "node0", "order:1", "tokA", 1, 0),
		window("client-partition", 10, 610, history.Hit{Pods: []int{1}, StopsHolder: true}),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Refused),
	)
	if len(js) != 1 || js[0].Exercised || !strings.Contains(js[0].Detail, "with no expiry") ||
		!strings.Contains(js[0].Detail, "the lease outlived the partition") || strings.Contains(js[0].Detail, "922337") {
		t.Errorf("no expiry: %+v", js)
	}
	lost := history.Event{Kind: history.Witness, Client: -1, Call: 3 * ms, Return: 3 * ms, Outcome: history.Ok, Err: "connection reset",
		Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.WitnessBlind})}
	js = judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(1, "order:1", "tokA", 0, 2), lost,
		window("client-pause", 10, 460, history.Hit{Pods: []int{1}}),
		ev(history.Acquire, 2, "order:1", 305, 310, history.Ok),
	)
	if len(js) != 1 || js[0].Lease != history.LeaseAssumed || !strings.Contains(js[0].Detail, "the witness lost sight of node0 at 0.003 s (connection reset)") {
		t.Errorf("lost sight: %+v", js)
	}
}

// On a loaded machine the fault's goroutine can wake after the pod it
// slowed has already released: the delete the witness saw is the
// holder's own release, not a lease that lapsed under it (the case CI
// hit: window 103-154.2 ms, release at 153 ms, delete seen at 153.5 ms).
func TestAWindowThatClosesAfterTheHolderReleased(t *testing.T) {
	js := judge(t,
		seen(history.WitnessWatches, "node0", "", "", 0, 0),
		tokAcquire(3, "order:1", "tokA", 100, 102), seen(history.ServerSet, "node0", "order:1", "tokA", 103, 403),
		window("slow-holder", 103, 156, history.Hit{Pods: []int{3}}),
		ev(history.Release, 3, "order:1", 153, 155, history.Ok), seen(history.ServerDel, "node0", "order:1", "tokA", 154, 0),
		ev(history.Acquire, 1, "order:1", 155, 156, history.Ok),
	)
	if len(js) != 1 || js[0].Exercised || !strings.Contains(js[0].Detail, "the lease outlived the slow critical section") {
		t.Fatalf("judged %+v, want not exercised: the holder released before its lease ended", js)
	}
}
