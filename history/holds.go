package history

import (
	"math"
	"sort"
	"time"
)

// Forever is the end of a hold that never ended (and porcupine's return
// time for an operation that may still take effect).
const Forever = math.MaxInt64

// Hold is one believed-held interval: from the acquire's return until the
// holder called release, got its lost-lease signal, abandoned the lease
// (crashed or hung), or forever.
type Hold struct {
	Client    int    `json:"client"`
	Key       string `json:"key"`
	Token     string `json:"token,omitempty"`
	Fence     uint64 `json:"fence,omitempty"`
	Start     int64  `json:"start"` // acquire return
	End       int64  `json:"end"`   // release call, lost signal, or Forever
	AcquireID int64  `json:"acquire"`
	// EndID is the op that ended the hold (-1 if none); EndKind is
	// Release, Lost, Abandon, or Acquire (a second acquire
	// without a release, which closes the first hold defensively).
	EndID   int64 `json:"end_op"`
	EndKind Kind  `json:"end_kind,omitempty"`
	// EndOutcome is the ending release's outcome (ok: it deleted a key).
	EndOutcome Outcome `json:"end_outcome,omitempty"`
	// AcquireCall and EndReturn are the acquire's call and the ending
	// op's return (Forever if it may still take effect): they bound the
	// checker's porcupine operations and the faults' renewal windows.
	AcquireCall int64 `json:"-"`
	EndReturn   int64 `json:"-"`
}

// ByCall returns the events ordered by call time (ties by id); the
// recorder appends after-the-fact records (renewals) out of call order.
// The history is not modified; when it is already in order (the usual
// case) it is returned as is, since a copy of a million events is most of
// a check's cost.
func ByCall(h *History) []Event {
	less := func(a, b *Event) bool {
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
	evs := make([]Event, len(h.Events))
	for i, j := range idx {
		evs[i] = h.Events[j]
	}
	return evs
}

// Holds returns every believed-held interval in the history, ordered by
// start.
func Holds(h *History) []Hold {
	return HoldsOf(ByCall(h))
}

// HoldsOf returns the holds of events already ordered by call (ByCall),
// ordered by start. A second acquire by a client of a key it holds closes
// the first hold at its call, defensively.
func HoldsOf(evs []Event) []Hold {
	type ck struct {
		client int
		key    string
	}
	open := map[ck]int{} // index into holds
	// Sized up front: grown by appending, a 10M-event history's holds
	// cost five times their size in garbage, and twice it at the peak.
	n := 0
	for i := range evs {
		if evs[i].Kind == Acquire && evs[i].Outcome == Ok {
			n++
		}
	}
	holds := make([]Hold, 0, n)
	closeHold := func(i int, e *Event, end int64) {
		holds[i].End, holds[i].EndID, holds[i].EndKind, holds[i].EndReturn = end, e.ID, e.Kind, e.Return
		holds[i].EndOutcome = e.Outcome
	}
	for j := range evs {
		e := &evs[j] // not a copy: a million events, read for a few fields
		k := ck{e.Client, e.Key}
		switch e.Kind {
		case Acquire:
			if e.Outcome != Ok {
				continue
			}
			if i, ok := open[k]; ok {
				closeHold(i, e, e.Call)
			}
			open[k] = len(holds)
			holds = append(holds, Hold{Client: e.Client, Key: e.Key, Token: e.Token, Fence: e.Fence,
				Start: e.Return, End: Forever, AcquireID: e.ID, EndID: -1, AcquireCall: e.Call, EndReturn: Forever})
		case Release, Lost, Abandon:
			if i, ok := open[k]; ok {
				closeHold(i, e, e.Call)
				if e.Kind == Release && e.Open {
					holds[i].EndReturn = Forever
				}
				delete(open, k)
			}
		}
	}
	sort.SliceStable(holds, func(i, j int) bool { return holds[i].Start < holds[j].Start })
	return holds
}

// The liveness bounds' defaults, for a history whose header records none
// (the plan resolves both for every cell it runs).

// DefaultRetrySlack is how long after a key frees a pod that keeps trying
// may take to try again: three of the workload's longest backoffs (20 ms).
const DefaultRetrySlack = 60 * time.Millisecond

// DefaultRecoverWithin is deadlock-free's default bound: twice the TTL
// (the lease a stopped holder left runs out within one) plus the retry
// slack.
func DefaultRecoverWithin(ttl, slack time.Duration) time.Duration { return 2*ttl + slack }

// DefaultAcquireWithin is fault-tolerant's default bound: three call
// timeouts (a quorum lock waits out its unreachable node on every
// attempt) plus the retry slack.
func DefaultAcquireWithin(callTimeout, slack time.Duration) time.Duration {
	return 3*callTimeout + slack
}
