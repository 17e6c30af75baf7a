package faults

import (
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// sentinel-partition is sentinel-failover's other half: the primary is cut
// off rather than killed (SentinelFailover with cutOff).
func init() {
	mustRegister(Kind{Name: "sentinel-partition", Family: FamilyServerSplit,
		Doc: "cut the primary off from the Sentinels and its replica (the pods still reach it) until the Sentinels " +
			"promote the replica; then heal, and the old primary rejoins as a replica, losing what it took " +
			"meanwhile",
		Moment: "the Sentinels promoted the replica while a pod believed it held a lease taken from the cut-off primary",
		Danger: promotedUnderLease,
		Needs:  Needs{NodeControl: true, Sentinel: true},
		Params: SentinelPartitionParams{}})
}

// SentinelPartitionParams are sentinel-partition's parameters: none (the
// Sentinels decide when it ends).
type SentinelPartitionParams struct{}

// Validate implements Params.
func (SentinelPartitionParams) Validate() error { return nil }

// Scaled implements Params.
func (p SentinelPartitionParams) Scaled(float64) Params { return p }

// Build implements Params.
func (SentinelPartitionParams) Build(time.Duration) Fault { return &SentinelFailover{cutOff: true} }

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
