package checker

import (
	"sort"

	"github.com/lockchaos/lockchaos/history"
)

// Forever is the end of a hold that never ended (and porcupine's return
// time for an operation that may still take effect).
const Forever = history.Forever

// Hold is one believed-held interval (history.Hold: the one derivation of
// holds, which the faults' dangerous moments read too).
type Hold = history.Hold

// Holds returns every believed-held interval in the history, ordered by
// start.
func Holds(h *history.History) []Hold { return history.Holds(h) }

// sortedEvents and holdsOf are history's, under the names the checker's
// stages use.
func sortedEvents(h *history.History) []history.Event { return history.ByCall(h) }
func holdsOf(evs []history.Event) []Hold              { return history.HoldsOf(evs) }

// Overlap is a pair of holds on one key by different clients that overlap.
type Overlap struct {
	A, B       Hold
	Start, End int64 // the overlapping window
}

// Overlaps sweeps the holds of each key and returns every overlapping pair
// (strictly: touching at one instant is not an overlap).
func Overlaps(holds []Hold) []Overlap {
	keys, byKey := holdsByKey(holds)
	var out []Overlap
	for _, k := range keys {
		var active []Hold
		for _, i := range byKey[k] { // ordered by start
			h := holds[i]
			kept := active[:0]
			for _, a := range active {
				if a.End > h.Start {
					kept = append(kept, a)
				}
			}
			active = kept
			for _, a := range active {
				if a.Client == h.Client || a.End <= h.Start || a.Start >= h.End {
					continue
				}
				out = append(out, Overlap{A: a, B: h, Start: h.Start, End: min(a.End, h.End)})
			}
			active = append(active, h)
		}
	}
	return out
}

// holdsByKey groups holds by key as positions in holds (four bytes a hold,
// not a copy of each), keeping their order; keys come sorted.
func holdsByKey(holds []Hold) ([]string, map[string][]int32) {
	byKey := map[string][]int32{}
	var keys []string
	for i := range holds {
		h := &holds[i]
		if _, ok := byKey[h.Key]; !ok {
			keys = append(keys, h.Key)
		}
		byKey[h.Key] = append(byKey[h.Key], int32(i))
	}
	sort.Strings(keys)
	return keys, byKey
}
