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
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	return r
}
