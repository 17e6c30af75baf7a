package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// fault-tolerant (liveness B): while a majority of the lock's nodes is up
// (some were taken from every pod: windows whose Hit has Down nodes) and nobody
// holds a key, the pods that try for it get it within the bound. A key is
// free when no hold on it is live and no lease a hold may have left
// behind can still be on a node (a hold that ended without a release that
// returned ok keeps it "maybe held" for a TTL past its end or last
// renewal; an abandoned one for good, which deadlock-free judges). The
// attempts that count are those of pods no fault window targets at their
// call (a pod cut off itself is not the lock's to serve).

// ftState is one key's view of the node-down windows.
type ftState struct {
	downs    int                // down windows open
	down     map[string]int     // nodes down, with the windows that took them
	span     int64              // the op id of the first window of the span of overlapping ones open, or -1
	majority bool               // a majority of the lock's nodes is up (inside a span)
	targeted map[int]int        // pods targeted by windows open ("clientN")
	stops    []*history.Event   // stopping windows open
	free     *freeStretch       // the key is free inside a span with a majority up
	judged   map[int64]bool     // spans in which an eligible pod tried for the key with a majority up
	windows  map[int64]struct{} // the down windows open, by op id
	waited   int64              // free while an eligible pod tried and nobody acquired, majority up (ftNobody)
	// blocked is, by span, the majority-up time the key was neither held
	// nor free (a lease left behind may still be on a node): no lock could
	// serve it then, so judgeShare leaves it out of the time it judges.
	blocked      map[int64]int64
	blockedSince int64 // when the blocked time open began (in blockedSpan)
	blockedSpan  int64 // its span; -1: none open
}

// freeStretch is a time the key was free while a majority was up.
type freeStretch struct {
	from, tryFrom int64 // when it became free; the first eligible attempt in it (-1: none yet)
	triers        map[int]bool
	attempts      int
	down          []string // nodes down when it began
	windows       []int64  // down windows open when it began
	served        int64    // the call of the acquire that ended it (ftAcquired)
}

// ftWindow follows window w opening (delta 1) or closing (-1) at t.
func (k *keyLive) ftWindow(w *history.Event, delta int, t int64) {
	s := &k.ft
	if _, ok := w.StoppedHolder(); ok {
		if delta > 0 {
			s.stops = append(s.stops, w)
		} else {
			s.stops = slices.DeleteFunc(s.stops, func(o *history.Event) bool { return o.ID == w.ID })
		}
	}
	for _, c := range targetedPods(w) {
		s.targeted[c] += delta
	}
	nodes := w.DownNodes()
	if len(nodes) == 0 {
		return
	}
	if s.downs == 0 && delta > 0 {
		s.span = w.ID
	}
	s.downs += delta
	if delta > 0 {
		s.windows[w.ID] = struct{}{}
	} else {
		delete(s.windows, w.ID)
	}
	for _, n := range nodes {
		if s.down[n] += delta; s.down[n] <= 0 {
			delete(s.down, n)
		}
	}
	was := s.majority
	s.majority = s.downs > 0 && k.l.nodes > 0 && majorityUp(k.l.nodes, len(s.down))
	if s.downs == 0 {
		s.span = -1
	}
	if s.majority && !was {
		for _, a := range k.inflight {
			if a.eligible && a.ret > t {
				k.ftJudged()
			}
		}
	}
}

// majorityUp reports whether n nodes with down of them down keep a majority.
func majorityUp(n, down int) bool { return n-down > n/2 }

// targetedPods are the pods a window acted on.
func targetedPods(w *history.Event) []int { return w.Hit().Pods }

// ftJudged marks the span open as judged: an eligible pod tried with a
// majority of the nodes up.
func (k *keyLive) ftJudged() {
	if s := &k.ft; !s.judged[s.span] {
		s.judged[s.span] = true
		if !k.l.spansJudged[s.span] {
			k.l.spansJudged[s.span] = true
			k.l.ft.judged++
		}
	}
}

// ftTried takes an attempt's call.
func (k *keyLive) ftTried(t int64, a attempt) {
	s := &k.ft
	if !a.eligible || !s.majority {
		return
	}
	k.ftJudged()
	k.l.ft.ops++
	if f := s.free; f != nil {
		if f.tryFrom < 0 {
			f.tryFrom = t
		}
		f.triers[a.client] = true
		f.attempts++
	}
}

// ftAcquired takes a hold's start: the free stretch, if any, ends with it.
func (k *keyLive) ftAcquired(p *point) {
	if k.ft.free != nil {
		k.ft.free.served = p.h.call
		k.closeFree(p.t, p.h.client, p.id)
	}
}

// ftEval opens or closes the free stretch at t, and makes sure a point
// comes when a lease left behind runs out inside a span.
func (k *keyLive) ftEval(t int64) {
	s := &k.ft
	held := k.live > 0
	free := s.majority && !held && t >= k.maybe
	k.ftBlocked(t, s.majority && !held && t < k.maybe)
	switch {
	case !free && s.free != nil:
		k.closeFree(t, -1, -1)
	case free && s.free == nil:
		k.openFree(t)
	}
	if s.majority && !held && t < k.maybe && k.maybe != Forever && k.expiryAt != k.maybe {
		k.expiryAt = k.maybe
		k.pts.push(point{t: k.maybe, prio: pExpiry})
	}
}

// ftBlocked follows the time the key was blocked in a span (ftState.blocked).
func (k *keyLive) ftBlocked(t int64, blocked bool) {
	s := &k.ft
	if s.blocked == nil {
		s.blocked, s.blockedSpan = map[int64]int64{}, -1
	}
	switch {
	case s.blockedSpan >= 0 && (!blocked || s.span != s.blockedSpan):
		s.blocked[s.blockedSpan] += t - s.blockedSince
		s.blockedSpan = -1
		if blocked && s.span >= 0 {
			s.blockedSince, s.blockedSpan = t, s.span
		}
	case s.blockedSpan < 0 && blocked && s.span >= 0:
		s.blockedSince, s.blockedSpan = t, s.span
	}
}

func (k *keyLive) openFree(t int64) {
	s := &k.ft
	f := &freeStretch{from: t, tryFrom: -1, triers: map[int]bool{}}
	for n := range s.down {
		f.down = append(f.down, n)
	}
	slices.Sort(f.down)
	for id := range s.windows {
		f.windows = append(f.windows, id)
	}
	slices.Sort(f.windows)
	for _, a := range k.inflight {
		if a.eligible && a.ret > t {
			f.tryFrom = t
			f.triers[a.client] = true
			f.attempts++
		}
	}
	s.free = f
}

// closeFree ends the free stretch at t, acquired by client by (-1: the
// span or its majority ended, or a lease may be back): the time from the
// first eligible attempt in it to its end was spent waiting.
func (k *keyLive) closeFree(t int64, by int, acquire int64) {
	f := k.ft.free
	k.ft.free = nil
	if f.tryFrom < 0 {
		return
	}
	l := k.l
	waiting := time.Duration(t - f.tryFrom)
	l.waiting += waiting
	bound := l.acquireWithin
	stuck := waiting > bound
	// Every wait counts toward the share; a stretch is kept for the
	// timeline from a tenth of the bound (a Redlock waiting out its down
	// node each cycle shows), not every release-to-acquire gap of a busy
	// key, which would be thousands per window.
	k.ftNobody(f, t, by)
	if stuck || waiting >= bound/10 {
		l.stretch(Stretch{Key: k.key, Start: f.tryFrom, End: t, Stuck: stuck})
	}
	if !stuck {
		return
	}
	var triers []int
	for c := range f.triers {
		triers = append(triers, c)
	}
	slices.Sort(triers)
	end := fmt.Sprintf("nobody acquired it (bound %s)", durText(bound))
	events := slices.Clone(f.windows)
	if by >= 0 {
		end = fmt.Sprintf("%s acquired it only at %s (bound %s)", clientText(by), history.Seconds(t), durText(bound))
		events = append(events, acquire)
	}
	l.ft.add(Violation{Property: FaultTolerant, Key: k.key, Clients: triers, Events: events,
		At: f.tryFrom + int64(bound), Start: f.tryFrom, End: t,
		Summary: fmt.Sprintf("while %s (%s), %s was free from %s for %s while %s tried (%d attempts); %s",
			downText(f.down), upText(l.nodes, len(f.down)), k.key, history.Seconds(f.tryFrom), durText(waiting),
			clientsText(triers), f.attempts, end)}, l.maxViolations)
}

// ftNobody adds to the key's waiting that judgeShare reads the part of a
// stretch in which nobody acquired, from a tenth of the bound: up to the
// call of the acquire that ended it, or, when the span (or its majority)
// ended it, of the first attempt still in flight that went on to acquire.
// A lock that waits out its down node on every acquire (Redlock) is
// serving from the call of that acquire: it is not charged for the wait
// inside it, however long, nor for the acquire the window's end cut
// through. One that fails attempt after attempt (a lock needing every
// node) is charged until the attempt that finally succeeds.
func (k *keyLive) ftNobody(f *freeStretch, t int64, by int) {
	if by >= 0 {
		t = min(t, f.served)
	} else if !k.ft.majority {
		for _, a := range k.inflight {
			if a.eligible && a.ok && a.ret > t {
				t = min(t, a.call)
			}
		}
	}
	if w := time.Duration(t - f.tryFrom); w >= k.l.acquireWithin/10 {
		k.ft.waited += int64(w)
	}
}

// downText: "node2 was down", "node1 and node2 were down".
func downText(nodes []string) string {
	if len(nodes) == 1 {
		return nodes[0] + " was down"
	}
	return listText(nodes) + " were down"
}

// upText: "2 of 3 lock nodes up".
func upText(n, down int) string {
	noun := "lock nodes"
	if n == 1 {
		noun = "lock node"
	}
	return fmt.Sprintf("%d of %d %s up", max(0, n-down), n, noun)
}

// downSpan is a run of overlapping node-down windows, as the whole
// history shows it: how long a majority of the lock's nodes was up in
// it, and when it never was, which nodes were down.
type downSpan struct {
	id         int64
	start, end int64
	up         int64
	noMajority []string // the first set of nodes down that left no majority
}
