package checker

import (
	"math"

	"github.com/lockchaos/lockchaos/history"
)

// quiet is the checker's Quiescence: a key is quiet while nobody holds it
// and none of its operations is in flight. There the lock model is free,
// the resource model's state is what carry keeps, and no hold or
// operation spans the cut.
type quiet struct {
	keys    map[string]*keyState
	faulty  bool // the header names faults
	windows int  // fault windows open
	// last is the state of lastKey, the key of the line applied last: a
	// line mostly names the key the one before did (no lookup then).
	lastKey string
	last    *keyState
}

type keyState struct {
	holds    map[int]bool // clients holding the key
	inFlight int
	lastID   int64 // the latest op id of the key applied
	quietID  int64 // the latest op id of the key when it last became quiet
}

func (q *quiet) Start(h history.Header) { q.faulty = len(h.Faults) > 0 }

func (q *quiet) Applied(e *history.Event, returned bool) {
	if e.Kind == history.Fault {
		switch {
		case returned:
			q.windows--
		case e.Open:
			q.windows++
		}
	}
	if e.Key == "" {
		return
	}
	k := q.last
	if e.Key != q.lastKey || k == nil {
		if k = q.keys[e.Key]; k == nil {
			k = &keyState{holds: map[int]bool{}, quietID: -1}
			q.keys[e.Key] = k
		}
		q.lastKey, q.last = e.Key, k
	}
	k.lastID = max(k.lastID, e.ID)
	switch {
	case returned:
		k.inFlight--
	case e.Open:
		k.inFlight++
	}
	switch e.Kind {
	case history.Acquire:
		if returned && e.Outcome == history.Ok {
			k.holds[e.Client] = true
		}
	case history.Release, history.Lost, history.Abandon:
		delete(k.holds, e.Client)
	}
	if k.inFlight == 0 && len(k.holds) == 0 {
		k.quietID = k.lastID
	}
}

func (q *quiet) Open() bool { return q.windows > 0 }

func (q *quiet) KeyCut(key string) int64 {
	if k := q.keys[key]; k != nil && (k.inFlight > 0 || len(k.holds) > 0) {
		return k.quietID + 1
	}
	return math.MaxInt64
}
