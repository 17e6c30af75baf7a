package checker

import (
	"slices"
	"sort"

	"github.com/lockchaos/lockchaos/history"
)

// Stats describe how the run went, violations or not.
type Stats struct {
	Duration          int64   `json:"duration_ns"`
	Clients           int     `json:"clients"`
	AcquireOK         int     `json:"acquire_ok"`
	AcquireRefused    int     `json:"acquire_refused"`
	AcquireIndefinite int     `json:"acquire_indefinite"`
	Cycles            int     `json:"cycles"` // holds that ended with a release call
	CyclesPerSecond   float64 `json:"cycles_per_second"`
	AcquireP50        int64   `json:"acquire_p50_ns"` // latency of successful acquires
	AcquireP99        int64   `json:"acquire_p99_ns"`
	Reads             int     `json:"reads"`
	Writes            int     `json:"writes"`
	StaleFence        int     `json:"stale_fence_rejected"`
	ReleasesNotHeld   int     `json:"releases_not_held"`
	LostSignals       int     `json:"lost_signals"`
	// Abandoned counts holders that stopped for good holding a lease
	// (history.Abandon: a crashed pod, a hung worker).
	Abandoned      int `json:"abandoned"`
	RenewalsOK     int `json:"renewals_ok"`
	RenewalsFailed int `json:"renewals_failed"`
	Overlaps       int `json:"overlaps"`
	// LongestFree is the longest stretch with nobody holding a key while
	// some client was trying to acquire it (a liveness cost of faults).
	LongestFree    int64  `json:"longest_free_while_trying_ns"`
	LongestFreeKey string `json:"longest_free_key,omitempty"`
	LongestFreeAt  int64  `json:"longest_free_at_ns"`
	// FirstViolation is when the first decisive violation became visible,
	// or -1.
	FirstViolation int64 `json:"first_violation_ns"`
}

// With c non-nil (a history checked in chunks), the clients and acquire
// latencies are also kept in c for the whole file's figures, and the
// longest free stretch continues across the chunk's ends.
func computeStats(h *history.History, evs []history.Event, holds []Hold, c *carry) Stats {
	s := Stats{Duration: h.End, FirstViolation: -1}
	clients := map[int]bool{}
	lat := make([]int64, 0, len(holds)) // an acquire that succeeded is a hold
	last := -1                          // a client's operations come in runs
	for i := range evs {
		e := &evs[i]
		if e.Client >= 0 && e.Client != last {
			clients[e.Client], last = true, e.Client
		}
		s.tally(e)
		if e.Kind == history.Acquire && e.Outcome == history.Ok {
			lat = append(lat, e.Return-e.Call)
		}
	}
	s.Clients = len(clients)
	if c != nil {
		for cl := range clients {
			c.clients[cl] = true
		}
	}
	for j := range holds {
		hd := &holds[j]
		if hd.EndKind == history.Release {
			s.Cycles++
		}
	}
	if h.End > 0 {
		s.CyclesPerSecond = float64(s.Cycles) / (float64(h.End) / 1e9)
	}
	s.AcquireP50, s.AcquireP99 = percentiles(lat)
	if c != nil {
		// Kept sorted: a file of one chunk is not sorted again at its end
		// (finish), a quarter of a million latencies per million events.
		c.latencies = append(c.latencies, lat...)
	}
	s.LongestFree, s.LongestFreeKey, s.LongestFreeAt = longestFree(evs, holds, h.End, c)
	return s
}

// tally counts e in the figures it belongs to.
func (s *Stats) tally(e *history.Event) {
	switch e.Kind {
	case history.Acquire:
		switch e.Outcome {
		case history.Ok:
			s.AcquireOK++
		case history.Refused:
			s.AcquireRefused++
		default:
			s.AcquireIndefinite++
		}
	case history.Read, history.Write:
		switch e.Outcome {
		case history.Ok:
			if e.Kind == history.Read {
				s.Reads++
			} else {
				s.Writes++
			}
		case history.Refused:
			s.StaleFence++
		}
	case history.Release:
		if e.Outcome == history.Refused {
			s.ReleasesNotHeld++
		}
	case history.Lost:
		s.LostSignals++
	case history.Abandon:
		s.Abandoned++
	case history.Renew:
		if e.Outcome == history.Ok {
			s.RenewalsOK++
		} else {
			s.RenewalsFailed++
		}
	}
}

// percentiles returns the 50th and 99th of lat (sorting it, unless it is
// already), or zeros.
func percentiles(lat []int64) (p50, p99 int64) {
	if len(lat) == 0 {
		return 0, 0
	}
	if !slices.IsSorted(lat) {
		slices.Sort(lat)
	}
	return lat[(len(lat)-1)*50/100], lat[(len(lat)-1)*99/100]
}

type span struct{ from, to int64 }

// earliestTry returns, per key, the first attempt of the clients still
// trying for it.
func earliestTry(first map[ck]int64) map[string]int64 {
	from := map[string]int64{}
	for k, f := range first {
		if v, ok := from[k.key]; !ok || f < v {
			from[k.key] = f
		}
	}
	return from
}

// ck is a client's view of one key.
type ck struct {
	client int
	key    string
}

// longestFree measures, per key, the time covered by some client trying
// to acquire (from its first attempt of a cycle to the attempt that
// succeeded, or to its last attempt) and by no hold.
//
// With c non-nil (a chunk), a client still trying when the chunk ends
// keeps its first attempt in c, and the next chunk starts its span there.
// Its span here ends at its last attempt (it may yet give up), so a free
// stretch it covers is only certain once it wins: c keeps, per key, the
// free stretches since its first attempt that could still be the longest,
// and counts the rest of that time as held (measured already).
func longestFree(evs []history.Event, holds []Hold, end int64, c *carry) (int64, string, int64) {
	first, lastRet, held := carriedSpans(c)
	trying := tryingSpans(evs, first, lastRet)
	for k, n := range perKey(holds, func(h *Hold) (string, bool) { return h.Key, true }) {
		held[k] = slices.Grow(held[k], n)
	}
	for j := range holds {
		h := &holds[j]
		to := h.End
		if to == Forever {
			to = end
		}
		held[h.Key] = append(held[h.Key], span{h.Start, to})
	}
	best, bestKey, bestAt := widestFree(trying, held)
	if c != nil {
		c.carryFree(first, lastRet, held, best)
	}
	return best, bestKey, bestAt
}

// carriedSpans starts longestFree from what an earlier chunk left (c nil:
// nothing): each still-trying client's first attempt and last return, and
// per key the time already measured, counted as held.
func carriedSpans(c *carry) (first, lastRet map[ck]int64, held map[string][]span) {
	first, lastRet, held = map[ck]int64{}, map[ck]int64{}, map[string][]span{}
	if c == nil {
		return first, lastRet, held
	}
	for k, f := range c.trying {
		first[k], lastRet[k] = f, c.lastTry[k]
	}
	for key, f := range earliestTry(c.trying) {
		until, ok := c.heldUntil[key]
		if !ok || until <= f {
			continue
		}
		cur := f
		// Zero-length spans too: a hold of an instant splits a gap.
		for _, g := range c.freeGaps[key] {
			if g.from >= cur {
				held[key] = append(held[key], span{cur, g.from})
			}
			cur = max(cur, g.to)
		}
		if until >= cur {
			held[key] = append(held[key], span{cur, until})
		}
	}
	return first, lastRet, held
}

// tryingSpans returns, per key, each client's spans of trying: from its
// first attempt to the return of the acquire that won, or of its last one
// (it gave up, or the run ended while it tried). first and lastRet are
// left holding the clients still trying at the end.
func tryingSpans(evs []history.Event, first, lastRet map[ck]int64) map[string][]span {
	// Sized: grown by appending, a key's spans cost five times their size.
	trying := map[string][]span{}
	for k, n := range perKey(evs, func(e *history.Event) (string, bool) { return e.Key, isAcquired(e) }) {
		trying[k] = make([]span, 0, n+len(first))
	}
	for i := range evs {
		e := &evs[i]
		if e.Kind != history.Acquire {
			continue
		}
		k := ck{e.Client, e.Key}
		if _, ok := first[k]; !ok {
			first[k] = e.Call
		}
		lastRet[k] = e.Return
		if e.Outcome == history.Ok {
			trying[e.Key] = append(trying[e.Key], span{first[k], e.Return})
			delete(first, k)
		}
	}
	for k, f := range first {
		trying[k.key] = append(trying[k.key], span{f, lastRet[k]})
	}
	return trying
}

// widestFree returns the longest stretch within someone's trying with no
// hold on its key: its length, key and start.
func widestFree(trying, held map[string][]span) (best int64, bestKey string, bestAt int64) {
	keys := make([]string, 0, len(trying))
	for k := range trying {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// Both lists are sorted and disjoint: one sweep, each hold passed
		// over once per trying span it touches (every hold for every span
		// would take minutes on a million serial holds).
		hs := union(held[k])
		j := 0
		for _, t := range union(trying[k]) {
			for j < len(hs) && hs[j].to <= t.from {
				j++
			}
			cur := t.from
			for i := j; i < len(hs) && hs[i].from < t.to; i++ {
				if h := hs[i]; h.from > cur && h.from-cur > best {
					best, bestAt, bestKey = h.from-cur, cur, k
				}
				cur = max(cur, hs[i].to)
			}
			if t.to > cur && t.to-cur > best {
				best, bestAt, bestKey = t.to-cur, cur, k
			}
		}
	}
	return best, bestKey, bestAt
}

// carryFree keeps, for the next chunk, who is still trying and, per key
// with someone still trying, the free stretches since the earliest such
// attempt that are at least as long as the longest yet (no shorter one
// can matter): if a client still trying wins later, its span covers them.
func (c *carry) carryFree(first, lastRet map[ck]int64, held map[string][]span, best int64) {
	c.best = max(c.best, best)
	c.trying, c.lastTry = first, lastRet
	for k, hs := range held {
		for _, h := range hs {
			c.heldUntil[k] = max(c.heldUntil[k], h.to)
		}
	}
	c.freeGaps = map[string][]span{}
	for key, f := range earliestTry(first) {
		cur := f
		for _, h := range union(held[key]) {
			if h.from > cur && h.from-cur >= c.best {
				c.freeGaps[key] = append(c.freeGaps[key], span{cur, h.from})
			}
			cur = max(cur, h.to)
		}
	}
}

// union merges spans into sorted disjoint spans. Spans already so (a
// serial history's holds and attempts, hundreds of thousands on a key)
// come back as they are, not copied: the result is read, never written.
func union(in []span) []span {
	if len(in) == 0 {
		return nil
	}
	if disjoint(in) {
		return in
	}
	s := slices.Clone(in)
	sort.Slice(s, func(i, j int) bool { return s[i].from < s[j].from })
	out := []span{s[0]}
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.from <= last.to {
			last.to = max(last.to, x.to)
		} else {
			out = append(out, x)
		}
	}
	return out
}

// disjoint reports whether spans are sorted by start and apart: each
// starts after the one before ends (touching ones are merged by union).
func disjoint(in []span) bool {
	for i := 1; i < len(in); i++ {
		if in[i].from <= in[i-1].to || in[i].from < in[i-1].from {
			return false
		}
	}
	return true
}

func isAcquired(e *history.Event) bool { return e.Kind == history.Acquire && e.Outcome == history.Ok }

// perKey counts the items of xs that match, by key. Items come in runs
// of one key (a key's cycle), so only a change of key costs a lookup.
func perKey[T any](xs []T, keyOf func(*T) (string, bool)) map[string]int {
	n := map[string]int{}
	last, run := "", 0
	for i := range xs {
		k, ok := keyOf(&xs[i])
		if !ok {
			continue
		}
		if k != last {
			if run > 0 {
				n[last] += run
			}
			last, run = k, 0
		}
		run++
	}
	if run > 0 {
		n[last] += run
	}
	return n
}
