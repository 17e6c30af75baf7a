package checker

import (
	"container/heap"
	"sort"
)

// OverlapsUpTo returns the first limit overlapping pairs by start (those
// Overlaps returns, ordered as a stable sort by start orders them) and
// how many there are in all. n holds of one key at once make n(n-1)/2
// pairs: they are counted, not built, so time and memory follow the
// holds (a heap of the holds in force, a count per client), not the
// pairs; only the examples kept are built.
func OverlapsUpTo(holds []Hold, limit int) ([]Overlap, int) {
	keys, byKey := holdsByKey(holds)
	var kept []Overlap
	count := 0
	for _, k := range keys {
		first, n := keyOverlaps(holds, byKey[k], limit)
		count += n
		// Keys in order, each key's pairs by start: a stable sort of the
		// kept and the key's first is the first of all of them.
		kept = append(kept, first...)
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
		kept = kept[:min(len(kept), limit)]
	}
	return kept, count
}

// keyOverlaps counts the overlapping pairs among one key's holds (idx,
// by start) and builds the first limit of them, in Overlaps' order.
func keyOverlaps(holds []Hold, idx []int32, limit int) ([]Overlap, int) {
	var (
		ends  endHeap         // the holds in force
		own   = map[int]int{} // the holds in force per client
		order []int32         // the holds in force, by start, while examples are wanted (stale ones pruned lazily)
		out   []Overlap
		count int
	)
	wanted := limit > 0
	for i, hi := range idx {
		h := holds[hi]
		for ends.Len() > 0 && ends[0].end <= h.Start {
			e := heap.Pop(&ends).(ended)
			if own[e.client]--; own[e.client] == 0 {
				delete(own, e.client)
			}
		}
		n := ends.Len() - own[h.Client]
		if h.End <= h.Start {
			n -= startingAfter(holds, idx[:i], h)
		}
		count += n
		if wanted && (n > 0 || len(order) > 2*ends.Len()+64) {
			order = inForce(holds, order, h.Start)
		}
		if wanted && n > 0 {
			for _, ai := range order {
				a := holds[ai]
				if a.Client == h.Client || a.Start >= h.End {
					continue
				}
				out = append(out, Overlap{A: a, B: h, Start: h.Start, End: min(a.End, h.End)})
				if len(out) == limit {
					wanted, order = false, nil
					break
				}
			}
		}
		heap.Push(&ends, ended{end: h.End, client: h.Client})
		own[h.Client]++
		if wanted {
			order = append(order, hi)
		}
	}
	return out, count
}

// inForce keeps the holds of order still held after t.
func inForce(holds []Hold, order []int32, t int64) []int32 {
	kept := order[:0]
	for _, ai := range order {
		if holds[ai].End > t {
			kept = append(kept, ai)
		}
	}
	return kept
}

// startingAfter counts the holds in force of other clients that began at
// or after h's end: only a hold that ends before it starts (a lost signal
// or a second acquire ended it at once) has any, among the holds that
// began between its end and its start.
func startingAfter(holds []Hold, before []int32, h Hold) int {
	n := 0
	for j := len(before) - 1; j >= 0 && holds[before[j]].Start >= h.End; j-- {
		if a := holds[before[j]]; a.End > h.Start && a.Client != h.Client {
			n++
		}
	}
	return n
}

// ended is a hold in force: when it ends, and whose it is.
type ended struct {
	end    int64
	client int
}

// endHeap is the holds in force, the first to end on top.
type endHeap []ended

func (e endHeap) Len() int           { return len(e) }
func (e endHeap) Less(i, j int) bool { return e[i].end < e[j].end }
func (e endHeap) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *endHeap) Push(x any)        { *e = append(*e, x.(ended)) }
func (e *endHeap) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}
