package margins

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Families are the families searched, in the report's order. Each sets
// its fault's magnitude and carries its theory: what a lock's design
// predicts under it.
var Families = []Family{
	{Name: "pause", Magnitude: "pause length (a stop-the-world pause of the holder)", Scenario: "gc-pause",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.ClientPauseParams{Pause: m}
		},
		theory: fenceStops(predictPause)},
	{Name: "slow-holder", Magnitude: "critical section length", Scenario: "slow-holder",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.SlowHolderParams{Work: m}
		},
		theory: fenceStops(predictSlowHolder)},
	{Name: "slow-reply", Magnitude: "delay of the reply to a winning acquire", Scenario: "slow-reply",
		set: setReplyDelay, theory: fenceStops(predictReply)},
	{Name: "one-way-loss", Magnitude: "length of a one-way loss (Redis's replies dropped) through a holder's critical section",
		Scenario: "client-partition",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.ClientPartitionParams{Work: m, Direction: netfault.Downstream}
		},
		theory: fenceStops(predictOneWayLoss)},
	{Name: "latency", Magnitude: "latency added to every packet of one pod's links, both ways", Scenario: "baseline",
		From: 0.25, Cap: 3, set: setLatency,
		prepare: func(sc *scenarios.Scenario) {
			// Four pods, not eight: the slowed pod's SETs land a latency
			// late, and among eight it rarely wins the key it is slowed on.
			sc.Name, sc.Clients, sc.Faults = "latency", 4, []faults.Spec{{Kind: "latency"}}
		},
		theory: fenceStops(predictLatency)},
	{Name: "replica-lag", Magnitude: "replication lag before the primary dies and its replica is promoted", Scenario: "failover",
		From: 0.05,
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.FailoverParams{Latency: m}
		},
		theory: predictLag},
	{Name: "restart-delay", Magnitude: "how long a killed node stays down before it restarts empty", Scenario: "node-restart",
		Below: true,
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.NodeRestartParams{Delay: m}
		},
		prepare: func(sc *scenarios.Scenario) {
			// The catalog's node-restart runs at a 500 ms TTL; a margin is
			// read against the default one, the critical sections in the
			// same proportion to it.
			sc.TTL, sc.WorkMin, sc.WorkMax = lockimpl.DefaultTTL, 60*time.Millisecond, 150*time.Millisecond
			sc.GapMin, sc.GapMax = 6*time.Millisecond, 24*time.Millisecond
		},
		// Fencing included: its counter lives on the node that forgets.
		theory: predictRestart},
	// The critiques' clock-jump scenario (scenarios/critiques.yaml).
	{Name: "clock-jump", Magnitude: "forward jump of the lock node's clock", Scenario: "clock-jump",
		set: func(sc *scenarios.Scenario, m time.Duration) {
			sc.Faults[0].Params = faults.ClockJumpParams{Jump: m}
		},
		theory: fenceStops(predictJump)},
}

// fenceStops is the theory of a fault whose stale holder a fence stops:
// a fenced lock never breaks under it; others as t says.
func fenceStops(t theory) theory {
	return func(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
		if lock.Fencing {
			return Prediction{Why: "the resource rejects a fence below the highest it has seen: a stale holder's writes " +
				"are refused, whatever the timing (Kleppmann's remedy)"}
		}
		return t(lock, sc, lease)
	}
}

// leaseLeft is the interval of a fault that must outlast what was left of
// the lease: it lands while the holder works, 0 to WorkMax after its
// acquire returned, so lease - that, and extra past it.
func leaseLeft(sc scenarios.Scenario, lease, extra time.Duration) Prediction {
	return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + extra}
}

func predictPause(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	p := leaseLeft(sc, lease, retryGap)
	p.Why = fmt.Sprintf("a lease without fencing breaks when the pause outlasts what was left of it (%v less the 0-%v since "+
		"the acquire) and another pod takes the key (within a %v retry gap)", lease, sc.WorkMax, retryGap)
	if lock.Renews {
		p.Why += "; the pause freezes the watchdog too, and the fault lands before its first renewal"
	}
	return p
}

func predictSlowHolder(lock lockimpl.Spec, _ scenarios.Scenario, lease time.Duration) Prediction {
	if lock.Renews {
		return Prediction{Why: "the watchdog renews the lease for as long as the holder works"}
	}
	return Prediction{Breaks: true, Lo: lease, Hi: lease + retryGap,
		Why: fmt.Sprintf("the critical section outlasts the %v lease, counted from the acquire, and another pod takes the key", lease)}
}

// setReplyDelay: the fault heals when the first acquire returns, or after
// Duration: long enough that the winner's own reply, sent when its SET
// lands (up to one delay into the fault, while every pod waits for a
// reply), comes back before the heal flushes it; and a call waits for it.
func setReplyDelay(sc *scenarios.Scenario, m time.Duration) {
	sc.Faults[0].Params = faults.SlowReplyParams{Delay: m, Duration: 2*m + sc.TTL}
	sc.CallTimeout = max(sc.CallTimeout, 2*m+sc.TTL)
	// The next fault must not begin while the late winner still works on
	// (half a TTL) or its lease can lapse: every pod would be waiting for a
	// reply held back again, nobody could take the key, and the boundary
	// would be the gap's, not the lock's.
	sc.GapMin, sc.GapMax = sc.GapMin+3*sc.TTL/2, sc.GapMax+3*sc.TTL/2
	sc.Duration = max(sc.Duration, sc.FirstFault+3*(2*m+sc.GapMax))
}

// predictReply: the late winner believes from its reply, D after its SET
// landed, and then works for the fault's Work (half the TTL).
func predictReply(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	ttl := sc.TTL
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

// predictOneWayLoss: through the loss the holder's commands land but it
// hears nothing: its first unanswered call gives up its connection, and a
// new one cannot even finish its handshake, so no later call is sent at
// all.
func predictOneWayLoss(lock lockimpl.Spec, _ scenarios.Scenario, lease time.Duration) Prediction {
	p := Prediction{Breaks: true, Lo: lease, Hi: lease + retryGap,
		Why: fmt.Sprintf("the holder works on through the loss while its %v lease lapses, and another pod takes the key",
			lease)}
	if lock.Renews {
		// Only slow holders renew, and every slow holder is cut off: the
		// renewal script is never loaded on the node.
		p.Why += "; the watchdog's first renewal is an EVALSHA the node has not seen: it lands, but its NOSCRIPT " +
			"reply is lost, so the EVAL that would renew is never sent"
	}
	return p
}

// setLatency: a round trip is two latencies: a call must be allowed to
// wait for it, and the slowed pod to acquire and work within it.
func setLatency(sc *scenarios.Scenario, m time.Duration) {
	sc.CallTimeout = max(sc.CallTimeout, 2*m+sc.CallTimeout)
	// A cycle of the slowed pod: its SET lands a latency late, its answer
	// a second, its release a third after its work.
	d := max(sc.TTL, 3*m+sc.WorkMax+sc.TTL)
	sc.Faults[0].Params = faults.LatencyParams{Latency: m, Duration: d}
	// Three windows at least: the slowed pod wins the key in some.
	sc.Duration = max(sc.Duration, sc.FirstFault+3*(d+sc.GapMax)+2*sc.TTL)
}

// predictLatency: both ways, a SET lands one latency after it was sent
// and the holder hears it one more later; it works, then releases.
func predictLatency(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	if limit, why := quorumLimit(lock, sc.TTL); limit > 0 && limit/2 <= lease-sc.WorkMax {
		return Prediction{Why: why + ": an acquire whose round trip (two latencies) takes longer is given up, and one " +
			"that does not leaves its holder more lease than its critical section needs"}
	}
	if lock.BlindRelease {
		// Its DEL, sent after the work, lands a latency later still: two
		// latencies and the work after the lease began.
		return Prediction{Breaks: true, Lo: (lease - sc.WorkMax) / 2, Hi: (lease + retryGap) / 2,
			Why: fmt.Sprintf("its unconditional DEL lands two latencies and the work after its SET did: once 2 x latency + "+
				"work > %v, the next pod's key is deleted under it and a third pod takes the key (half the latency a "+
				"token lock takes)", lease)}
	}
	return Prediction{Breaks: true, Lo: lease - sc.WorkMax, Hi: lease + retryGap,
		Why: fmt.Sprintf("the holder believes one latency after its SET landed and works up to %v more: it outlives "+
			"its %v lease once latency + work > %v", sc.WorkMax, lease, lease)}
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

func predictJump(lock lockimpl.Spec, sc scenarios.Scenario, lease time.Duration) Prediction {
	p := leaseLeft(sc, lease, retryGap)
	p.Why = fmt.Sprintf("a forward jump longer than what was left of the %v lease expires the key at once "+
		"while its holder works on", lease)
	if lock.Nodes > 1 {
		p.Why = "one node's jump ends the holder's key there early; on a bare majority that leaves it a minority, " +
			"so the jump must outlast what was left of the lease, as on one node"
	}
	return p
}
