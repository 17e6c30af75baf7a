package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// LeaseTolerance is how far the leases the witness saw may differ from
// the lease the lock declares (its TTL, or Spec.Lease TTLs) before
// LeaseNote speaks: the witness reads a key's deadline a round trip after
// the write, a few milliseconds on a busy machine, far under a fifth of a
// TTL; a lock that rounds a 300 ms TTL up to a whole second is far over.
const LeaseTolerance = 0.2

// LeaseNote says, in one sentence, when the leases the witness saw lock
// write on the servers in h lasted otherwise than the lock declares: one
// TTL (ttl, the cell's, scaled), or Spec.Lease TTLs. The catalog's faults
// are sized to the TTL (a pause of 1.5x), so a lock whose lease is its own
// (a library counting whole seconds) is tested against faults of the wrong
// size, and its verdict says little; the sentence names the lease seen and
// the way out (Scenario.Scaled). "" when they agree, when the lock's key
// never expires by design (Spec.Lease < 0), or when the witness saw no
// lease written.
func LeaseNote(lock lockimpl.Spec, h *history.History, ttl time.Duration) string {
	if h == nil || lock.Lease < 0 || ttl <= 0 {
		return ""
	}
	want := ttl
	if lock.Lease > 0 {
		want = time.Duration(lock.Lease * float64(ttl))
	}
	var lasted []time.Duration
	never := 0
	v := history.ServerViewOf(h.Events, h.End)
	// The leases behind the pods' holds, not every key the lock wrote (a
	// fencing lock's counter lives a day).
	for _, hold := range history.Holds(h) {
		sh, ok := v.LeaseFor(hold, h.Header.LockNodes)
		if !ok || len(sh.Copies) == 0 {
			continue
		}
		l := sh.Copies[0]
		if l.Found || len(l.Expiries) == 0 {
			continue // not seen written: its first deadline is not the write's
		}
		if d := l.Expiries[0].Deadline; d > 0 {
			lasted = append(lasted, time.Duration(d-l.Set))
		} else {
			never++
		}
	}
	declared := "the cell's TTL"
	if lock.Lease > 0 {
		declared = fmt.Sprintf("the %g TTLs its spec declares (Lease)", lock.Lease)
	}
	if len(lasted) == 0 {
		if never == 0 {
			return ""
		}
		return fmt.Sprintf("%s's keys on the server never expire (%d written without an expiry), where %s, %s, was expected: "+
			"declare Lease: -1 if that is the design", lock.Name, never, history.Span(want), declared)
	}
	slices.Sort(lasted)
	median := lasted[len(lasted)/2]
	if diff := float64(median-want) / float64(want); diff >= -LeaseTolerance && diff <= LeaseTolerance {
		return ""
	}
	advice := fmt.Sprintf("the scenario's faults are sized to a %s TTL, so this verdict says little about the lock at its own lease; "+
		"run the scenario Scaled to the lock's lease (scenarios.Scenario.Scaled, docs/go.md)", history.Span(ttl))
	if lock.Lease > 0 {
		advice = "correct Spec.Lease (the margins' theory reads it)"
	}
	return fmt.Sprintf("%s's leases lasted %s on the server (median of the %d behind the pods' holds), not %s, %s: %s",
		lock.Name, history.Span(median), len(lasted), history.Span(want), declared, advice)
}
