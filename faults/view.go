package faults

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// What a Danger reads of a history: who held what, when a lease was due
// to lapse, who tried; and the words its sentences are made of.
// hold is a pod's belief of holding a key: history's derivation (the
// checker's too), from the acquire's return to its release call or lost
// signal.
type hold = history.Hold

// expiry is when the lease lapses without renewal: TTL after the acquire
// returned (the server set it somewhere between call and return).
func expiry(h hold, ttl time.Duration) int64 { return h.Start + int64(ttl) }

// holds returns the history's holds, derived once per view.
func (v *View) holds() []hold {
	if v.derived == nil {
		v.derived = history.HoldsOf(v.Events)
	}
	return v.derived
}

// heldAt returns the hold client had at t, if any.
func (v *View) heldAt(client int, t int64) (hold, bool) {
	var cur hold
	held := false
	for _, h := range v.holds() { // ordered by start: the last one wins
		if h.Start > t {
			break
		}
		if h.Client == client && h.End > t {
			cur, held = h, true
		}
	}
	return cur, held
}

// holdsAt returns every hold live at t, by client.
func (v *View) holdsAt(t int64) []hold {
	var out []hold
	for _, h := range v.holds() {
		if h.Start > t {
			break
		}
		if h.End > t {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Client < out[j].Client })
	return out
}

// renewedUntil is when h's lease lapses given its last successful renewal
// before t (0 if none).
func (v *View) renewedUntil(h hold, t int64) int64 {
	var until int64
	for _, e := range v.Events {
		if e.Call > t {
			break
		}
		if e.Kind == history.Renew && e.Outcome == history.Ok && e.Client == h.Client && e.Key == h.Key &&
			e.Call >= h.AcquireCall && e.Return <= t {
			until = max(until, e.Return+int64(v.TTL))
		}
	}
	return until
}

// releasedBy reports whether h ended (release call or lost signal) by t.
func releasedBy(h hold, t int64) bool { return h.End <= t }

// tried returns another pod's acquire attempt on key in flight at some
// point of (from, to).
func (v *View) tried(key string, except int, from, to int64) (history.Event, bool) {
	for _, e := range v.Events {
		if e.Call >= to {
			break
		}
		if e.Kind == history.Acquire && e.Key == key && e.Client != except && e.Return > from {
			return e, true
		}
	}
	return history.Event{}, false
}

// podOf returns the pod a window acted on, if any.
func podOf(w history.Event) (int, bool) {
	if p := w.Hit().Pods; len(p) > 0 {
		return p[0], true
	}
	return 0, false
}

func secs(ns int64) string { return history.Seconds(ns) }

func msec(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func span(from, to int64) string { return msec(time.Duration(to - from)) }

func ttlText(v *View) string { return "TTL " + msec(v.TTL) }

func clientText(c int) string { return "client " + strconv.Itoa(c) }

func triedText(e history.Event) string {
	return fmt.Sprintf("%s tried at %s", clientText(e.Client), secs(max(e.Call, 0)))
}
