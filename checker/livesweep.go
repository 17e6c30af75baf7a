package checker

import (
	"cmp"

	"github.com/lockchaos/lockchaos/history"
)

// The liveness properties are judged by one sweep in time per key. Events
// arrive in call order (a whole history, or chunk after chunk of one read
// in chunks, each key's events still in order), but what they do happens
// at other times: a hold starts when its acquire returns, an attempt is in
// flight until it returns, a lease may outlive a hold by a TTL. Each event
// is turned into points at those times, kept in a small heap per key, and
// a point is handled once no event still to come can precede it (every
// later event is called later). The fault windows that matter are points
// too, pulled from the list every key shares. Both ways of checking feed
// the same sweep, so they agree by construction; the only state carried
// over a cut is this one.
//
// Points at one instant are handled in a fixed order (pointPrio): a hold
// that starts at a window's start counts as held at it, one that ends there
// too, as history.HoldsOf's Start <= t <= End.

// pointPrio orders points at one instant.
type pointPrio uint8

const (
	pStart  pointPrio = iota // a hold starts (its acquire returned ok)
	pReturn                  // an attempt returned
	pOpen                    // a fault window opened
	pCall                    // an attempt was called
	pEnd                     // a hold ended (release, lost, abandon, re-acquire)
	pRenew                   // a renewal returned ok
	pExpiry                  // a lease a hold may have left runs out
	pClose                   // a fault window closed
)

// point is one thing that happened on a key at time t.
type point struct {
	t    int64
	id   int64 // op id: a total order with t and prio
	prio pointPrio
	h    *holdRec // pStart, pEnd, pRenew
	a    attempt  // pCall, pReturn
	w    int32    // pOpen, pClose: index into live.windows
	err  string   // pEnd of an abandon: history.Crashed or Abandoned
	by   int      // pEnd of an abandon: its client (h may be nil)
}

func (p *point) before(q *point) bool {
	if p.t != q.t {
		return p.t < q.t
	}
	if p.prio != q.prio {
		return p.prio < q.prio
	}
	return p.id < q.id
}

// pointHeap is a min-heap of points (container/heap's interface costs an
// allocation and an indirect call per point; a million events make three
// million points).
type pointHeap []point

func (hp *pointHeap) push(p point) {
	*hp = append(*hp, p)
	h := *hp
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(&h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (hp *pointHeap) pop() point {
	h := *hp
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < n && h[l].before(&h[small]) {
			small = l
		}
		if r := l + 1; r < n && h[r].before(&h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	*hp = h
	return top
}

// holdRec is one believed-held interval as the sweep follows it (the
// same intervals history.HoldsOf derives).
type holdRec struct {
	client    int
	id        int64 // the acquire's op id
	call      int64 // the acquire's call
	start     int64 // the acquire's return
	end       int64 // the ending op's call; Forever while open
	ok        bool  // ended by a release that returned ok: the key is gone
	abandon   bool  // ended by an abandon: the lease may be kept forever
	lastRenew int64 // the latest ok renewal's return
	started   bool  // its start point was handled
	endDone   bool  // its end point was handled
}

// heldAt reports whether h is believed held at t.
func (h *holdRec) heldAt(t int64) bool { return h != nil && h.start <= t && h.end >= t }

// expiry is when a lease the hold may have left behind runs out: a TTL
// after it ended or was last renewed; never, when its holder abandoned it
// (a hung worker's watchdog renews it as long as its process lives).
func (h *holdRec) expiry(ttl int64) int64 {
	if h.abandon {
		return Forever
	}
	return max(h.end, h.lastRenew) + ttl
}

// attempt is one acquire as the sweep follows it.
type attempt struct {
	id        int64
	client    int
	call, ret int64
	// eligible: its pod was targeted by no fault window open at its call.
	eligible bool
	// indefinite: it may have taken the key without its pod hearing so.
	indefinite bool
	ok         bool // it acquired (at ret)
}

// clientHolds are one client's latest two holds on a key: the current
// and the one before (an end and a new start at one instant).
type clientHolds struct{ cur, prev *holdRec }

// keyLive is the sweep of one key.
type keyLive struct {
	key      string
	l        *live
	win      int // the next of l.windows to become points here
	pts      pointHeap
	clients  map[int]*clientHolds
	live     int   // holds started and not ended
	maybe    int64 // the key may still be held (a lease left behind) until then
	expiryAt int64 // the latest expiry point pushed
	inflight map[int64]attempt
	moments  []*moment // deadlock-free: stopped holders not yet resolved
	// abandoning are the open windows that stop their pod through an
	// abandon (history.Hit.Abandons), by pod.
	abandoning map[int]*history.Event
	ft         ftState
}

func newKeyLive(l *live, key string) *keyLive {
	return &keyLive{key: key, l: l, clients: map[int]*clientHolds{}, inflight: map[int64]attempt{},
		abandoning: map[int]*history.Event{},
		ft: ftState{down: map[string]int{}, targeted: map[int]int{}, span: -1, judged: map[int64]bool{},
			windows: map[int64]struct{}{}}}
}

// advance handles every point before t: no event still to come can
// precede them.
func (k *keyLive) advance(t int64) {
	for k.win < len(k.l.windows) && k.l.windows[k.win].Call < t {
		w := &k.l.windows[k.win]
		k.pts.push(point{t: w.Call, prio: pOpen, id: w.ID, w: int32(k.win)})
		k.pts.push(point{t: w.Return, prio: pClose, id: w.ID, w: int32(k.win)})
		k.win++
	}
	for len(k.pts) > 0 && k.pts[0].t < t {
		p := k.pts.pop()
		k.handle(&p)
	}
}

// quiet reports whether an event whose points all lie at or before until
// can be applied at once: nothing pending here, and no window known to
// open by then, so no point of it is seen by a window or a moment.
func (k *keyLive) quiet(until int64) bool {
	return len(k.pts) == 0 && len(k.moments) == 0 && k.ft.downs == 0 &&
		(k.win == len(k.l.windows) || k.l.windows[k.win].Call > until)
}

// event takes the key's next event in call order.
func (k *keyLive) event(e *history.Event) {
	k.advance(e.Call)
	until := e.Return
	if e.Kind != history.Acquire && e.Kind != history.Renew {
		until = e.Call
	}
	now := k.quiet(until)
	switch e.Kind {
	case history.Acquire:
		k.acquire(e, now)
	case history.Release, history.Lost, history.Abandon:
		c := k.clients[e.Client]
		var h *holdRec
		if c != nil && c.cur != nil && c.cur.end == Forever {
			h = c.cur
			h.end = e.Call
			h.ok = e.Kind == history.Release && e.Outcome == history.Ok
			h.abandon = e.Kind == history.Abandon
		}
		p := point{t: e.Call, prio: pEnd, id: e.ID, h: h, by: e.Client}
		if e.Kind == history.Abandon {
			// An abandon is a cause even of a pod that held nothing here.
			p.err = cmp.Or(e.Err, history.Crashed)
		}
		if h != nil || p.err != "" {
			k.apply(p, now)
		}
	case history.Renew:
		if e.Outcome != history.Ok {
			return
		}
		if c := k.clients[e.Client]; c != nil {
			h := c.cur
			if h.call > e.Call && c.prev != nil {
				h = c.prev
			}
			k.apply(point{t: e.Return, prio: pRenew, id: e.ID, h: h}, now)
		}
	}
}

// acquire takes an attempt: its call and return, and for an ok one the
// hold it starts (closing, as HoldsOf does, one the client still had).
func (k *keyLive) acquire(e *history.Event, now bool) {
	if !now {
		a := attempt{id: e.ID, client: e.Client, call: e.Call, ret: e.Return, indefinite: e.Outcome == history.Indefinite,
			ok: e.Outcome == history.Ok}
		k.pts.push(point{t: e.Call, prio: pCall, id: e.ID, a: a})
		k.pts.push(point{t: e.Return, prio: pReturn, id: e.ID, a: a})
	}
	if e.Outcome != history.Ok {
		return
	}
	c := k.clients[e.Client]
	if c == nil {
		c = &clientHolds{}
		k.clients[e.Client] = c
	}
	if c.cur != nil && c.cur.end == Forever {
		c.cur.end = e.Call
		k.apply(point{t: e.Call, prio: pEnd, id: e.ID, h: c.cur, by: e.Client}, now)
	}
	h := &holdRec{client: e.Client, id: e.ID, call: e.Call, start: e.Return, end: Forever}
	c.prev, c.cur = c.cur, h
	k.apply(point{t: e.Return, prio: pStart, id: e.ID, h: h}, now)
}

// apply handles p now, when nothing can see it happen (quiet), or queues it.
func (k *keyLive) apply(p point, now bool) {
	if now {
		k.handle(&p)
		return
	}
	k.pts.push(p)
}

// finish handles every point left: the history has ended.
func (k *keyLive) finish() { k.advance(Forever) }

// handle is one point: the hold count and possible lease, then what each
// property makes of it.
func (k *keyLive) handle(p *point) {
	switch p.prio {
	case pStart:
		p.h.started = true
		if !p.h.endDone {
			k.live++
		}
		k.recovered(p)
		k.ftAcquired(p)
	case pReturn:
		delete(k.inflight, p.a.id)
	case pOpen:
		k.windowOpened(p)
	case pCall:
		p.a.eligible = k.ft.targeted[p.a.client] == 0
		k.inflight[p.a.id] = p.a
		k.tried(p.a)
		k.ftTried(p.t, p.a)
	case pEnd:
		if h := p.h; h != nil {
			h.endDone = true
			if h.started {
				k.live--
			}
			if !h.ok {
				k.maybe = max(k.maybe, h.expiry(k.l.ttl))
			}
		}
		if p.err != "" {
			k.abandoned(p)
		}
	case pRenew:
		if h := p.h; h != nil {
			h.lastRenew = max(h.lastRenew, p.t)
			if h.endDone && !h.ok {
				k.maybe = max(k.maybe, h.expiry(k.l.ttl))
			}
		}
	case pClose:
		k.windowClosed(p)
	}
	k.ftEval(p.t)
}

// windowOpened and windowClosed follow the windows each property reads.
func (k *keyLive) windowOpened(p *point) {
	w := &k.l.windows[p.w]
	if x, ok := w.StoppedHolder(); ok {
		if w.Hit().Abandons {
			k.abandoning[x] = w // its moment starts at the pod's abandon
		} else {
			k.stopped(w, x)
		}
	}
	k.ftWindow(w, 1, p.t)
}

func (k *keyLive) windowClosed(p *point) {
	w := &k.l.windows[p.w]
	if x, ok := w.StoppedHolder(); ok && k.abandoning[x] == w {
		delete(k.abandoning, x)
	}
	k.ftWindow(w, -1, p.t)
}
