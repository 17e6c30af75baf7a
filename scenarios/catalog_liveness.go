package scenarios

import (
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// The liveness rows: a holder that dies or hangs holding the lock (the
// article's OOMKilled pod), and what each lock's design says comes of its
// key. Every lock with a TTL recovers within the bound after a crash, the
// watchdog too, since it died with its pod; no-ttl's key stays forever
// and long-ttl's for ten TTLs, both stuck. When the worker hangs while
// its process lives on, a TTL still frees the key, but the watchdog goes
// on renewing for a holder that will never finish: stuck for as long as
// the process lives. Nobody who crashed or hung touches the resource
// again, so every cell is safe.

// lifetimeLocks adds the two lease-time locks to a scenario's
// expectations.
func lifetimeLocks(m map[string]Expect, noTTL, longTTL Expect) map[string]Expect {
	m[lockimpl.NameNoTTL], m[lockimpl.NameLongTTL] = noTTL, longTTL
	return m
}

func livenessScenarios() []Scenario {
	crashGaps := func(s Scenario) Scenario {
		// A crash or a hang takes a pod out: gaps long enough that each
		// recovery is seen before the next pod goes.
		s.GapMin, s.GapMax = ms(300), ms(500)
		return s
	}
	return []Scenario{
		crashGaps(Scenario{
			Name:        "pod-crash",
			Description: "a holder dies for good while holding (OOMKilled): nothing it left running reaches Redis again",
			Faults:      []faults.Spec{{Kind: "pod-crash"}},
			Expect: lifetimeLocks(expect(Safe, Safe, Safe, Safe, Safe),
				andStuck(Safe), andStuck(Safe)),
		}),
		crashGaps(Scenario{
			Name:        "pod-crash-restart",
			Description: "a holder dies while holding and restarts 200 ms later as a fresh pod (a new lock from the spec)",
			Faults:      []faults.Spec{{Kind: "pod-crash", Params: faults.PodCrashParams{Restart: ms(200)}}},
			Expect: lifetimeLocks(expect(nil, Safe, Safe, Safe, nil),
				andStuck(Safe), andStuck(Safe)),
		}),
		crashGaps(Scenario{
			Name:        "abandoned-lease",
			Description: "a holder's worker hangs holding the lock and never releases, while its process (and its watchdog) lives on",
			Faults:      []faults.Spec{{Kind: "abandoned-lease"}},
			Expect: lifetimeLocks(expect(Safe, Safe, andStuck(Safe), Safe, Safe),
				andStuck(Safe), andStuck(Safe)),
		}),
	}
}
