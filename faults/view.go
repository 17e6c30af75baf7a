package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// What a Danger reads of a history: who held what, when a lease was due
// to lapse, who tried; and the words its sentences are made of.
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

func secs(ns int64) string { return history.Seconds(ns) }

func msec(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func span(from, to int64) string { return msec(time.Duration(to - from)) }

func ttlText(v *View) string { return "TTL " + msec(v.TTL) }

func clientText(c int) string { return "client " + strconv.Itoa(c) }

func triedText(e history.Event) string {
	return fmt.Sprintf("%s tried at %s", clientText(e.Client), secs(max(e.Call, 0)))
}
