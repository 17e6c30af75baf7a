package checker

import (
	"fmt"
	"sort"

	"github.com/lockchaos/lockchaos/workload/history"
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
func checkFenceOrder(evs []history.Event, mode string, opts Options) Result {
	r := Result{Property: FenceOrder, Decisive: true, Status: Pass}
	if mode == "" || mode == "off" {
		r.Decisive = false
		r.Note = "not applicable: the resource checks no fences"
		return r
	}
	byKey := map[string][]history.Event{}
	for _, e := range evs {
		checked := e.Kind == history.Write || (e.Kind == history.Read && mode == "reads-and-writes")
		if checked && e.Outcome == history.Ok && e.Fence > 0 {
			byKey[e.Key] = append(byKey[e.Key], e)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		byCall := byKey[k] // already in call order
		byRet := append([]history.Event(nil), byCall...)
		sort.Slice(byRet, func(i, j int) bool { return byRet[i].Return < byRet[j].Return })
		var best history.Event
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
			r.ViolationCount++
			if len(r.Violations) < opts.MaxViolations {
				r.Violations = append(r.Violations, Violation{Property: FenceOrder, Key: k, Clients: []int{e.Client, best.Client},
					Events: []int64{best.ID, e.ID}, At: e.Call, Start: best.Call, End: e.Return,
					Summary: fmt.Sprintf("the resource accepted client %d's %s of %s with fence %d at %s, after accepting fence %d from client %d at %s",
						e.Client, e.Kind, k, e.Fence, history.Seconds(e.Call), best.Fence, best.Client, history.Seconds(best.Call))})
			}
		}
	}
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	return r
}
