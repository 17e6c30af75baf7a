package checker

import (
	"math"
	"sort"

	"github.com/lockchaos/lockchaos/history"
)

// Forever is the end of a hold that never ended (and porcupine's return
// time for an operation that may still take effect).
const Forever = math.MaxInt64

// Hold is one believed-held interval: from the acquire's return until the
// holder called release, got its lost-lease signal, or forever.
type Hold struct {
	Client    int    `json:"client"`
	Key       string `json:"key"`
	Token     string `json:"token,omitempty"`
	Fence     uint64 `json:"fence,omitempty"`
	Start     int64  `json:"start"` // acquire return
	End       int64  `json:"end"`   // release call, lost signal, or Forever
	AcquireID int64  `json:"acquire"`
	// EndID is the op that ended the hold (-1 if none); EndKind is
	// history.Release, history.Lost, or history.Acquire (a second acquire
	// without a release, which closes the first hold defensively).
	EndID   int64        `json:"end_op"`
	EndKind history.Kind `json:"end_kind,omitempty"`
	// EndOutcome is the ending release's outcome (ok: it deleted a key).
	EndOutcome history.Outcome `json:"end_outcome,omitempty"`
	// acquireCall and endReturn bound the porcupine operations.
	acquireCall int64
	endReturn   int64
}

// sortedEvents returns the events ordered by call time (ties by id); the
// recorder appends after-the-fact records (renewals) out of call order.
// The history is not modified; when it is already in order (the usual
// case) it is returned as is, since a copy of a million events is most of
// a check's cost.
func sortedEvents(h *history.History) []history.Event {
	less := func(a, b *history.Event) bool {
		if a.Call != b.Call {
			return a.Call < b.Call
		}
		return a.ID < b.ID
	}
	sorted := true
	for i := 1; i < len(h.Events); i++ {
		if less(&h.Events[i], &h.Events[i-1]) {
			sorted = false
			break
		}
	}
	if sorted {
		return h.Events
	}
	// Sort indices, not 200-byte events, then copy once.
	idx := make([]int32, len(h.Events))
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.SliceStable(idx, func(i, j int) bool { return less(&h.Events[idx[i]], &h.Events[idx[j]]) })
	evs := make([]history.Event, len(h.Events))
	for i, j := range idx {
		evs[i] = h.Events[j]
	}
	return evs
}

// Holds returns every believed-held interval in the history, ordered by
// start.
func Holds(h *history.History) []Hold {
	return holdsOf(sortedEvents(h))
}

func holdsOf(evs []history.Event) []Hold {
	type ck struct {
		client int
		key    string
	}
	open := map[ck]int{} // index into holds
	// Sized up front: grown by appending, a 10M-event history's holds
	// cost five times their size in garbage, and twice it at the peak.
	n := 0
	for i := range evs {
		if evs[i].Kind == history.Acquire && evs[i].Outcome == history.Ok {
			n++
		}
	}
	holds := make([]Hold, 0, n)
	closeHold := func(i int, e history.Event, end int64) {
		holds[i].End, holds[i].EndID, holds[i].EndKind, holds[i].endReturn = end, e.ID, e.Kind, e.Return
		holds[i].EndOutcome = e.Outcome
	}
	for _, e := range evs {
		k := ck{e.Client, e.Key}
		switch e.Kind {
		case history.Acquire:
			if e.Outcome != history.Ok {
				continue
			}
			if i, ok := open[k]; ok {
				closeHold(i, e, e.Call)
			}
			open[k] = len(holds)
			holds = append(holds, Hold{Client: e.Client, Key: e.Key, Token: e.Token, Fence: e.Fence,
				Start: e.Return, End: Forever, AcquireID: e.ID, EndID: -1, acquireCall: e.Call, endReturn: Forever})
		case history.Release, history.Lost:
			if i, ok := open[k]; ok {
				closeHold(i, e, e.Call)
				if e.Kind == history.Release && e.Open {
					holds[i].endReturn = Forever
				}
				delete(open, k)
			}
		}
	}
	sort.SliceStable(holds, func(i, j int) bool { return holds[i].Start < holds[j].Start })
	return holds
}

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
				if a.Client == h.Client || !(a.End > h.Start && h.Start < a.End && a.Start < h.End) {
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
	for i, h := range holds {
		if _, ok := byKey[h.Key]; !ok {
			keys = append(keys, h.Key)
		}
		byKey[h.Key] = append(byKey[h.Key], int32(i))
	}
	sort.Strings(keys)
	return keys, byKey
}
