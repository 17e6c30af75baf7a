package margins

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Prediction is the boundary a lock's design predicts for a family: it
// breaks somewhere in [Lo, Hi] (an interval, because a fault lands at a
// random moment of a critical section), or never.
type Prediction struct {
	Breaks bool          `json:"breaks"`
	Lo     time.Duration `json:"lo_ns,omitempty"`
	Hi     time.Duration `json:"hi_ns,omitempty"`
	Why    string        `json:"why"`
}

// retryGap is the longest a trying pod waits between attempts (the
// workload's backoff cap): after a lease lapses, another pod holds the
// key within it.
const retryGap = 20 * time.Millisecond

// Predict is what the design says of lock under family f in scenario sc
// (its times already the run's: TTL, work).
func Predict(lock lockimpl.Spec, f Family, sc scenarios.Scenario) Prediction {
	ttl, lease := sc.TTL, sc.TTL
	switch {
	case lock.Lease < 0:
		return Prediction{Why: "its key never expires: no timing frees it for another pod"}
	case lock.Lease > 0:
		lease = time.Duration(lock.Lease * float64(ttl))
	}
	switch f.Name {
	case "restart-delay":
		// Fencing included: its counter lives on the node that forgets.
		return predictRestart(lock, sc, lease)
	case "replica-lag":
		return predictLag(lock, sc, lease)
	}
	if lock.Fencing {
		return Prediction{Why: "the resource rejects a fence below the highest it has seen: a stale holder's writes are refused, " +
			"whatever the timing (Kleppmann's remedy)"}
	}
	// The fault lands while the holder works, 0 to WorkMax after its
	// acquire returned: what was left of the lease is lease - that.
	left := func(extra time.Duration) Prediction {
		return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + extra}
	}
	switch f.Name {
	case "pause":
		p := left(retryGap)
		p.Why = fmt.Sprintf("a lease without fencing breaks when the pause outlasts what was left of it (%v less the 0-%v since "+
			"the acquire) and another pod takes the key (within a %v retry gap)", lease, sc.WorkMax, retryGap)
		if lock.Renews {
			p.Why += "; the pause freezes the watchdog too, and the fault lands before its first renewal"
		}
		return p
	case "slow-holder":
		if lock.Renews {
			return Prediction{Why: "the watchdog renews the lease for as long as the holder works"}
		}
		return Prediction{Breaks: true, Lo: lease, Hi: lease + retryGap,
			Why: fmt.Sprintf("the critical section outlasts the %v lease, counted from the acquire, and another pod takes the key", lease)}
	case "slow-reply":
		return predictReply(lock, ttl, lease)
	case "one-way-loss":
		// Through the loss the holder's commands land but it hears
		// nothing: its first unanswered call gives up its connection, and
		// a new one cannot even finish its handshake, so no later call is
		// sent at all.
		p := Prediction{Breaks: true, Lo: lease, Hi: lease + retryGap,
			Why: fmt.Sprintf("the holder works on through the loss while its %v lease lapses, and another pod takes the key",
				lease)}
		if lock.Renews {
			// Only slow holders renew, and every slow holder is cut off:
			// the renewal script is never loaded on the node.
			p.Why += "; the watchdog's first renewal is an EVALSHA the node has not seen: it lands, but its NOSCRIPT " +
				"reply is lost, so the EVAL that would renew is never sent"
		}
		return p
	case "latency":
		// Both ways: a SET lands one latency after it was sent and the
		// holder hears it one more later; it works, then releases.
		if limit, why := quorumLimit(lock, ttl); limit > 0 && limit/2 <= lease-sc.WorkMax {
			return Prediction{Why: why + ": an acquire whose round trip (two latencies) takes longer is given up, and one " +
				"that does not leaves its holder more lease than its critical section needs"}
		}
		if lock.BlindRelease {
			// Its DEL, sent after the work, lands a latency later still:
			// two latencies and the work after the lease began.
			return Prediction{Breaks: true, Lo: (lease - sc.WorkMax) / 2, Hi: (lease + retryGap) / 2,
				Why: fmt.Sprintf("its unconditional DEL lands two latencies and the work after its SET did: once 2 x latency + "+
					"work > %v, the next pod's key is deleted under it and a third pod takes the key (half the latency a "+
					"token lock takes)", lease)}
		}
		return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + retryGap,
			Why: fmt.Sprintf("the holder believes one latency after its SET landed and works up to %v more: it outlives "+
				"its %v lease once latency + work > %v", sc.WorkMax, lease, lease)}
	case "clock-jump":
		if lock.Nodes > 1 {
			return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + retryGap,
				Why: "one node's jump ends the holder's key there early; on a bare majority that leaves it a minority, " +
					"so the jump must outlast what was left of the lease, as on one node"}
		}
		return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + retryGap,
			Why: fmt.Sprintf("a forward jump longer than what was left of the %v lease expires the key at once "+
				"while its holder works on", lease)}
	}
	return Prediction{Why: "no theory for this family"}
}

// agrees says whether a measured boundary (found, at) agrees with p
// within resolution res.
func (p Prediction) agrees(found bool, at, res time.Duration) bool {
	if !p.Breaks || !found {
		return p.Breaks == found
	}
	return at >= p.Lo-res && at <= p.Hi+res
}

// predictRestart: a node restarted empty forgets the lease it carried; a
// pod that wins the key there while the holder still works on makes two
// holders. So the restart must come back within what is left of the
// critical section (and of the lease: once that lapsed, the key was free
// anyway): the lock breaks for delays up to that and holds past it.
func predictRestart(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	within := min(lease, sc.WorkMax)
	p := Prediction{Breaks: true, Lo: 0, Hi: within,
		Why: fmt.Sprintf("the node comes back empty while its holder still works (up to %v, inside the %v lease) and "+
			"another pod takes the key: delays up to that", sc.WorkMax, lease)}
	switch {
	case lock.Fencing:
		// The counter lives on the lock's node and is lost with it.
		p.Why += "; the fence counter restarts empty with the node, so fences begin again at 1: a restart under a " +
			"holder whose fence was itself the first after a restart hands the next pod an equal fence, which is not " +
			"below the highest the resource has seen, and both writes land"
	case lock.Nodes > 1:
		// A holder often has a bare majority: another pod's attempt won
		// the third node and let go.
		p.Why = fmt.Sprintf("a holder often has a bare majority (another pod's attempt won the third node and let go): "+
			"one node back empty under it leaves it a minority, and the next pod wins that node and the free one, "+
			"while it still works (up to %v): delays up to that", sc.WorkMax)
	}
	return p
}

// quorumLimit is how late a multi-node lock's answers may come before its
// acquire is given up: the node timeout (a share of the TTL), or the
// validity check's lease less its drift (redsync: 1% and 2 ms). 0: no
// such limit (one node).
func quorumLimit(lock lockimpl.Spec, ttl time.Duration) (time.Duration, string) {
	if lock.Nodes < 2 {
		return 0, ""
	}
	validity := time.Duration((1-driftFactor)*float64(ttl)) - driftFloor
	if lock.NodeTimeout > 0 && time.Duration(lock.NodeTimeout*float64(ttl)) < validity {
		return time.Duration(lock.NodeTimeout * float64(ttl)), fmt.Sprintf("each node's answer must come within the "+
			"node timeout (%.0f%% of the TTL), and the acquire within the lease's validity", 100*lock.NodeTimeout)
	}
	return validity, "Redlock's validity check: the acquire must finish within the lease less its clock drift"
}

// predictLag: the fault kills the primary within a moment of a fresh
// acquire, so a lag of any length loses that lease. But the promoted
// replica has the primary's state of a lag ago: an earlier holder's lease
// still live there keeps the others out until it lapses, which may be
// after the holder is done. Only a lag past the lease less the shortest
// critical section is sure to leave the replica free in time; a shorter
// one breaks the lock when the key happened to be free a lag ago.
func predictLag(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	if lock.Nodes > 1 {
		return Prediction{Why: "independent primaries: no replica to promote"}
	}
	p := Prediction{Breaks: true, Lo: 0, Hi: lease - sc.WorkMin + retryGap,
		Why: fmt.Sprintf("the fresh lease dies with the primary at any lag, but the promoted replica holds the state of a "+
			"lag ago: an earlier holder's lease still live there keeps the others out until the holder is done, unless the "+
			"key was free a lag ago; past the %v lease less the shortest critical section (%v) it always lapsed in time",
			lease, sc.WorkMin)}
	if lock.Fencing {
		p.Why += "; the fence counter lags with the replica too, so the next pod's fence repeats the lost holder's, and " +
			"an equal fence is not below the highest the resource has seen"
	}
	return p
}

// predictReply: the late winner believes from its reply, D after its SET
// landed, and then works for the fault's Work (half the TTL).
func predictReply(lock lockimpl.Spec, ttl, lease time.Duration) Prediction {
	work := ttl / 2
	if limit, why := quorumLimit(lock, ttl); limit > 0 && limit <= lease-work {
		return Prediction{Why: why + ": an acquire whose answers come later than that is given up (and released), " +
			"and one that comes sooner leaves its holder more lease than its critical section needs"}
	}
	if lock.Renews {
		// Its first renewal, a third of the TTL after the answer,
		// comes too late once the lease lapsed first.
		return Prediction{Breaks: true, Lo: lease - ttl/3, Hi: lease - ttl/3 + retryGap,
			Why: fmt.Sprintf("the late winner hears its reply D after its SET landed; its watchdog's first renewal comes a "+
				"third of the TTL later, too late once D + %v > %v, while it works %v on, and another pod takes the key",
				ttl/3, lease, work)}
	}
	return Prediction{Breaks: true, Lo: lease - work, Hi: lease - work + retryGap,
		Why: fmt.Sprintf("the late winner hears its reply D after its SET landed and works %v more: it outlives its %v "+
			"lease once D + %v > %v, and another pod takes the key when it lapses", work, lease, work, lease)}
}
