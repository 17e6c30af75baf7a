package checker

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// FreeShareLimit is fault-tolerant's limit on the share of node-down time
// in which pods tried for a key and nobody acquired it: over every span of
// node-down windows of the history with a majority of the lock's nodes
// up, key by key, less the time a lease left behind may still have held
// the key (no lock could serve it then). A lock that fails a little in
// every window (one needing every node, whose windows are each shorter
// than the acquire bound) passes every window's own judgment; "clients
// acquire while a majority is up" means it must not fail in most of that
// time either. Only stretches of a tenth of the bound or more count, each
// up to the call of the acquire that ended it (ftNobody): Redlock waits
// out its down node on every acquire, and its concurrent attempts split
// the nodes now and then, yet it serves. Measured on real Redis (a loaded
// 2-core machine, 20 runs each): a lock needing all 3 nodes 80-87% under
// node-restart-delayed; Redlock 0% there and 0-22% under
// minority-partition. Half sits between them with room on both sides.
const FreeShareLimit = 0.5

// shareUp is the majority-up time of the spans each key was tried in,
// less the time the key was blocked by a lease left behind, summed key by
// key (two keys tried in the same span count it twice, as their waiting
// does; raw: not less the blocked time), the waiting in stretches kept, and the key that
// waited longest.
func (l *live) shareUp(spans []downSpan) (raw, total, waited int64, worst *keyLive) {
	up := map[int64]int64{}
	for _, s := range spans {
		up[s.id] = s.up
	}
	for _, key := range sortedKeys(l.keys) {
		k := l.keys[key]
		for id := range k.ft.judged {
			raw += up[id]
			total += max(0, up[id]-k.ft.blocked[id])
		}
		waited += k.ft.waited
		if worst == nil || k.ft.waited > worst.ft.waited {
			worst = k
		}
	}
	return raw, total, waited, worst
}

// freeShare is Liveness.FreeWhileTrying: -1 when no key was tried with a
// majority up.
func (l *live) freeShare(spans []downSpan) float64 {
	raw, _, _, _ := l.shareUp(spans)
	if raw <= 0 {
		return -1
	}
	return float64(l.waiting) / float64(raw)
}

// judgeShare is fault-tolerant over the whole history: it fails when the
// keys were free while pods tried and nobody acquired (ftNobody) for more
// than FreeShareLimit of the majority-up time AND for longer in all than
// the acquire bound, so a short history with one slow moment is not
// failed on its share alone. A history some stretch already failed gets
// no second violation. It reads only the sums the sweep kept, so a
// history checked in chunks is judged as a whole one is.
func (l *live) judgeShare(spans []downSpan, end int64) {
	_, total, waited, worst := l.shareUp(spans)
	if total <= 0 || worst == nil || l.ft.totalCount > 0 {
		return // nothing judged, or a window already failed it (its sentence says more)
	}
	share := float64(waited) / float64(total)
	if share <= FreeShareLimit || time.Duration(waited) <= l.acquireWithin {
		return
	}
	var events []int64
	start, last := end, int64(0)
	for _, s := range spans {
		if l.spansJudged[s.id] {
			events = append(events, s.id)
			start, last = min(start, s.start), max(last, s.end)
		}
	}
	l.ft.add(Violation{Property: FaultTolerant, Key: worst.key, Events: events, At: last, Start: start, End: last,
		Summary: fmt.Sprintf("over %d node-down span(s) from %s to %s, with a majority of the lock's nodes up and no lease left "+
			"behind for %s (key by key), pods tried for a free key and nobody acquired it for %s of it, "+
			"in stretches of %s or more: %.0f%%, over the %.0f%% "+
			"limit, and more than the acquire bound (%s) in all; the lock did not serve while a minority of its nodes "+
			"was down (longest for %s: %s)",
			len(events), history.Seconds(start), history.Seconds(last), durText(time.Duration(total)),
			durText(time.Duration(waited)), durText(l.acquireWithin/10), 100*share, 100*FreeShareLimit, durText(l.acquireWithin),
			worst.key, durText(time.Duration(worst.ft.waited)))}, l.maxViolations)
}
