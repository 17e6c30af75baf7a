package verify

import (
	"cmp"
	"slices"

	"github.com/lockchaos/lockchaos/history"
)

// MaxWitnessEvents caps the witness events a Result keeps: they are a
// share of the file (a few per cycle and node), and past the cap the
// server's view says it read the first ones only, rather than hold an
// unbounded file's worth.
const MaxWitnessEvents = 1 << 20

// addWitness keeps evs' witness events. A reader's chunk is reused once
// checked, so its events are copied with their windows; held says evs
// stay the caller's for good (a history held whole: no copy).
func (r *Result) addWitness(evs []history.Event, held bool) {
	for _, e := range evs {
		if e.Kind != history.Witness {
			continue
		}
		if len(r.Witness) == MaxWitnessEvents {
			r.WitnessMore++
			continue
		}
		if !held {
			e = clone(e)
		}
		r.Witness = append(r.Witness, e)
	}
}

// kept gathers a file's chunks into the whole history, for a page that
// draws it. The last chunk is the reader's no more, so a file of one
// chunk is kept as it was read, without a copy.
type kept struct{ h *history.History }

func (k *kept) add(h *history.History, last bool) {
	switch {
	case k.h == nil && last:
		k.h = h
		return
	case k.h == nil:
		k.h = &history.History{Header: h.Header}
	}
	for _, e := range h.Events {
		k.h.Events = append(k.h.Events, clone(e))
	}
	k.h.End = h.End
	if last { // a key's events moved past a cut follow others' later ones
		slices.SortStableFunc(k.h.Events, func(a, b history.Event) int { return cmp.Compare(a.Call, b.Call) })
	}
}

// clone copies e with its window, which the reader may reuse.
func clone(e history.Event) history.Event {
	e.Window = e.Window.Clone()
	return e
}
