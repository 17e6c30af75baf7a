package faults

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// A lease's end, as the dangers read it: what the server did, where a
// witness saw it, else what the TTL implies. A lock whose real lease
// differs from the cell's TTL (an expiry rounded up to whole seconds, a
// library's own tolerance) is judged by the lease it really took.

// leaseEnd is when a hold's lease stopped holding.
type leaseEnd struct {
	copies []history.ServerLease // observed: the lease's copies, one per node
	// at is when the lease was due to lapse as the server had it at the
	// moment asked about (renewals after it are the lock's defence, not
	// the fault's undoing); final is when it really stopped holding.
	at, final int64
	set       int64 // observed: when the witness heard the server write it
	observed  bool
	how       string // observed: history.LeaseExpired, LeaseDeleted, ...
	where     string // observed: the nodes
	why       string // assumed: why no witness saw it
}

// evidence is the judgment's Lease word.
func (l leaseEnd) evidence() string {
	if l.observed {
		return history.LeaseObserved
	}
	return history.LeaseAssumed
}

// server returns the history's server side, derived once per view.
func (v *View) server() *history.ServerView {
	if v.srv == nil {
		end := v.End
		if end == 0 && len(v.Events) > 0 {
			end = v.Events[len(v.Events)-1].Return
		}
		v.srv = history.ServerViewOf(v.Events, end)
	}
	return v.srv
}

// leaseEndOf is when h's lease ended on the server, or, where no witness
// saw it, when the TTL from the acquire's return (and the renewals
// recorded by t) says it did.
func (v *View) leaseEndOf(h hold, t int64) leaseEnd {
	l := v.findLeaseEnd(h, t)
	if v.lease != history.LeaseAssumed {
		v.lease = l.evidence()
	}
	return l
}

func (v *View) findLeaseEnd(h hold, t int64) leaseEnd {
	srv := v.server()
	if sh, ok := srv.LeaseFor(h, v.LockNodes); ok {
		return leaseEnd{copies: sh.Copies, at: sh.DueAt(t, v.LockNodes), final: sh.End, set: sh.Start, observed: true, how: sh.Ended,
			where: strings.Join(sh.Nodes, ", ")}
	}
	l := leaseEnd{at: max(expiry(h, v.TTL), v.renewedUntil(h, t))}
	l.final = l.at
	switch {
	case !srv.Any():
		l.why = "no witness watched the server"
	case !v.watchedAny(h.Start):
		l.why = "the witness could not see the lock's nodes then"
	case v.lostSight(h) != "":
		l.why = v.lostSight(h)
	default:
		l.why = fmt.Sprintf("the witness saw no lease of %s's on %s: the lock keeps it under a name or on a server "+
			"the witness does not watch", clientText(h.Client), h.Key)
	}
	return l
}

// watchedAny reports whether a witness saw some node at t.
func (v *View) watchedAny(t int64) bool {
	srv := v.server()
	for _, n := range srv.Nodes() {
		if srv.Watched(n, t) {
			return true
		}
	}
	return false
}

// lapsed says, in a sentence's words, how and when h's lease ended:
// "the server removed client 4's lease on order:1 at 0.597 s (expired on
// node0, seen by the witness)" or "client 4's lease on order:1 (TTL 300
// ms) lapsed at 0.397 s (assumed from the TTL: no witness watched the
// server)".
func (v *View) lapsed(h hold, l leaseEnd) string {
	if !l.observed {
		return fmt.Sprintf("%s's lease on %s (%s) lapsed at %s (assumed from the TTL: %s)",
			clientText(h.Client), h.Key, ttlText(v), secs(l.at), l.why)
	}
	if l.at == history.Forever {
		return fmt.Sprintf("the server held %s's lease on %s with no expiry (on %s, seen by the witness)",
			clientText(h.Client), h.Key, l.where)
	}
	if l.final > l.at+int64(time.Millisecond) {
		kept := "held it to the end"
		if l.how != history.LeaseLive {
			kept = "kept it until " + secs(l.final)
		}
		// The lease as it stood when the fault began: renewals while it
		// lasted are the lock's defence, which the window put to work.
		return fmt.Sprintf("the server had %s's lease on %s due to lapse at %s when the fault began (on %s, seen by the witness); "+
			"renewed while it lasted, it %s", clientText(h.Client), h.Key, secs(l.at), l.where, kept)
	}
	verb := map[string]string{history.LeaseExpired: "expired", history.LeaseDeleted: "deleted",
		history.LeaseReplaced: "replaced", history.LeaseEvicted: "evicted", history.LeaseLost: "lost"}[l.how]
	if verb == "" {
		return fmt.Sprintf("the server still held %s's lease on %s at %s (on %s, seen by the witness)",
			clientText(h.Client), h.Key, secs(l.at), l.where)
	}
	for _, c := range l.copies {
		if c.Why != "" {
			verb += " (" + c.Why + ")"
			break
		}
	}
	// Counted from the write the witness heard, not from the acquire's
	// return: a late reply comes after the lease began, even after it
	// ended.
	return fmt.Sprintf("the server removed %s's lease on %s at %s (%s on %s, %s after it was written; seen by the witness)",
		clientText(h.Client), h.Key, secs(l.at), verb, l.where, span(l.set, l.at))
}

// dueOf is when h's lease was due to lapse on the server, whatever a
// node's restart or a failover did to one copy: the latest deadline the
// witness read for its copies (none: never), else the TTL's.
func (v *View) dueOf(h hold, t int64) leaseEnd {
	l := v.leaseEndOf(h, t)
	if !l.observed {
		return l
	}
	due := int64(0)
	for _, c := range l.copies {
		if c.Deadline == 0 {
			due = history.Forever
			break
		}
		due = max(due, c.Deadline)
	}
	l.at = due
	return l
}

// dueText says when h's lease was due to lapse and where that came from,
// for a sentence's parenthesis: "due at 0.602 s on node0, seen by the
// witness" or "TTL 300 ms, its end assumed: no witness watched the
// server".
func (v *View) dueText(h hold, t int64) string {
	l := v.dueOf(h, t)
	if !l.observed {
		return fmt.Sprintf("%s, its end assumed from it: %s", ttlText(v), l.why)
	}
	if l.at == history.Forever {
		return fmt.Sprintf("no expiry on %s, seen by the witness", l.where)
	}
	return fmt.Sprintf("due at %s on %s, seen by the witness", secs(l.at), l.where)
}

// lostSight says which node the witness lost sight of right after h's
// acquire, before it heard the write (a failover's kill), if one did.
func (v *View) lostSight(h hold) string {
	const heard = 50 * time.Millisecond // the witness hears a write within it (p99 0.4 ms on loopback)
	for _, e := range v.Events {
		if e.Call > h.Start+int64(heard) {
			break
		}
		if e.Kind == history.Witness && e.ServerOp() == history.WitnessBlind && e.Call >= h.AcquireCall {
			return fmt.Sprintf("the witness lost sight of %s at %s (%s), before it heard the write", e.Node(), secs(e.Call), e.Err)
		}
	}
	return ""
}
