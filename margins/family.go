// Package margins finds how far each lock bends before it breaks: for a
// fault family with a magnitude (a pause's length, a slow critical
// section's, a reply's delay, a clock jump), the smallest magnitude at
// which the lock lets two pods hold at once, searched over batches of
// seeds in simulation (virtual time: a 10 s TTL costs what a 300 ms one
// does), confirmed on real Redis just below and just above, and set
// beside the boundary the lock's design predicts.
package margins

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/internal/suggest"
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
	// Scenario is the catalog scenario whose one fault the magnitude sets.
	Scenario string
	// set puts magnitude m (in the scenario's own, unscaled time) into
	// the fault's spec.
	set func(s *faults.Spec, m time.Duration)
	// prepare adapts the catalog scenario, if the family needs it.
	prepare func(sc *scenarios.Scenario)
}

// Families are the families searched, in the report's order.
var Families = []Family{
	{Name: "pause", Magnitude: "pause length (a stop-the-world pause of the holder)", Scenario: "gc-pause",
		set: func(s *faults.Spec, m time.Duration) { s.Pause = m }},
	{Name: "slow-holder", Magnitude: "critical section length", Scenario: "slow-holder",
		set: func(s *faults.Spec, m time.Duration) { s.Work = m }},
	{Name: "slow-reply", Magnitude: "delay of the reply to a winning acquire", Scenario: "slow-reply",
		set: func(s *faults.Spec, m time.Duration) { s.Delay = m }},
	{Name: "replica-lag", Magnitude: "replication lag before the primary dies and its replica is promoted", Scenario: "failover",
		set: func(s *faults.Spec, m time.Duration) { s.Latency = m }},
	{Name: "clock-jump", Magnitude: "forward jump of the lock node's clock", Scenario: "gc-pause",
		set: func(s *faults.Spec, m time.Duration) { s.Jump = m },
		prepare: func(sc *scenarios.Scenario) {
			// As scenarios/critiques.yaml's clock-jump: holders still hold
			// when the next pod wins what the jump freed.
			sc.Name, sc.WorkMin, sc.WorkMax = "clock-jump", 150*time.Millisecond, 250*time.Millisecond
			sc.Faults = []faults.Spec{{Kind: "clock-jump"}}
		}},
}

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
	sc, err := scenarios.Get(f.Scenario)
	if err != nil {
		return sc, err
	}
	if f.prepare != nil {
		f.prepare(&sc)
	}
	if len(sc.Faults) != 1 {
		return sc, fmt.Errorf("margins: scenario %s has %d faults, want one", sc.Name, len(sc.Faults))
	}
	sc.Faults = append([]faults.Spec(nil), sc.Faults...)
	f.set(&sc.Faults[0], m)
	// Long enough for the fault to land, run its course and be judged.
	sc = sc.WithDefaults()
	sc.Duration = max(sc.Duration, sc.FirstFault+2*m+3*sc.TTL)
	sc.Name = fmt.Sprintf("margin-%s-%dms", f.Name, m.Milliseconds())
	sc.Description = fmt.Sprintf("%s: %s %v", f.Name, f.Magnitude, m)
	return sc, nil
}
