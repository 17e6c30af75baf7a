package checker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// liveShape is a kind of history the liveness properties judge, generated
// long enough to be cut into chunks around its faults.
type liveShape struct {
	name string
	// crash: every period cycles on a key its holder crashes and the
	// others retry until one gets the key a TTL later; stuckAt (a share of
	// the history, 0: never) is when a crash is recovered from by nobody.
	crash   bool
	stuckAt float64
	// down: every period cycles a lock node of three goes down for a
	// second; each acquire in it waits out a call timeout (Redlock), or
	// fails when starve is set (a lock that needs every node).
	down, starve bool
}

var liveShapes = []liveShape{
	{name: "crash-recovered", crash: true},
	{name: "crash-stuck", crash: true, stuckAt: 0.7},
	{name: "node-down", down: true},
	{name: "node-down-starved", down: true, starve: true},
	{name: "crash-and-node-down", crash: true, down: true},
}

const livePeriod = 60 // cycles between faults on a key

// liveShaped builds a history of about n events over keys keys of the
// given shape: 4 clients per key taking turns (each cycle an acquire, a
// refused attempt beside it, a release) with faults as the shape says.
// Times are real-sized (TTL 300 ms) so the default bounds apply.
func liveShaped(n, keys int, s liveShape) *history.History {
	rng := rand.New(rand.NewPCG(3, uint64(len(s.name))))
	b := newLB(history.Header{Scenario: s.name, Clients: 4 * keys, TTL: 300 * time.Millisecond, LockNodes: 3,
		Faults: []string{"pod-crash", "minority-partition"}})
	clock := make([]float64, keys)
	cycles := make([]int, keys)
	stuck := make([]bool, keys)
	for k := range keys {
		clock[k] = float64(k) * 0.3
	}
	downUntil := -1.0
	for len(b.h.Events) < n && slices.Contains(stuck, false) {
		k := rng.IntN(keys)
		key, t := fmt.Sprintf("order:%d", k), clock[k]
		if stuck[k] {
			continue
		}
		c := k*4 + rng.IntN(4)
		other := k*4 + (c-k*4+1+rng.IntN(3))%4
		cycles[k]++
		if s.down && k == 0 && cycles[k]%livePeriod == 0 && t > downUntil {
			downUntil = t + 1000
			b.window("minority-partition", t, downUntil, history.Hit{Down: []string{"node2"}})
		}
		lat := 0.1 + rng.Float64()*0.2
		if t < downUntil {
			lat += 250 // every attempt waits out the node that is down
		}
		if s.starve && t < downUntil {
			b.acq(c, key, t, t+lat, history.Indefinite)
			clock[k] = t + lat + 1
			continue
		}
		b.acq(c, key, t, t+lat, history.Ok)
		b.acq(other, key, t+0.05, t+lat+0.1, history.Refused)
		t += lat + 0.5
		if s.crash && cycles[k]%livePeriod == livePeriod/2 {
			last := s.stuckAt > 0 && len(b.h.Events) > int(s.stuckAt*float64(n))
			clock[k] = crashAndRetry(b, key, c, other, t, last, rng)
			stuck[k] = last
			continue
		}
		b.rel(c, key, t, t+0.1+rng.Float64()*0.1, history.Ok)
		clock[k] = t + 0.3 + rng.Float64()*0.5
	}
	if slices.Contains(stuck, true) {
		end := b.h.End
		for k := range keys {
			if stuck[k] {
				b.tries(fmt.Sprintf("order:%d", k), float64(end)/1e6+20, float64(end)/1e6+2000, 20, k*4+(k+1)%4)
			}
		}
	}
	return b.done()
}

// crashAndRetry crashes client c holding key at t; other retries every
// 20 ms and gets the key a TTL later, or (stuck) never: the retries then
// come at the history's end. It returns when the key's next cycle starts.
func crashAndRetry(b *lb, key string, c, other int, t float64, stuck bool, rng *rand.Rand) float64 {
	b.window("pod-crash", t, t+1, history.Hit{Pods: []int{c}, StopsHolder: true, Abandons: true})
	b.point(history.Abandon, c, key, t+0.5, history.Crashed)
	if stuck {
		return t
	}
	r := t + 5
	for ; r < t+300; r += 20 {
		b.acq(other, key, r, r+0.2, history.Refused)
	}
	lat := 0.1 + rng.Float64()*0.2
	b.acq(other, key, r, r+lat, history.Ok)
	b.rel(other, key, r+lat+0.5, r+lat+0.7, history.Ok)
	return r + lat + 1
}

// The liveness shapes come out as they are built to: the recovered crashes
// and the Redlock-like waits pass, the stuck crash and the starved lock
// fail, with the moments judged (a generator that judged nothing would
// make the chunked agreement test an empty one).
func TestLiveShapesAreJudged(t *testing.T) {
	for _, s := range liveShapes {
		for _, keys := range []int{1, 3} {
			rep := check(t, liveShaped(5_000, keys, s))
			df, ft := rep.Result(checker.DeadlockFree), rep.Result(checker.FaultTolerant)
			wantDF, wantFT := checker.Pass, checker.Pass
			if s.stuckAt > 0 {
				wantDF = checker.Fail
			}
			if s.starve {
				wantFT = checker.Fail
			}
			if df.Status != wantDF || ft.Status != wantFT || (s.crash && df.Judged == 0) || (s.down && ft.Judged == 0) {
				t.Errorf("%s on %d key(s): deadlock-free %s judged %d (%s), fault-tolerant %s judged %d (%s); want %s and %s",
					s.name, keys, df.Status, df.Judged, df.Note, ft.Status, ft.Judged, ft.Note, wantDF, wantFT)
			}
			if s.name == "crash-and-node-down" {
				continue
			}
			for _, p := range []checker.Property{checker.MutualExclusion, checker.ResourceLinearizable, checker.ForeignRelease} {
				if r := rep.Result(p); r.Status != checker.Pass {
					t.Errorf("%s on %d key(s): %s %s %v", s.name, keys, p, r.Status, r.Violations)
				}
			}
		}
	}
}

// A crash in one chunk and the acquire that recovers from it in a later
// one: the chunked check follows the stopped holder across the cuts and
// says what the whole check says. So does a key stuck to the end.
func TestChunkedLivenessAcrossCuts(t *testing.T) {
	for _, c := range []dfCase{dfCases()[0], dfCases()[1]} {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		if err := history.WriteFile(path, c.h); err != nil {
			t.Fatal(err)
		}
		var windowIn, recoveryIn, chunk int
		checked := func(h *history.History, _ *checker.Report) {
			chunk++
			for _, e := range h.Events {
				switch {
				case e.Kind == history.Fault:
					windowIn = chunk
				case e.Kind == history.Acquire && e.Outcome == history.Ok && e.Call > ms(410):
					recoveryIn = chunk
				}
			}
		}
		rep, sum, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 1, Checked: checked})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Chunks < 10 || (c.status == checker.Pass && recoveryIn <= windowIn) {
			t.Fatalf("%s: %d chunks, the window in chunk %d, the recovery in %d: want them apart", c.name, sum.Chunks, windowIn, recoveryIn)
		}
		whole := checker.Check(context.Background(), c.h, checker.Options{})
		if d := checker.SameReport(whole, rep, 50); len(d) > 0 {
			t.Fatalf("%s: %v", c.name, d)
		}
		if r := rep.Result(checker.DeadlockFree); r.Status != c.status || r.Judged != 1 {
			t.Fatalf("%s: chunked deadlock-free %s judged %d, want %s judged 1", c.name, r.Status, r.Judged, c.status)
		}
	}
}
