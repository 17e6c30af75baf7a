package checker

import (
	"time"
)

// The two liveness properties beside the four safety ones. Safety says
// nothing bad happens (two holders at once, a lost update); liveness says
// something good still does: a lock whose holder died is freed after a
// while (deadlock freedom), and while a majority of the lock's nodes is up
// pods can acquire (fault tolerance). A lock that blocks everyone fails
// liveness; it is never merely unexercised.
const (
	// DeadlockFree (liveness A): after a holder stops being able to
	// release (it crashed, hung, or was cut off), another pod that keeps
	// trying acquires the key within the recovery bound.
	DeadlockFree Property = "deadlock-free"
	// FaultTolerant (liveness B): while a majority of the lock's nodes is
	// up and reachable and nobody holds the key, pods that try get it
	// within a few call timeouts.
	FaultTolerant Property = "fault-tolerant"
)

// Group is a family of properties a cell's expectation speaks of as one:
// safety (safe or unsafe) and liveness (live or stuck).
type Group string

// Groups.
const (
	GroupSafety   Group = "safety"
	GroupLiveness Group = "liveness"
)

// Group returns the family the property belongs to.
func (p Property) Group() Group {
	switch p {
	case DeadlockFree, FaultTolerant, PhantomLease:
		return GroupLiveness
	}
	return GroupSafety
}

// GroupVerdict is Verdict over the decisive results of one group. A
// liveness group in which no property judged anything has no verdict
// (""): nothing happened that liveness could be judged on.
func GroupVerdict(results []Result, g Group) Status {
	var in []Result
	judged := false
	for _, r := range results {
		if r.Property.Group() != g {
			continue
		}
		in = append(in, r)
		judged = judged || r.Judged > 0 || r.Status != Pass
	}
	if len(in) == 0 || g == GroupLiveness && !judged {
		return ""
	}
	return Verdict(in)
}

// Liveness is what a history shows of its lock's liveness: each stopped
// holder and how long the key took to free, the stretches in which nobody
// held a key while someone tried, and the bounds they were held to.
type Liveness struct {
	Recoveries []Recovery `json:"recoveries,omitempty"`
	// MedianRecovery and MaxRecovery are over the recoveries judged.
	MedianRecovery time.Duration `json:"median_recovery_ns,omitempty"`
	MaxRecovery    time.Duration `json:"max_recovery_ns,omitempty"`
	Stretches      []Stretch     `json:"stretches,omitempty"`
	// FreeWhileTrying is the share of node-down window time in which a key
	// was free while a pod with a majority of the lock's nodes reachable
	// tried for it; -1 when no such window was judged.
	FreeWhileTrying float64       `json:"free_while_trying"`
	RecoverWithin   time.Duration `json:"recover_within_ns,omitempty"`
	AcquireWithin   time.Duration `json:"acquire_within_ns,omitempty"`
}

// Recovery is one stopped holder and what became of the key it held.
type Recovery struct {
	Client int    `json:"client"`
	Key    string `json:"key"`
	// Cause is "crashed", "abandoned" or "cut off".
	Cause string `json:"cause"`
	// At is when the holder stopped (its fault window's start, ns).
	At        int64 `json:"at"`
	Recovered bool  `json:"recovered"`
	// By is who acquired the key next (-1: nobody), at RecoveredAt.
	By          int   `json:"by"`
	RecoveredAt int64 `json:"recovered_at,omitempty"`
	// After is RecoveredAt-At, or At to the history's end when nobody
	// acquired the key again.
	After time.Duration `json:"after_ns"`
	Bound time.Duration `json:"bound_ns"`
	// Stuck says the key stayed taken past the bound: a violation.
	Stuck bool `json:"stuck,omitempty"`
	// Judged is false when the moment did not count (nobody else tried,
	// the cell ended before the bound); Why says so in words.
	Judged bool   `json:"judged"`
	Why    string `json:"why,omitempty"`
}

// Stretch is a time in which nobody held Key while someone tried for it:
// after a holder stopped, or while a node was down. Stuck says it lasted
// past its bound.
type Stretch struct {
	Key   string `json:"key"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Stuck bool   `json:"stuck,omitempty"`
}
