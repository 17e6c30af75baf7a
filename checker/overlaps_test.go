package checker_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
)

// OverlapsUpTo counts every pair Overlaps lists and keeps the first limit
// of them by start, as a stable sort of Overlaps' list orders them: on
// random holds of a few keys and clients, touching, nested, never ending,
// and ending before they start (a lost signal during the acquire).
func TestOverlapsUpToAgreesWithOverlaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 2000 {
		n := rng.IntN(40)
		holds := make([]checker.Hold, n)
		for i := range holds {
			start := rng.Int64N(50)
			end := start + rng.Int64N(20) - 3
			if rng.IntN(10) == 0 {
				end = checker.Forever
			}
			holds[i] = checker.Hold{Client: rng.IntN(5), Key: []string{"a", "b", "c"}[rng.IntN(3)], Start: start, End: end,
				AcquireID: int64(i), EndID: int64(i)}
		}
		slices.SortStableFunc(holds, func(a, b checker.Hold) int { return int(a.Start - b.Start) })
		all := checker.Overlaps(holds)
		sort.SliceStable(all, func(i, j int) bool { return all[i].Start < all[j].Start })
		limit := 1 + rng.IntN(8)
		if round%3 == 0 {
			limit = 1 << 20
		}
		first, count := checker.OverlapsUpTo(holds, limit)
		if count != len(all) {
			t.Fatalf("round %d: counted %d, Overlaps has %d", round, count, len(all))
		}
		want := all[:min(limit, len(all))]
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(first, want) {
			t.Fatalf("round %d: first %d differ:\n got %+v\nwant %+v", round, limit, first, want)
		}
	}
}

// ContendedSpans paints what the pairs paint: at every instant, a client
// is in a span exactly when it is in one of Overlaps' pairs (as either
// hold), on random holds (times even, looked at on the odd instants
// between them).
func TestContendedSpansCoverThePairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 1000 {
		holds := make([]checker.Hold, rng.IntN(30))
		for i := range holds {
			start := 2 * rng.Int64N(40)
			end := start + 2*rng.Int64N(12) - 2
			if rng.IntN(10) == 0 {
				end = checker.Forever
			}
			holds[i] = checker.Hold{Client: rng.IntN(4), Key: []string{"a", "b"}[rng.IntN(2)], Start: start, End: end}
		}
		slices.SortStableFunc(holds, func(a, b checker.Hold) int { return int(a.Start - b.Start) })
		type at struct {
			key    string
			client int
			t      int64
		}
		want, got := map[at]bool{}, map[at]bool{}
		for _, o := range checker.Overlaps(holds) {
			for t := o.Start + 1; t < min(o.End, 200); t += 2 {
				want[at{o.A.Key, o.A.Client, t}], want[at{o.B.Key, o.B.Client, t}] = true, true
			}
		}
		for _, s := range checker.ContendedSpans(holds) {
			for t := s.Start + 1; t < min(s.End, 200); t += 2 {
				got[at{s.Key, s.Client, t}] = true
			}
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("round %d: the spans paint %d instants, the pairs %d\nholds %+v", round, len(got), len(want), holds)
		}
	}
}
