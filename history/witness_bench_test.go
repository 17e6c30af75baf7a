package history_test

import (
	"fmt"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// witnessed builds n leases on one key: each written, then deleted by its
// holder's release, as a contended token lock's history has them.
func witnessed(n int) ([]history.Event, []history.Hold) {
	evs := []history.Event{{ID: 0, Kind: history.Witness, Client: -1, Outcome: history.Ok,
		Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.WitnessWatches})}}
	holds := make([]history.Hold, 0, n)
	for i := range n {
		t := int64(i) * 1_000_000
		tok := fmt.Sprintf("tok%08d", i)
		evs = append(evs,
			history.Event{ID: int64(len(evs)), Kind: history.Witness, Client: -1, Key: "order:1", Token: tok,
				Call: t + 100_000, Return: t + 100_000, Outcome: history.Ok,
				Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.ServerSet, Deadline: t + 300_000_000})},
			history.Event{ID: int64(len(evs) + 1), Kind: history.Witness, Client: -1, Key: "order:1", Token: tok,
				Call: t + 900_000, Return: t + 900_000, Outcome: history.Ok, Window: history.WitnessWindow(history.ServerAct{Node: "node0", Act: history.ServerDel})})
		holds = append(holds, history.Hold{Client: i % 8, Key: "order:1", Token: tok, Start: t + 200_000, End: t + 800_000, AcquireCall: t})
	}
	return evs, holds
}

// BenchmarkServerViewOf: deriving the server's side of a history (once
// per judge and per check), per witness event.
func BenchmarkServerViewOf(b *testing.B) {
	evs, _ := witnessed(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		history.ServerViewOf(evs, int64(len(evs))*1_000_000)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
}

// BenchmarkLeaseFor: the lease behind each hold (the checker's
// stale-belief and the timeline ask it per hold), per hold.
func BenchmarkLeaseFor(b *testing.B) {
	evs, holds := witnessed(100_000)
	v := history.ServerViewOf(evs, int64(len(evs))*1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, h := range holds {
			if _, ok := v.LeaseFor(h, 1); !ok {
				b.Fatal("no lease")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(holds)), "ns/hold")
}
