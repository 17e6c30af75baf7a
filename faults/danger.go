package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Danger decides, from the recorded history alone, whether one window of
// a fault reached its kind's dangerous moment: the moment the lock under
// test must survive (a paused holder's lease expiring while another pod
// waits, a node coming back empty under a live lease...). It returns when
// the danger happened and a sentence saying what happened; ok false with
// a sentence saying why not. A verdict counts only when such moments
// happened (see checker's evidence floor): a fault that never bit proves
// nothing.
type Danger func(w history.Event, v *View) (at int64, detail string, ok bool)

// View is the history a Danger reads: events by call time, the TTL, and
// how many nodes the deployment had (0: unknown).
type View struct {
	Events []history.Event
	TTL    time.Duration
	Nodes  int
}

// Judgment is one fault window judged against its dangerous moment.
type Judgment struct {
	Window    history.Event
	Exercised bool
	At        int64
	Detail    string
}

// Judge judges every closed fault window of h whose kind is registered
// and defines a dangerous moment.
func Judge(h *history.History, ttl time.Duration) []Judgment {
	v := &View{Events: h.Events, TTL: ttl, Nodes: h.Header.Nodes}
	if !sort.SliceIsSorted(v.Events, func(i, j int) bool { return v.Events[i].Call < v.Events[j].Call }) {
		v.Events = append([]history.Event(nil), h.Events...)
		sort.SliceStable(v.Events, func(i, j int) bool { return v.Events[i].Call < v.Events[j].Call })
	}
	var out []Judgment
	for _, w := range v.Events {
		if w.Kind != history.Fault || w.Open {
			continue
		}
		k, err := LookupKind(w.Fault())
		if err != nil || k.Danger == nil {
			continue
		}
		at, detail, ok := k.Danger(w, v)
		out = append(out, Judgment{Window: w, Exercised: ok, At: at, Detail: detail})
	}
	return out
}

// Record writes judgments into a history as Exercised points, so the
// checker and the reports see them from the file alone.
func Record(rec *history.Recorder, js []Judgment) {
	for _, j := range js {
		rec.Point(j.Event())
	}
}

// Append adds judgments to a history in memory as Exercised points at its
// end (a snapshot judged during a run, or a history read from a file that
// lacks them).
func Append(h *history.History, js []Judgment) {
	for _, j := range js {
		e := j.Event()
		e.ID, e.Call, e.Return = int64(len(h.Events)), h.End, h.End
		h.Events = append(h.Events, e)
	}
}

// Event is the judgment as a history event: ok if the window reached its
// dangerous moment, refused if not; Value is the window's op id.
func (j Judgment) Event() history.Event {
	out := history.Refused
	if j.Exercised {
		out = history.Ok
	}
	return history.Event{Kind: history.Exercised, Client: -1, Value: j.Window.ID, Outcome: out,
		Window: history.NewWindow(j.Window.Fault(), j.Window.Targets(), j.Detail)}
}

// hold is a pod's belief of holding a key, as the history shows it.
type hold struct {
	client        int
	key           string
	call, acquire int64 // the acquire's call and return
	end           int64 // the release call or lost signal; -1 while held
	token         string
}

// expiry is when the lease lapses without renewal: TTL after the acquire
// returned (the server set it somewhere between call and return).
func (h hold) expiry(ttl time.Duration) int64 { return h.acquire + int64(ttl) }

// heldAt returns the hold client had at t, if any.
func (v *View) heldAt(client int, t int64) (hold, bool) {
	var cur hold
	held := false
	for _, e := range v.Events {
		if e.Call > t {
			break
		}
		if e.Client != client {
			continue
		}
		switch {
		case e.Kind == history.Acquire && e.Outcome == history.Ok && e.Return <= t:
			cur, held = hold{client: client, key: e.Key, call: e.Call, acquire: e.Return, end: -1, token: e.Token}, true
		case (e.Kind == history.Release || e.Kind == history.Lost) && held && e.Key == cur.key:
			held = false
		}
	}
	return cur, held
}

// holdsAt returns every hold live at t.
func (v *View) holdsAt(t int64) []hold {
	clients := map[int]bool{}
	for _, e := range v.Events {
		if e.Call > t {
			break
		}
		if e.Kind == history.Acquire && e.Outcome == history.Ok {
			clients[e.Client] = true
		}
	}
	var out []hold
	for c := range clients {
		if h, ok := v.heldAt(c, t); ok {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].client < out[j].client })
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
		if e.Kind == history.Renew && e.Outcome == history.Ok && e.Client == h.client && e.Key == h.key && e.Call >= h.call && e.Return <= t {
			until = max(until, e.Return+int64(v.TTL))
		}
	}
	return until
}

// releasedBy reports whether h ended (release call or lost signal) by t.
func (v *View) releasedBy(h hold, t int64) bool {
	for _, e := range v.Events {
		if e.Call > t {
			break
		}
		if e.Client == h.client && e.Key == h.key && e.Call > h.acquire && (e.Kind == history.Release || e.Kind == history.Lost) {
			return true
		}
	}
	return false
}

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

// podOf returns the pod a window targets ("clientN"), if any.
func podOf(w history.Event) (int, bool) {
	for _, t := range w.Targets() {
		if n, ok := strings.CutPrefix(t, "client"); ok && !strings.Contains(n, "->") {
			if i, err := strconv.Atoi(n); err == nil {
				return i, true
			}
		}
	}
	return 0, false
}

func secs(ns int64) string        { return history.Seconds(ns) }
func msec(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func span(from, to int64) string  { return msec(time.Duration(to - from)) }
func ttlText(v *View) string      { return "TTL " + msec(v.TTL) }
func clientText(c int) string     { return "client " + strconv.Itoa(c) }
func triedText(e history.Event) string {
	return fmt.Sprintf("%s tried at %s", clientText(e.Client), secs(max(e.Call, 0)))
}

// outlived is the danger of a pod that keeps believing past its lease: the
// window froze, cut off or stretched a holder, and its lease lapsed before
// the window ended while another pod was trying for the key.
func outlived(what, during string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		pod, ok := podOf(w)
		if !ok {
			return w.Call, "no pod named in the window", false
		}
		h, ok := v.heldAt(pod, w.Call)
		if !ok {
			return w.Call, fmt.Sprintf("%s held no lock when %s began", clientText(pod), during), false
		}
		exp := max(h.expiry(v.TTL), v.renewedUntil(h, w.Call))
		if w.Return <= exp {
			return w.Call, fmt.Sprintf("%s ended at %s, before %s's lease (%s) lapsed at %s", during, secs(w.Return), clientText(pod), ttlText(v), secs(exp)), false
		}
		e, ok := v.tried(h.key, pod, max(exp, w.Call), w.Return)
		if !ok {
			return w.Call, fmt.Sprintf("%s's lease lapsed at %s during %s, but no other pod tried for %s before it ended", clientText(pod), secs(exp), during, h.key), false
		}
		return exp, fmt.Sprintf("%s %s %s from %s; its lease on %s (%s) lapsed at %s; %s",
			clientText(pod), what, span(w.Call, w.Return), secs(w.Call), h.key, ttlText(v), secs(exp), triedText(e)), true
	}
}

// delayTarget prefixes the reply delay among a slow-reply window's targets.
const delayTarget = history.DelayTarget

// lateWinner is slow-reply's danger: the reply to an acquire that may have
// taken effect (ok, or no definite answer) was held back past the TTL. An
// ok that came back more than a TTL after its call shows it; so does an
// attempt made while every reply was held back longer than the TTL, whose
// caller gave up before the reply came (a lock that gives up in time is
// one that survived it).
func lateWinner(w history.Event, v *View) (int64, string, bool) {
	delay, _ := w.TargetDuration(delayTarget)
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind != history.Acquire || e.Outcome == history.Refused || e.Open || e.Return < w.Call {
			continue
		}
		if took := time.Duration(e.Return - e.Call); took > v.TTL && e.Outcome == history.Ok {
			return e.Return, fmt.Sprintf("%s's acquire of %s won, and its answer came %s after the call, past the %s", clientText(e.Client), e.Key, msec(took), ttlText(v)), true
		}
		if e.Outcome == history.Indefinite && e.Call >= w.Call && delay > v.TTL {
			return e.Call, fmt.Sprintf("%s's acquire of %s at %s may have taken effect, its reply held back %s (past the %s); the lock gave up after %s",
				clientText(e.Client), e.Key, secs(e.Call), msec(delay), ttlText(v), span(e.Call, e.Return)), true
		}
	}
	return w.Call, "no acquire that may have won had its reply held back past the TTL", false
}

// restartedUnder is node-restart's danger: nodes came back empty while a
// lease they carried was live, a majority of them under the same lease
// (one forgetful node is what a quorum lock is built to survive; on a
// single node, one is the majority). Delayed, the node also stayed down
// past the TTL, the remedy the Redlock description gives.
//
// how says how the node came back ("empty", or "from its AOF after a power
// loss", which may or may not have kept the key: the verdict tells).
func restartedUnder(delayed bool, how string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		node := strings.Join(w.Targets(), ",")
		if delayed && time.Duration(w.Return-w.Call) <= v.TTL {
			return w.Call, fmt.Sprintf("%s was down %s, not past the %s", node, span(w.Call, w.Return), ttlText(v)), false
		}
		nodes := v.restartedNodes(w.Fault())
		why := fmt.Sprintf("no lease was live both when %s went down at %s and when it came back at %s", node, secs(w.Call), secs(w.Return))
		for _, h := range v.holdsAt(w.Call) {
			if delayed {
				if h.expiry(v.TTL) > w.Call {
					return w.Return, fmt.Sprintf("%s was killed at %s under %s's live lease on %s (%s, from %s) and stayed down %s",
						node, secs(w.Call), clientText(h.client), h.key, ttlText(v), secs(h.acquire), span(w.Call, w.Return)), true
				}
				continue
			}
			if h.expiry(v.TTL) <= w.Return || v.releasedBy(h, w.Return) {
				continue
			}
			under := v.restartsUnder(h, w)
			if 2*len(under) > nodes {
				return w.Return, fmt.Sprintf("%s restarted %s at %s while %s's lease on %s (%s, from %s) was live: %d of %d nodes (%s) under it",
					node, how, secs(w.Return), clientText(h.client), h.key, ttlText(v), secs(h.acquire), len(under), nodes, strings.Join(under, ", ")), true
			}
			why = fmt.Sprintf("%s restarted %s under %s's live lease, but only %d of %d nodes did", node, how, clientText(h.client), len(under), nodes)
		}
		return w.Call, why, false
	}
}

// restartedNodes is the deployment's node count, or, in a history that
// does not record it, the distinct nodes windows of this fault hit.
func (v *View) restartedNodes(fault string) int {
	if v.Nodes > 0 {
		return v.Nodes
	}
	seen := map[string]bool{}
	for _, e := range v.Events {
		if e.Kind == history.Fault && e.Fault() == fault {
			seen[strings.Join(e.Targets(), ",")] = true
		}
	}
	return max(1, len(seen))
}

// restartsUnder lists the nodes that came back empty during h's lease, up
// to and including window w.
func (v *View) restartsUnder(h hold, w history.Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range v.Events {
		if e.Call > w.Call {
			break
		}
		if e.Kind == history.Fault && e.Fault() == w.Fault() && !e.Open && e.Call >= h.call && e.Return <= w.Return {
			if n := strings.Join(e.Targets(), ","); !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// acquiredDuring is minority-partition's danger: the lock kept working (a
// successful acquire) while a node was unreachable.
func acquiredDuring(w history.Event, v *View) (int64, string, bool) {
	for _, e := range v.Events {
		if e.Call >= w.Return {
			break
		}
		if e.Kind == history.Acquire && e.Outcome == history.Ok && e.Call >= w.Call && e.Return <= w.Return {
			return e.Return, fmt.Sprintf("%s acquired %s at %s while %s was cut off", clientText(e.Client), e.Key, secs(e.Return), w.Targets()[0]), true
		}
	}
	return w.Call, "no acquire succeeded while the node was cut off", false
}

// slowedCalls is latency's danger: the targeted pod completed a call while
// its links were slow.
func slowedCalls(w history.Event, v *View) (int64, string, bool) {
	pod, ok := podOf(w)
	for _, e := range v.Events {
		if e.Call >= w.Return {
			break
		}
		if ok && e.Client == pod && e.Kind == history.Acquire && e.Call >= w.Call && !e.Open && e.Return <= w.Return {
			return e.Call, fmt.Sprintf("%s's acquire took %s under the added latency", clientText(pod), span(e.Call, e.Return)), true
		}
	}
	return w.Call, "the slowed pod made no call in the window", false
}
