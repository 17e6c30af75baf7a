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
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/internal/suggest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/netfault"
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
}

// Families are the families searched, in the report's order.
var Families = []Family{
	{Name: "pause", Magnitude: "pause length (a stop-the-world pause of the holder)", Scenario: "gc-pause",
		set: func(sc *scenarios.Scenario, m time.Duration) { sc.Faults[0].Pause = m }},
	{Name: "slow-holder", Magnitude: "critical section length", Scenario: "slow-holder",
		set: func(sc *scenarios.Scenario, m time.Duration) { sc.Faults[0].Work = m }},
	{Name: "slow-reply", Magnitude: "delay of the reply to a winning acquire", Scenario: "slow-reply",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			// The fault heals when the first acquire returns, or after
			// Duration: long enough that the winner's own reply, sent when
			// its SET lands (up to one delay into the fault, while every
			// pod waits for a reply), comes back before the heal flushes
			// it; and a call waits for it.
			sc.Faults[0].Delay, sc.Faults[0].Duration = m, 2*m+sc.TTL
			sc.CallTimeout = max(sc.CallTimeout, 2*m+sc.TTL)
			// The next fault must not begin while the late winner still
			// works on (half a TTL) or its lease can lapse: every pod would
			// be waiting for a reply held back again, nobody could take the
			// key, and the boundary would be the gap's, not the lock's.
			sc.GapMin, sc.GapMax = sc.GapMin+3*sc.TTL/2, sc.GapMax+3*sc.TTL/2
			sc.Duration = max(sc.Duration, sc.FirstFault+3*(2*m+sc.GapMax))
		}},
	{Name: "one-way-loss", Magnitude: "length of a one-way loss (Redis's replies dropped) through a holder's critical section",
		Scenario: "client-partition",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Work, sc.Faults[0].Direction = m, netfault.Downstream
		}},
	{Name: "latency", Magnitude: "latency added to every packet of one pod's links, both ways", Scenario: "baseline",
		From: 0.25, Cap: 3,
		set: func(sc *scenarios.Scenario, m time.Duration) {
			// A round trip is two latencies: a call must be allowed to wait
			// for it, and the slowed pod to acquire and work within it.
			sc.Faults[0].Latency = m
			sc.CallTimeout = max(sc.CallTimeout, 2*m+sc.CallTimeout)
			// A cycle of the slowed pod: its SET lands a latency late, its
			// answer a second, its release a third after its work.
			sc.Faults[0].Duration = max(sc.TTL, 3*m+sc.WorkMax+sc.TTL)
			// Three windows at least: the slowed pod wins the key in some.
			sc.Duration = max(sc.Duration, sc.FirstFault+3*(sc.Faults[0].Duration+sc.GapMax)+2*sc.TTL)
		},
		prepare: func(sc *scenarios.Scenario) {
			// Four pods, not eight: the slowed pod's SETs land a latency
			// late, and among eight it rarely wins the key it is slowed on.
			sc.Name, sc.Clients, sc.Faults = "latency", 4, []faults.Spec{{Kind: "latency"}}
		}},
	{Name: "replica-lag", Magnitude: "replication lag before the primary dies and its replica is promoted", Scenario: "failover",
		From: 0.05,
		set:  func(sc *scenarios.Scenario, m time.Duration) { sc.Faults[0].Latency = m }},
	{Name: "restart-delay", Magnitude: "how long a killed node stays down before it restarts empty", Scenario: "node-restart",
		Below: true,
		set:   func(sc *scenarios.Scenario, m time.Duration) { sc.Faults[0].Delay = m },
		prepare: func(sc *scenarios.Scenario) {
			// The catalog's node-restart runs at a 500 ms TTL; a margin is
			// read against the default one, the critical sections in the
			// same proportion to it.
			sc.TTL, sc.WorkMin, sc.WorkMax = lockimpl.DefaultTTL, 60*time.Millisecond, 150*time.Millisecond
			sc.GapMin, sc.GapMax = 6*time.Millisecond, 24*time.Millisecond
		}},
	{Name: "clock-jump", Magnitude: "forward jump of the lock node's clock", Scenario: "gc-pause",
		set: func(sc *scenarios.Scenario, m time.Duration) { sc.Faults[0].Jump = m },
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
