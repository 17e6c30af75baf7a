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
		if lock.Nodes > 1 {
			return Prediction{Why: "Redlock's validity check: an acquire whose answers took longer than the lease's validity " +
				"is given up (and released), so a late reply never makes a holder"}
		}
		// The late winner believes from its reply, D after its SET landed,
		// and then works for the fault's Work (half the TTL).
		work := ttl / 2
		return Prediction{Breaks: true, Lo: lease - work, Hi: lease + retryGap,
			Why: fmt.Sprintf("the late winner hears its reply D after its SET landed and works %v more: it outlives its %v "+
				"lease once D + %v > %v, and another pod takes the key when it lapses", work, lease, work, lease)}
	case "replica-lag":
		if lock.Nodes > 1 {
			return Prediction{Why: "independent primaries: no replica to promote"}
		}
		// The fault lets the replica lag, waits for a fresh acquire and
		// kills the primary at once (within a millisecond): a lease written
		// within the lag is missing on the promoted replica, and the next
		// pod takes the key while its holder still believes.
		return Prediction{Breaks: true, Lo: 0, Hi: retryGap,
			Why: "a lease written within the replication lag is lost with the primary: any lag longer than the " +
				"moment between the write and the kill breaks a lock without fencing (failover's critique)"}
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
