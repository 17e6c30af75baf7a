package checker

import (
	"cmp"
	"container/heap"
	"slices"
	"sort"
	"strings"
)

// OverlapsUpTo returns the first limit overlapping pairs by start (those
// Overlaps returns, ordered as a stable sort by start orders them) and
// how many there are in all. n holds of one key at once make n(n-1)/2
// pairs: they are counted, not built, so time and memory follow the
// holds (a heap of the holds in force, a count per client), not the
// pairs; only the examples kept are built.
func OverlapsUpTo(holds []Hold, limit int) ([]Overlap, int) {
	kept, count, _ := overlapsMarked(holds, limit, Forever)
	return kept, count
}

// overlapsMarked is OverlapsUpTo with a mark per hold that overlaps
// earlier ones (standing for its pairs; a hold still held at the end ends
// at end), for the incidents.
func overlapsMarked(holds []Hold, limit int, end int64) ([]Overlap, int, []mark) {
	keys, byKey := holdsByKey(holds)
	var kept []Overlap
	var marks []mark
	count := 0
	for _, k := range keys {
		first, n := keyOverlaps(holds, byKey[k], limit, end, &marks)
		count += n
		// Keys in order, each key's pairs by start: a stable sort of the
		// kept and the key's first is the first of all of them.
		kept = append(kept, first...)
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
		kept = kept[:min(len(kept), limit)]
	}
	return kept, count, marks
}

// keyOverlaps counts the overlapping pairs among one key's holds (idx,
// by start) and builds the first limit of them, in Overlaps' order.
func keyOverlaps(holds []Hold, idx []int32, limit int, end int64, marks *[]mark) ([]Overlap, int) {
	var (
		ends  endHeap         // the holds in force
		own   = map[int]int{} // the holds in force per client
		order []int32         // the holds in force, by start, while examples are wanted (stale ones pruned lazily)
		out   []Overlap
		count int
		// latest is the latest end of the holds pushed: while any hold
		// is in force, the latest is among them.
		latest int64
		// firsts are the holds pushed, the earliest start on top; those
		// no longer in force leave it when they come up (lazily).
		firsts startHeap
	)
	wanted := limit > 0
	for i, hi := range idx {
		h := &holds[hi] // not a copy: a serial history has a million, read for a few fields
		for ends.Len() > 0 && ends[0].end <= h.Start {
			e := heap.Pop(&ends).(ended)
			own[e.client]--
			if own[e.client] == 0 {
				delete(own, e.client)
			}
		}
		if ends.Len() == 0 {
			// Nothing in force: every hold pushed ended by h.Start, so
			// the lazy pops below would take them all (a serial
			// history's would pile up, one per hold, never popped).
			firsts = firsts[:0]
		}
		n := ends.Len() - own[h.Client]
		if h.End <= h.Start {
			n -= startingAfter(holds, idx[:i], *h)
		}
		count += n
		if n > 0 {
			until := min(h.End, latest)
			if until == Forever {
				until = end
			}
			for firsts[0].end <= h.Start {
				heap.Pop(&firsts)
			}
			// Its pairs span from the earliest start in force, as the
			// first of them (by start) does.
			*marks = append(*marks, mark{at: h.Start, start: min(h.Start, firsts[0].start), end: until, n: n, key: h.Key,
				property: MutualExclusion, id: h.AcquireID})
		}
		if wanted && (n > 0 || len(order) > 2*ends.Len()+64) {
			order = inForce(holds, order, h.Start)
		}
		if wanted && n > 0 {
			var full bool
			if out, full = pairsWith(holds, order, h, out, limit); full {
				wanted, order = false, nil
			}
		}
		heap.Push(&ends, ended{end: h.End, client: h.Client})
		latest = max(latest, h.End)
		heap.Push(&firsts, started{start: h.Start, end: h.End})
		own[h.Client]++
		if wanted {
			order = append(order, hi)
		}
	}
	return out, count
}

// pairsWith appends to out the overlaps of h with the holds of order (in
// force, by start) of other clients, up to limit in all; full says out
// reached it.
func pairsWith(holds []Hold, order []int32, h *Hold, out []Overlap, limit int) (_ []Overlap, full bool) {
	for _, ai := range order {
		a := holds[ai]
		if a.Client == h.Client || a.Start >= h.End {
			continue
		}
		out = append(out, Overlap{A: a, B: *h, Start: h.Start, End: min(a.End, h.End)})
		if len(out) == limit {
			return out, true
		}
	}
	return out, false
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

// started is a hold pushed: when it began and ended.
type started struct{ start, end int64 }

// startHeap is the holds pushed, the earliest start on top.
type startHeap []started

func (s startHeap) Len() int           { return len(s) }
func (s startHeap) Less(i, j int) bool { return s[i].start < s[j].start }
func (s startHeap) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *startHeap) Push(x any)        { *s = append(*s, x.(started)) }
func (s *startHeap) Pop() any {
	old := *s
	x := old[len(old)-1]
	*s = old[:len(old)-1]
	return x
}

// Contended is a stretch in which Client held Key while another client
// held it too: the union of the client's overlaps, what a timeline paints.
type Contended struct {
	Client     int
	Key        string
	Start, End int64 // End Forever: to the end of the run
}

// ContendedSpans returns every client's contended stretches, by key then
// time, in one sweep per key: a client's state changes only at its own
// holds' ends and where it becomes, or stops being, the only one holding,
// so the spans are as many as the holds, however many pairs overlap.
func ContendedSpans(holds []Hold) []Contended {
	keys, byKey := holdsByKey(holds)
	var out []Contended
	for _, k := range keys {
		out = keyContended(holds, byKey[k], k, out)
	}
	slices.SortStableFunc(out, func(a, b Contended) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.Start, b.Start), cmp.Compare(a.Client, b.Client))
	})
	return out
}

// edge is a hold's start or end, for the sweep.
type edge struct {
	at     int64
	client int
	start  bool
}

func keyContended(holds []Hold, idx []int32, key string, out []Contended) []Contended {
	edges := make([]edge, 0, 2*len(idx))
	for _, i := range idx {
		if h := holds[i]; h.End > h.Start { // one that ends as it starts overlaps nothing
			edges = append(edges, edge{h.Start, h.Client, true}, edge{h.End, h.Client, false})
		}
	}
	// Ends first at one instant: holds that touch do not overlap.
	sort.SliceStable(edges, func(i, j int) bool {
		return edges[i].at < edges[j].at || edges[i].at == edges[j].at && !edges[i].start && edges[j].start
	})
	own := map[int]int{} // holds per client holding
	since := map[int]int64{}
	total := 0
	update := func(c int, at int64) {
		_, was := since[c]
		now := own[c] > 0 && total > own[c]
		switch {
		case now && !was:
			since[c] = at
		case was && !now:
			out = append(out, Contended{Client: c, Key: key, Start: since[c], End: at})
			delete(since, c)
		}
	}
	for _, e := range edges {
		if e.start {
			own[e.client]++
			total++
		} else {
			own[e.client]--
			if own[e.client] == 0 {
				delete(own, e.client)
			}
			total--
		}
		update(e.client, e.at)
		if len(own) <= 2 { // only then may another client become, or stop being, the only one
			for c := range own {
				update(c, e.at)
			}
		}
	}
	return out
}
