package checker

import (
	"fmt"
	"sort"

	"github.com/lockchaos/lockchaos/workload/history"
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
func checkForeignRelease(evs []history.Event, holds []Hold, inProcess bool, opts Options) Result {
	r := Result{Property: ForeignRelease, Decisive: true, Status: Pass}
	if inProcess {
		r.Note = "not applicable: an in-process mutex has no shared lock to remove"
		return r
	}
	acquires := map[string][]history.Event{}
	for _, e := range evs {
		if e.Kind == history.Acquire && e.Outcome == history.Ok {
			acquires[e.Key] = append(acquires[e.Key], e)
		}
	}
	for _, as := range acquires {
		sort.Slice(as, func(i, j int) bool { return as[i].Call < as[j].Call })
	}
	for _, h := range holds {
		if h.EndKind != history.Release {
			continue
		}
		if h.EndOutcome != history.Ok {
			continue
		}
		rel := struct{ ID, Call, Return int64 }{h.EndID, h.End, h.endReturn}
		r.Operations++
		as := acquires[h.Key]
		i := sort.Search(len(as), func(i int) bool { return as[i].Call > h.Start })
		for ; i < len(as) && as[i].Call < rel.Call; i++ {
			b := as[i]
			if b.Client == h.Client || b.Return >= rel.Call {
				continue
			}
			r.ViolationCount++
			if len(r.Violations) < opts.MaxViolations {
				r.Violations = append(r.Violations, Violation{
					Property: ForeignRelease, Key: h.Key, Clients: []int{h.Client, b.Client},
					Events: []int64{h.AcquireID, b.ID, rel.ID}, At: rel.Call, Start: h.Start, End: rel.Return,
					Summary: fmt.Sprintf("client %d's release of %s at %s removed a lock it no longer held: client %d had acquired %s at %s",
						h.Client, h.Key, history.Seconds(rel.Call), b.Client, h.Key, history.Seconds(b.Return)),
				})
			}
			break // one violation per release
		}
	}
	orphanReleases(evs, holds, opts, &r)
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	return r
}

// orphanReleases finds releases that returned ok from a client that held
// nothing (its acquire was refused or timed out, or it had been told its
// lease was lost) while another client held the key: the release removed
// that client's lock, or at best a lock that was not the releaser's to
// remove. Holds are by start; a sweep per key keeps it O(n log n).
func orphanReleases(evs []history.Event, holds []Hold, opts Options, r *Result) {
	type ck struct {
		client int
		key    string
	}
	open := map[ck]bool{}
	byKey := map[string][]Hold{}
	for _, h := range holds {
		byKey[h.Key] = append(byKey[h.Key], h)
	}
	for _, e := range evs {
		k := ck{e.Client, e.Key}
		switch e.Kind {
		case history.Acquire:
			if e.Outcome == history.Ok {
				open[k] = true
			}
		case history.Lost:
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
			if o, ok := heldBy(byKey[e.Key], e.Client, e.Call); ok {
				r.ViolationCount++
				if len(r.Violations) < opts.MaxViolations {
					r.Violations = append(r.Violations, Violation{Property: ForeignRelease, Key: e.Key, Clients: []int{e.Client, o.Client},
						Events: []int64{e.ID, o.AcquireID}, At: e.Call, Start: e.Call, End: e.Return,
						Summary: fmt.Sprintf("client %d held nothing on %s but its release at %s succeeded, while client %d held it from %s",
							e.Client, e.Key, history.Seconds(e.Call), o.Client, history.Seconds(o.Start))})
				}
			}
		}
	}
}

// heldBy returns a hold of another client live at t (hs sorted by start).
func heldBy(hs []Hold, except int, t int64) (Hold, bool) {
	i := sort.Search(len(hs), func(i int) bool { return hs[i].Start > t })
	for j := i - 1; j >= 0; j-- {
		if h := hs[j]; h.Client != except && t < h.End {
			return h, true
		}
		if i-j == 64 && !anyLongHold(hs[:j+1], t) {
			break // nothing that started earlier is still live at t
		}
	}
	return Hold{}, false
}

// anyLongHold reports whether a hold among hs ends after t (a hold that
// started long ago and never ended, say). Asked once per orphan release,
// and only past 64 holds back.
func anyLongHold(hs []Hold, t int64) bool {
	for _, h := range hs {
		if h.End > t {
			return true
		}
	}
	return false
}
