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
// (its times already the run's: TTL, work): the lease the lock grants,
// then the family's own theory.
func Predict(lock lockimpl.Spec, f Family, sc scenarios.Scenario) Prediction {
	lease := sc.TTL
	switch {
	case lock.Lease < 0:
		return Prediction{Why: "its key never expires: no timing frees it for another pod"}
	case lock.Lease > 0:
		lease = time.Duration(lock.Lease * float64(sc.TTL))
	}
	if f.theory == nil {
		return Prediction{Why: "no theory for this family"}
	}
	return f.theory(lock, sc, lease)
}

// agrees says whether a measured boundary (found, at) agrees with p
// within resolution res.
func (p Prediction) agrees(found bool, at, res time.Duration) bool {
	if !p.Breaks || !found {
		return p.Breaks == found
	}
	return at >= p.Lo-res && at <= p.Hi+res
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
