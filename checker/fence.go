package checker

import (
	"fmt"
	"sort"

	"github.com/lockchaos/lockchaos/history"
)

// FenceOrder: a resource that checks fences must never accept a fence
// lower than one it accepted before. Only checked when the history says
// the resource checks fences; it is decisive then, since the resource is
// what keeps the data safe.
const FenceOrder Property = "fence-order"

// checkFenceOrder finds accepted requests whose fence is below that of a
// request on the same key the resource had already accepted (one that
// returned before this one was called: certainly earlier). Reads count
// when the resource checks them (mode reads-and-writes).
//
// With c non-nil (a history checked in chunks), each key starts from the
// highest fence accepted before the chunk, and leaves its own behind.
func checkFenceOrder(evs []history.Event, mode string, opts Options, c *carry) Result {
	r := Result{Property: FenceOrder, Decisive: true, Status: Pass}
	if !fencesChecked(mode) {
		r.Decisive = false
		r.Note = "not applicable: the resource checks no fences"
		return r
	}
	if mode == history.FencingTransaction {
		r.Decisive = false
		r.Note = "not applicable: the transaction fences the writes (a commit the server refused did not happen), not a number"
		return r
	}
	byKey := map[string][]history.Event{}
	for i := range evs {
		e := &evs[i]
		checked := e.Kind == history.Write || (e.Kind == history.Read && mode == history.FencingReadsAndWrites)
		if checked && e.Outcome == history.Ok && e.Fence > 0 {
			byKey[e.Key] = append(byKey[e.Key], *e)
		}
	}
	for _, k := range sortedKeys(byKey) {
		byCall := byKey[k] // already in call order
		byRet := append([]history.Event(nil), byCall...)
		sort.Slice(byRet, func(i, j int) bool { return byRet[i].Return < byRet[j].Return })
		var best history.Event
		if c != nil {
			best = c.fences[k]
		}
		j := 0
		for _, e := range byCall {
			r.Operations++
			for j < len(byRet) && byRet[j].Return < e.Call {
				if byRet[j].Fence > best.Fence {
					best = byRet[j]
				}
				j++
			}
			if e.Fence >= best.Fence {
				continue
			}
			r.found(mark{at: e.Call, start: best.Call, end: e.Return, n: 1, key: k, property: FenceOrder}, opts.MaxViolations,
				func() Violation {
					return Violation{Property: FenceOrder, Key: k, Clients: []int{e.Client, best.Client},
						Events: []int64{best.ID, e.ID}, At: e.Call, Start: best.Call, End: e.Return,
						Summary: fmt.Sprintf("the resource accepted client %d's %s of %s with fence %d at %s, after "+
							"accepting fence %d from client %d at %s",
							e.Client, e.Kind, k, e.Fence, history.Seconds(e.Call), best.Fence, best.Client, history.Seconds(best.Call))}
				})
		}
		if c != nil {
			for _, e := range byRet {
				if e.Fence > c.fences[k].Fence {
					c.fences[k] = e
				}
			}
		}
	}
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	return r
}
