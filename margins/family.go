// Package margins finds how far each lock bends before it breaks: for a
// fault family with a magnitude (a pause's length, a slow critical
// section's, a reply's delay, a one-way loss's, a latency, a replica's
// lag, a clock jump), the smallest magnitude at which the lock lets two
// pods hold at once, and for a node restart the longest delay that still
// does; searched over batches of seeds in simulation (virtual time: a 10 s
// TTL costs what a 300 ms one does) or, where the simulation cannot run
// the case, on real Redis with fewer, wider probes; confirmed on real
// Redis just below and just above; set beside the boundary the lock's
// design predicts. Two liveness margins go with them: how long a crashed
// holder's key stays taken, and how long a free key waits while a
// minority of nodes is silently gone.
package margins

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/internal/suggest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// ErrUnknownFamily is an unknown family name (the error lists the valid
// ones).
var ErrUnknownFamily = errors.New("margins: unknown fault family")

// Family is a fault with a magnitude: the scenario it varies and how a
// magnitude sets its fault.
type Family struct {
	Name      string // "pause"
	Magnitude string // what varies, in words: "pause length"
	// Scenario is the built-in scenario (the catalog's or the critiques')
	// whose one fault the magnitude sets.
	Scenario string
	// Below says the lock breaks at magnitudes up to its boundary and
	// holds past it (a node restarted sooner than a lease lapses), not
	// from its boundary up.
	Below bool
	// From is the search's first rung, in TTLs (0: 0.5; a Below family
	// starts at 0): where a lock may break at any magnitude, the ladder
	// starts near nothing.
	From float64
	// Cap, if set, is the family's own largest magnitude, in TTLs, below
	// the search's: a latency of three TTLs each way is a round trip of
	// six, past which nothing but the cells' length grows.
	Cap float64
	// set puts magnitude m (in the scenario's own, unscaled time) into
	// the scenario's one fault, and stretches whatever else must stretch
	// with it (a call timeout the fault must not cut short).
	set func(sc *scenarios.Scenario, m time.Duration)
	// prepare adapts the catalog scenario, if the family needs it.
	prepare func(sc *scenarios.Scenario)
	// theory is what a lock's design predicts under the family, given the
	// lease it actually grants (Predict has ruled out one that never
	// expires).
	theory theory
}

// theory predicts a lock's boundary in scenario sc (its times the run's),
// its lease lease.
type theory func(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction

// FamilyNamed returns the family called name.
func FamilyNamed(name string) (Family, error) {
	var names []string
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	hint := ""
	if c := suggest.Closest(name, names); c != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", c)
	}
	return Family{}, fmt.Errorf("%w %q%s; want one of %s", ErrUnknownFamily, name, hint, strings.Join(names, ", "))
}

// scenario is the family's scenario with magnitude m, in the catalog's
// time (the run stretches it to the TTL asked for).
func (f Family) scenario(m time.Duration) (scenarios.Scenario, error) {
	sc, err := scenarios.Named(f.Scenario)
	if err != nil {
		return sc, err
	}
	if f.prepare != nil {
		f.prepare(&sc)
	}
	if len(sc.Faults) != 1 {
		return sc, fmt.Errorf("margins: scenario %s has %d faults, want one", sc.Name, len(sc.Faults))
	}
	sc.Faults = slices.Clone(sc.Faults)
	sc = sc.WithDefaults()
	f.set(&sc, m+tieBreak)
	// Long enough for the fault to land, run its course and be judged.
	sc.Duration = max(sc.Duration, sc.FirstFault+2*m+3*sc.TTL)
	sc.Name = fmt.Sprintf("margin-%s-%dms", f.Name, m.Milliseconds())
	sc.Description = fmt.Sprintf("%s: %s %v", f.Name, f.Magnitude, m)
	return sc, nil
}

// tieBreak is added to every magnitude run. The simulation has no network
// delay, so a magnitude of exactly one TTL ends a critical section at the
// very virtual instant its lease expires, and which of the two happens
// first is goroutine order: the same seed broke 2 runs of 20, then 1.
// Off the TTL's grid by a few microseconds, every run has one order.
const tieBreak = 13 * time.Microsecond
