package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/lockchaos/lockchaos/history"
)

// checkForeignRelease finds releases that removed a lock another client
// held. The evidence is exact: client B's acquire began after client A's
// acquire returned and succeeded before A's release was called, so A's key
// was gone when B set its own; A's release still reported success, so it
// deleted a key that was not A's.
//
// Locks without shared state (in-process, as the history's header says)
// cannot release anything foreign; for them the property is not applicable
// and passes with a note.
func checkForeignRelease(evs []history.Event, holds []Hold, inProcess bool, srv serverFacts, opts Options) Result {
	r := Result{Property: ForeignRelease, Decisive: true, Status: Pass}
	if inProcess {
		r.Note = "not applicable: an in-process mutex has no shared lock to remove"
		return r
	}
	acquires := acquiresSucceeded(evs)
	for j := range holds {
		h := &holds[j]
		if h.EndKind != history.Release {
			continue
		}
		if h.EndOutcome != history.Ok {
			continue
		}
		rel := struct{ ID, Call, Return int64 }{h.EndID, h.End, h.EndReturn}
		r.Operations++
		as := acquires[h.Key]
		i := sort.Search(len(as), func(i int) bool { return as[i].call > h.Start })
		for ; i < len(as) && as[i].call < rel.Call; i++ {
			b := as[i]
			if b.client == h.Client || b.ret >= rel.Call {
				continue
			}
			r.found(mark{at: rel.Call, start: h.Start, end: rel.Return, n: 1, key: h.Key, property: ForeignRelease}, opts.MaxViolations,
				func() Violation {
					return Violation{
						Property: ForeignRelease, Key: h.Key, Clients: []int{h.Client, b.client},
						Events: []int64{h.AcquireID, b.id, rel.ID}, At: rel.Call, Start: h.Start, End: rel.Return,
						Summary: fmt.Sprintf("client %d's release of %s at %s removed a lock it no longer held: client "+
							"%d had acquired %s at %s",
							h.Client, h.Key, history.Seconds(rel.Call), b.client, h.Key, history.Seconds(b.ret)),
					}
				})
			break // one violation per release
		}
	}
	orphanReleases(evs, holds, srv, opts, &r)
	if n := len(r.Settled); n > 0 && r.Note == "" {
		r.Note = fmt.Sprintf("%d release(s) that looked foreign settled by the server's view: %s", n, r.Settled[0])
	}
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	return r
}

// acquire is what foreign-release reads of an acquire, not the whole event.
type acquire struct {
	id, call, ret int64
	client        int
}

// acquiresSucceeded lists each key's acquires that succeeded, by call.
func acquiresSucceeded(evs []history.Event) map[string][]acquire {
	acquires := map[string][]acquire{}
	for k, n := range perKey(evs, func(e *history.Event) (string, bool) { return e.Key, isAcquired(e) }) {
		acquires[k] = make([]acquire, 0, n) // sized: grown by appending, five times their size in garbage
	}
	for i := range evs {
		e := &evs[i]
		if isAcquired(e) {
			acquires[e.Key] = append(acquires[e.Key], acquire{id: e.ID, call: e.Call, ret: e.Return, client: e.Client})
		}
	}
	byCall := func(a, b acquire) int { return cmp.Compare(a.call, b.call) }
	for _, as := range acquires {
		if !slices.IsSortedFunc(as, byCall) { // evs are by call already, as a rule
			slices.SortStableFunc(as, byCall)
		}
	}
	return acquires
}

// orphanReleases finds releases that returned ok from a client that held
// nothing (its acquire was refused or timed out, or it had been told its
// lease was lost) while another client held the key: the release removed
// that client's lock, or at best a lock that was not the releaser's to
// remove. Holds are by start; a sweep per key keeps it O(n log n).
func orphanReleases(evs []history.Event, holds []Hold, srv serverFacts, opts Options, r *Result) {
	type ck struct {
		client int
		key    string
	}
	open := map[ck]bool{}
	_, byKey := holdsByKey(holds)
	for i := range evs {
		e := &evs[i]
		k := ck{e.Client, e.Key}
		switch e.Kind {
		case history.Acquire:
			if e.Outcome == history.Ok {
				open[k] = true
			}
		case history.Lost, history.Abandon:
			// A lost lease or a stopped holder holds nothing after.
			delete(open, k)
		case history.Release:
			if open[k] {
				delete(open, k)
				continue
			}
			if e.Outcome != history.Ok {
				continue
			}
			r.Operations++
			if o, ok := heldBy(holds, byKey[e.Key], e.Client, e.Call); ok {
				seen, settled := srv.settle(*e, o)
				if settled != "" {
					r.Settled = append(r.Settled, settled)
					continue
				}
				r.found(mark{at: e.Call, start: e.Call, end: e.Return, n: 1, key: e.Key, property: ForeignRelease}, opts.MaxViolations,
					func() Violation {
						return Violation{Property: ForeignRelease, Key: e.Key, Clients: []int{e.Client, o.Client},
							Events: []int64{e.ID, o.AcquireID}, At: e.Call, Start: e.Call, End: e.Return,
							Summary: fmt.Sprintf("client %d held nothing on %s but its release at %s succeeded, while "+
								"client %d held it from %s%s",
								e.Client, e.Key, history.Seconds(e.Call), o.Client, history.Seconds(o.Start), seen)}
					})
			}
		}
	}
}

// heldBy returns a hold of another client live at t; idx are one key's
// holds, as positions in holds, sorted by start.
func heldBy(holds []Hold, idx []int32, except int, t int64) (Hold, bool) {
	i := sort.Search(len(idx), func(i int) bool { return holds[idx[i]].Start > t })
	for j := i - 1; j >= 0; j-- {
		if h := holds[idx[j]]; h.Client != except && t < h.End {
			return h, true
		}
		if i-j == 64 && !anyLongHold(holds, idx[:j+1], t) {
			break // nothing that started earlier is still live at t
		}
	}
	return Hold{}, false
}

// anyLongHold reports whether a hold among idx ends after t (a hold that
// started long ago and never ended, say). Asked once per orphan release,
// and only past 64 holds back.
func anyLongHold(holds []Hold, idx []int32, t int64) bool {
	for _, i := range idx {
		if holds[i].End > t {
			return true
		}
	}
	return false
}
