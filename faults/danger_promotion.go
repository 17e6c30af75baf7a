package faults

import (
	"fmt"

	"github.com/lockchaos/lockchaos/history"
)

// The dangers of failovers: what a promoted replica had of the leases
// pods believed they held.

// lostOnPromotion is failover's danger: the promoted replica lacked a key a
// pod believed it held (a probe the fault recorded right after promotion).
func lostOnPromotion(w history.Event, v *View) (int64, string, bool) {
	var tokens map[string]bool // every token the history handed out, read once
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind != history.Probe || e.Call < w.Call {
			continue
		}
		for _, h := range v.holdsAt(e.Call) {
			if h.key != e.Key || h.expiry(v.TTL) <= e.Call {
				continue
			}
			if e.Value == 0 {
				return e.Call, fmt.Sprintf("the promoted replica lacked %s at %s while %s believed it held it (acquired at %s, %s)",
					e.Key, secs(e.Call), clientText(h.client), secs(h.acquire), ttlText(v)), true
			}
			if tokens == nil {
				tokens = v.tokens()
			}
			// Another pod's older key (its release was lost with the
			// primary): the holder's key is gone all the same. Compared
			// only when the value is a token the history knows, as locks
			// store different things.
			if found := e.Detail(); h.token != "" && found != h.token && tokens[found] {
				return e.Call, fmt.Sprintf("the promoted replica had an older lease's key for %s at %s, not the one %s believed it held (acquired at %s, %s)",
					e.Key, secs(e.Call), clientText(h.client), secs(h.acquire), ttlText(v)), true
			}
		}
	}
	return w.Call, "the promoted replica had every key a pod believed it held", false
}

// tokens returns every token an acquire returned.
func (v *View) tokens() map[string]bool {
	out := map[string]bool{}
	for _, e := range v.Events {
		if e.Kind == history.Acquire && e.Token != "" {
			out[e.Token] = true
		}
	}
	return out
}

// promotedUnderLease is the Sentinel faults' danger: the Sentinels
// promoted the replica (the fault probed it the moment it turned primary)
// while a pod's lease on the old primary was at stake. Killed: a pod
// believed it held a lease it took before the primary died. Cut off: a
// pod asked the cut-off primary for the lock before the promotion (what
// it was granted there is lost; a lock that waits for a replica is
// refused there). What became of a lease's key is the lock's business;
// the sentence says whether the promoted replica had it.
func promotedUnderLease(w history.Event, v *View) (int64, string, bool) {
	probe, ok := firstProbe(w, v)
	if !ok {
		return w.Call, "the Sentinels did not promote the replica within the window", false
	}
	if w.Fault() == "sentinel-partition" {
		if e, ok := askedCutOff(w, v, probe.Call); ok {
			granted := "was refused"
			if e.Outcome == history.Ok {
				granted = "was granted it"
			}
			return probe.Call, fmt.Sprintf("%s asked the cut-off primary for %s at %s and %s; the Sentinels promoted %s at %s",
				clientText(e.Client), e.Key, secs(e.Call), granted, probe.Targets()[0], secs(probe.Call)), true
		}
		return w.Call, "no pod asked the cut-off primary for a lock before the Sentinels promoted the replica", false
	}
	var tokens map[string]bool
	for _, h := range v.holdsAt(probe.Call) {
		if h.key != probe.Key || h.acquire > w.Call || max(h.expiry(v.TTL), v.renewedUntil(h, probe.Call)) <= probe.Call {
			continue
		}
		if tokens == nil {
			tokens = v.tokens()
		}
		return probe.Call, fmt.Sprintf("the Sentinels promoted %s at %s while %s believed it held %s (acquired at %s, %s): %s",
			probe.Targets()[0], secs(probe.Call), clientText(h.client), h.key, secs(h.acquire), ttlText(v), keyFound(probe, h, tokens)), true
	}
	return w.Call, "no pod held a lease from the old primary when the Sentinels promoted the replica", false
}

// keyFound says what the promoted replica had of h's key.
func keyFound(probe history.Event, h hold, tokens map[string]bool) string {
	switch found := probe.Detail(); {
	case probe.Value == 0:
		return "it lacked the key"
	case h.token != "" && found != h.token && tokens[found]:
		return "it had an older lease's key, not this one"
	default:
		return "it had the key"
	}
}

// firstProbe returns the window's first probe (the promoted replica read
// the moment it turned primary).
func firstProbe(w history.Event, v *View) (history.Event, bool) {
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind == history.Probe && e.Call >= w.Call {
			return e, true
		}
	}
	return history.Event{}, false
}

// askedCutOff returns an acquire a pod called on the cut-off primary
// between the cut and the promotion, a granted one if any.
func askedCutOff(w history.Event, v *View, promoted int64) (history.Event, bool) {
	var first history.Event
	found := false
	for _, e := range v.Events {
		if e.Call > promoted {
			break
		}
		if e.Kind != history.Acquire || e.Call < w.Call {
			continue
		}
		if e.Outcome == history.Ok {
			return e, true
		}
		if !found {
			first, found = e, true
		}
	}
	return first, found
}
