package checker

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// deadlock-free (liveness A): after a holder stops being able to release
// (its pod crashed, its worker hung, it was cut off: from the moment its
// fault window opened), another pod that keeps trying acquires the key
// within the recovery bound. The moments are the windows that stop a
// holder (history.Hit.StopsHolder) whose pod held a key when they opened; a
// moment counts only if another pod tried for the key afterwards and the
// cell ran past the bound (or the key was acquired again).

// moment is one stopped holder on one key, followed until someone
// acquires the key again or the history ends.
type moment struct {
	w       *history.Event // the window that stopped it
	x       int            // its pod
	t0      int64          // the window's start
	hold    *holdRec       // the hold it had at t0
	cause   string         // history.Crashed, history.Abandoned, or "" (cut off)
	abandon int64          // the abandon's op id, or -1
	// triers are the other clients with an attempt in flight after t0
	// (before the key was acquired again), each at its first such call.
	triers map[int]int64
	// lastTry is the latest return of another client's attempt on the key.
	lastTry int64
	// phantom is the latest call of another client's attempt that may
	// have taken the key without its pod hearing so (it ended
	// indefinite), phantomBy its client: a pod that won the key and never
	// heard so never releases it either, so the bound runs again from
	// there.
	phantom   int64
	phantomBy int
}

// CutOff is a Recovery's Cause when the holder was cut off (a partition):
// no abandon event says it crashed or hung.
const CutOff = "cut off"

// stopped starts a moment when window w stops pod x and x held this key
// when it opened.
func (k *keyLive) stopped(w *history.Event, x int) {
	c := k.clients[x]
	if c == nil {
		return
	}
	h := c.cur
	if !h.heldAt(w.Call) {
		if h = c.prev; !h.heldAt(w.Call) {
			return
		}
	}
	k.begin(&moment{w: w, x: x, t0: w.Call, hold: h, abandon: -1})
}

// begin follows a new moment, with the attempts already in flight.
func (k *keyLive) begin(m *moment) {
	k.l.claimed[m.w.ID] = true
	m.triers, m.phantom, m.phantomBy = map[int]int64{}, m.t0, -1
	for _, a := range k.inflight {
		m.tried(a, k.l.recoverWithin)
	}
	k.moments = append(k.moments, m)
}

// tried notes an attempt on the key for every moment still open.
func (k *keyLive) tried(a attempt) {
	for _, m := range k.moments {
		m.tried(a, k.l.recoverWithin)
	}
}

func (m *moment) tried(a attempt, bound time.Duration) {
	if a.client == m.x || a.ret <= m.t0 {
		return
	}
	if first, ok := m.triers[a.client]; !ok || a.call < first {
		m.triers[a.client] = a.call
	}
	m.lastTry = max(m.lastTry, a.ret)
	if a.indefinite && a.call > m.phantom {
		m.phantom, m.phantomBy = a.call, a.client
	}
}

// abandoned takes an abandon: the cause of the moments its pod's window
// opened, and of its windows whether or not it held this key.
func (k *keyLive) abandoned(p *point) {
	if w := k.abandoning[p.by]; w != nil && p.h != nil && p.t >= w.Call {
		// A crash or a hang: the moment is the hold it abandoned, from the
		// abandon (a hung worker may abandon a lease taken after the
		// window opened).
		k.begin(&moment{w: w, x: p.by, t0: p.t, hold: p.h, cause: p.err, abandon: p.id})
	}
	for _, m := range k.moments {
		if m.x == p.by && m.cause == "" && p.t >= m.w.Call && p.t <= m.w.Return {
			m.cause, m.abandon = p.err, p.id
		}
	}
	for _, w := range k.ft.stops {
		// The earliest abandon in the window gives its cause, whichever
		// key's sweep sees it first.
		if x, _ := w.StoppedHolder(); x == p.by {
			if a, ok := k.l.abandonErr[w.ID]; !ok || p.t < a.t || p.t == a.t && p.id < a.id {
				k.l.abandonErr[w.ID] = abandonAt{p.t, p.id, p.err}
			}
		}
	}
}

// recovered takes a hold's start: the first one after a moment's t0, by
// another client or by the stopped pod once its stopped hold had ended (a
// restarted pod, or one whose partition healed), ends the moment.
func (k *keyLive) recovered(p *point) {
	kept := k.moments[:0]
	for _, m := range k.moments {
		if p.t > m.t0 && (p.h.client != m.x || p.h.call >= m.hold.end) {
			k.l.resolve(k.key, m, p.h.client, p.t, p.id)
			continue
		}
		kept = append(kept, m)
	}
	clear(k.moments[len(kept):])
	k.moments = kept
}

// resolve judges a moment: by is who acquired the key again at at (-1:
// nobody, at is the history's end).
func (l *live) resolve(key string, m *moment, by int, at, acquire int64) {
	bound := l.recoverWithin
	cause := m.cause
	if cause == "" {
		cause = CutOff
	}
	rc := Recovery{Client: m.x, Key: key, Cause: cause, At: m.t0, By: by, Bound: bound, After: time.Duration(at - m.t0)}
	// Taken for certain only until the last acquire that may have won it.
	from := m.t0
	if m.phantom > m.t0 && (by < 0 || m.phantom < at) {
		from = m.phantom
	}
	certain := time.Duration(at - from)
	if by >= 0 {
		rc.Recovered, rc.RecoveredAt = true, at
	}
	var triers []int
	for c, first := range m.triers {
		if by < 0 || first < at {
			triers = append(triers, c)
		}
	}
	slices.Sort(triers)
	stopped := clientText(m.x) + " " + stoppedVerb(cause)
	switch {
	case len(triers) == 0:
		rc.Why = fmt.Sprintf("nobody else tried %s after %s stopped", key, clientText(m.x))
	case by < 0 && certain <= bound && from > m.t0:
		rc.Why = fmt.Sprintf("%s's acquire at %s may have won %s without %s hearing so (it ended indefinite), and the cell "+
			"ended %s later, before the %s bound", clientText(m.phantomBy), history.Seconds(from), key,
			clientText(m.phantomBy), durText(certain), durText(bound))
	case by < 0 && certain <= bound:
		rc.Why = fmt.Sprintf("the cell ended %s after %s, before the %s bound", durText(rc.After), stopped, durText(bound))
	case by < 0 && m.lastTry <= from+int64(bound):
		rc.Why = fmt.Sprintf("nobody was still trying %s when the %s bound had passed after %s", key, durText(bound), stopped)
	default:
		rc.Judged = true
		l.df.judged++
	}
	l.df.ops++
	if rc.Judged && certain > bound {
		rc.Stuck = true
		l.dfViolation(key, m, rc, triers, acquire, from)
	}
	if rc.Judged {
		l.stretch(Stretch{Key: key, Start: m.t0, End: at, Stuck: rc.Stuck})
	}
	l.recoveries = append(l.recoveries, rc)
}

// dfViolation words a stopped holder whose key stayed taken past the bound.
func (l *live) dfViolation(key string, m *moment, rc Recovery, triers []int, acquire, from int64) {
	events := []int64{m.w.ID}
	if m.abandon >= 0 {
		events = append(events, m.abandon)
	}
	end := m.t0 + int64(rc.After)
	head := fmt.Sprintf("%s %s at %s holding %s (TTL %s); %s kept trying; ", clientText(m.x), stoppedVerb(rc.Cause),
		history.Seconds(m.t0), key, durText(time.Duration(l.ttl)), clientsText(triers))
	var tail string
	if rc.Recovered {
		events = append(events, acquire)
		tail = fmt.Sprintf("%s acquired %s only %s later (bound %s): slow to recover", clientText(rc.By), key,
			durText(rc.After), durText(rc.Bound))
	} else {
		tail = fmt.Sprintf("nobody acquired %s for %s, to the end of the cell (bound %s): stuck", key,
			durText(rc.After), durText(rc.Bound))
	}
	if from > m.t0 {
		tail += fmt.Sprintf(" (counted from %s, when %s's acquire, which ended indefinite, may have won it)",
			history.Seconds(from), clientText(m.phantomBy))
	}
	l.df.add(Violation{Property: DeadlockFree, Key: key, Clients: append([]int{m.x}, triers...), Events: events,
		At: from + int64(rc.Bound), Start: m.t0, End: end, Summary: head + tail}, l.maxViolations)
}

// stoppedVerb says what happened to a holder, by its Recovery's Cause.
func stoppedVerb(cause string) string {
	switch cause {
	case history.Crashed:
		return "crashed"
	case history.Abandoned:
		return "hung (its lease abandoned)"
	}
	return "was cut off"
}

// finishMoments ends the moments the history ended on: nobody acquired
// their keys again.
func (k *keyLive) finishMoments(end int64) {
	for _, m := range k.moments {
		k.l.resolve(k.key, m, -1, max(end, m.t0), -1)
	}
	k.moments = nil
}

// abandonAt is the earliest abandon by a stopping window's pod in it.
type abandonAt struct {
	t, id int64
	err   string
}

// unclaimed are the stopping windows whose pod held nothing when they
// opened: recorded, not judged.
func (l *live) unclaimed() {
	for i := range l.windows {
		w := &l.windows[i]
		x, ok := w.StoppedHolder()
		if !ok || l.claimed[w.ID] {
			continue
		}
		cause := l.abandonErr[w.ID].err
		if cause == "" {
			cause = CutOff
		}
		l.recoveries = append(l.recoveries, Recovery{Client: x, Cause: cause, At: w.Call, By: -1, Bound: l.recoverWithin,
			Why: clientText(x) + " held nothing when the window opened"})
	}
}
