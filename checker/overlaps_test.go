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
