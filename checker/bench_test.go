package checker_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// generate builds a passing history of about n events: 8 clients taking
// turns on the given keys (each key's cycles interleaved in time with the
// others'), every cycle an acquire, a refused attempt by another client
// overlapping it, a read, a write of v+1 and a release.
func generate(n, keys int) *history.History { return generateWith(n, keys, 8, true, 0) }

// generateWith is generate with the number of clients, whether a refused
// attempt overlaps every hold, and the share of writes that time out.
func generateWith(n, keys, clients int, contended bool, indefinite float64) *history.History {
	rng := rand.New(rand.NewPCG(1, 2))
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Lock: "token"}}
	h.Events = make([]history.Event, 0, n+8)
	clock := make([]int64, keys)
	value := make([]int64, keys)
	names := make([]string, keys)
	for k := range keys {
		names[k] = fmt.Sprintf("order:%d", k)
		clock[k] = int64(k) * 1000
	}
	var id int64
	add := func(e history.Event) {
		e.ID = id
		id++
		h.Events = append(h.Events, e)
	}
	for len(h.Events) < n {
		k := rng.IntN(keys)
		key, t := names[k], clock[k]
		// Each key has its own clients (a client does one thing at a
		// time, and each key's cycles run on their own clock).
		per := max(2, clients/keys)
		c := rng.IntN(per)
		other := (c+1+rng.IntN(per-1))%per + k*per
		c += k * per
		lat := func() int64 { return 50_000 + rng.Int64N(200_000) }
		add(history.Event{Kind: history.Acquire, Client: c, Key: key, Call: t, Return: t + lat(), Outcome: history.Ok, Token: "t"})
		t = h.Events[len(h.Events)-1].Return
		if contended {
			add(history.Event{Kind: history.Acquire, Client: other, Key: key, Call: t - 20_000, Return: t + lat(), Outcome: history.Refused})
		}
		r := t + 10_000
		add(history.Event{Kind: history.Read, Client: c, Key: key, Call: r, Return: r + 1_000, Value: value[k], Outcome: history.Ok})
		w := r + 1_000_000 + rng.Int64N(5_000_000)
		out := history.Ok
		if rng.Float64() < indefinite {
			// A timed-out write that did happen: the next holder reads it.
			out = history.Indefinite
		}
		value[k]++
		add(history.Event{Kind: history.Write, Client: c, Key: key, Call: w, Return: w + 1_000, Value: value[k], Outcome: out})
		rel := w + 10_000
		add(history.Event{Kind: history.Release, Client: c, Key: key, Call: rel, Return: rel + lat(), Outcome: history.Ok})
		clock[k] = rel + 300_000 + rng.Int64N(500_000)
	}
	// A recorder writes events in call order with ids in that order.
	slices.SortStableFunc(h.Events, func(a, b history.Event) int { return cmp.Compare(a.Call, b.Call) })
	for i := range h.Events {
		h.Events[i].ID = int64(i)
		h.End = max(h.End, h.Events[i].Return)
	}
	return h
}

// peakHeap samples the live heap while f runs and returns the largest value.
func peakHeap(f func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// BenchmarkCheck1M checks generated 1,000,000-event histories, over 10
// keys and on a single key. Targets (DESIGN section 8): under 5 s and
// 1 GiB each. Run with:
//
//	go test -run '^$' -bench BenchmarkCheck1M -benchtime 1x ./checker/
func BenchmarkCheck1M(b *testing.B) {
	for _, keys := range []int{10, 1} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			h := generate(1_000_000, keys)
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			for range b.N {
				var rep *checker.Report
				p := peakHeap(func() {
					rep = checker.Check(context.Background(), h, checker.Options{Budget: time.Minute})
				})
				peak = max(peak, p)
				if rep.Verdict != checker.Pass {
					b.Fatalf("generated history should pass: %+v", rep.Results)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(len(h.Events)), "events")
		})
	}
}

// BenchmarkCheckSizes shows how checking scales: 10k, 100k and 1M events
// on one key.
func BenchmarkCheckSizes(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			h := generate(n, 1)
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			for range b.N {
				peak = max(peak, peakHeap(func() { checker.Check(context.Background(), h, checker.Options{}) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

func TestGeneratedHistoryPassesAndMutatedFails(t *testing.T) {
	h := generate(20_000, 3)
	if rep := check(t, h); rep.Verdict != checker.Pass {
		t.Fatalf("generated history: %s %+v", rep.Verdict, rep.Results)
	}
	// A stale read in the middle must still be found after all the cuts.
	for i := len(h.Events) / 2; i < len(h.Events); i++ {
		if h.Events[i].Kind == history.Read {
			h.Events[i].Value--
			break
		}
	}
	if rep := check(t, h); rep.Result(checker.ResourceLinearizable).Status != checker.Fail {
		t.Fatal("stale read in a 20k history not caught")
	}
}

// BenchmarkCheckLiveness1M is the liveness properties' cost on a large
// history: 1,000,000 events over 10 keys and over one, with pods crashing
// under their leases every 60 cycles and a lock node of three going down
// for a second (every stopped holder and node-down window is a moment
// the sweep follows), checked whole. BenchmarkCheck1M is the same size
// without such windows (the sweep does not run); compare the two. Run:
//
//	go test -run '^$' -bench 'BenchmarkCheck1M|BenchmarkCheckLiveness1M' -benchtime 3x ./checker/
func BenchmarkCheckLiveness1M(b *testing.B) {
	for _, keys := range []int{10, 1} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			h := liveShaped(1_000_000, keys, liveShapes[4]) // crash-and-node-down
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			var rep *checker.Report
			for range b.N {
				peak = max(peak, peakHeap(func() {
					rep = checker.Check(context.Background(), h, checker.Options{Budget: time.Minute})
				}))
			}
			df, ft := rep.Result(checker.DeadlockFree), rep.Result(checker.FaultTolerant)
			if df.Judged == 0 || ft.Judged == 0 {
				b.Fatalf("nothing judged: %+v %+v", df, ft)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(df.Elapsed+ft.Elapsed)/1e6, "liveness-ms")
			b.ReportMetric(float64(df.Judged+ft.Judged), "moments")
		})
	}
}
