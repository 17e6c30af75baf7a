package scenarios

import (
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// The Redis Cluster rows (issue 37), their expectations decided from the
// cluster specification before any cell ran:
//
//   - replication is asynchronous and "last failover wins": a lock key
//     written to a primary that dies (or is cut off, or is replaced by
//     force) before its replica has it is gone on the promoted replica,
//     and another pod takes the lock while its holder works on: the
//     token locks (with or without a watchdog) and the naive one are
//     unsafe there, as on Sentinel;
//   - token-wait asks the replica to acknowledge (WAIT 1) before it
//     answers acquired: an acknowledged key survives a promotion, and a
//     primary cut off from its replica cannot get the acknowledgement;
//   - fenced keeps its counter on the shard, where a failover can take it
//     back: a new holder may draw the fence a lost holder still works
//     with, and a resource that takes an equal fence takes both writes —
//     reported, not gated, as on Sentinel;
//   - the safe handover (CLUSTER FAILOVER without an option) waits for the
//     replica to catch up while the primary holds its clients, and a slot
//     migration moves each key with its remaining TTL in one MIGRATE: both
//     are expected safe for every lock;
//   - Redlock needs independent servers (not applicable, topology.go).
//
// A disagreement with a measurement is a finding, not a tuning knob.

// clusterFailoverTimes are the timings of the rows where the cluster
// fails over by itself: a failover takes cluster-node-timeout (500 ms)
// to suspect, a failure report to agree, then an election delay of 500 ms
// plus up to 500 ms at random that no setting shortens: 1.0-1.5 s
// measured quiet. The TTL of 2.5 s lets the fresh holder (0.9 TTL) still
// work when the replica is promoted.
func clusterFailoverTimes(s Scenario) Scenario {
	s.Topology = deployment.Cluster
	s.TTL, s.WorkMin, s.WorkMax = ms(2500), ms(1200), ms(1600)
	s.GapMin, s.GapMax, s.Duration = ms(300), ms(600), 10*time.Second
	// token-wait's WAIT gets half the call timeout: 500 ms, past the
	// manual failovers' replication lag.
	s.CallTimeout = ms(1000)
	s.Floor = FloorOverride{MinExercised: &twoExercised, MinCycles: &tenCycles}
	return s
}

// manualLag is the manual failovers' replication lag: longer than the
// election a forced failover still holds (44-100 ms measured quiet), so
// the fresh key is in flight when the replica takes over; the same lag
// under the safe handover shows what its wait for the replica is worth.
const manualLag = 150 * time.Millisecond

// The cluster rows' evidence floor: their faults take seconds each (a
// failover, a move), so a cell sees few of them and few cycles.
var twoExercised, tenCycles = 2, 10

// manualFailover is CLUSTER FAILOVER in mode, replication lagging
// manualLag.
func manualFailover(mode string) faults.Spec {
	return faults.Spec{Kind: "cluster-manual-failover", Params: faults.ClusterManualFailoverParams{Mode: mode, Latency: manualLag}}
}

// clusterLocks maps the cluster's lock rows to their expectations.
func clusterLocks(naive, token, watchdog, wait, fenced Expect) map[string]Expect {
	m := map[string]Expect{lockimpl.NameNaive: naive, lockimpl.NameToken: token, lockimpl.NameTokenWatchdog: watchdog,
		lockimpl.NameTokenWait: wait, lockimpl.NameFenced: fenced}
	for lock, e := range m {
		e.Liveness = Live // every row's faults end, and every lock here has a TTL
		m[lock] = e
	}
	return m
}

// clusterScenarios are the rows that run on Redis Cluster.
func clusterScenarios() []Scenario {
	safe := why(Expect{Safety: Safe}, "no key is lost: nothing the cluster does here drops an acknowledged write")
	lost := why(Expect{Safety: Unsafe}, "asynchronous replication: the fresh key dies with the primary, the promoted "+
		"replica lacks it and another pod takes the lock")
	acked := why(Expect{Safety: Safe}, "WAIT 1: acquired only once the replica has the key, which the promotion keeps")
	fence := why(Expect{Safety: Either}, "the fence counter lives on the shard and can go back on a failover: a "+
		"new holder may draw the fence a lost holder still works with, and a resource that takes an equal fence "+
		"(this one does) takes both writes; safe only when the lost holder never writes again")
	handover := why(Expect{Safety: Safe}, "the safe handover: the primary holds its clients until the replica "+
		"has caught up, so nothing acknowledged is lost")
	moved := why(Expect{Safety: Safe}, "MIGRATE moves the key with its remaining TTL and deletes it at the "+
		"source in one step; ASK and MOVED send the pods after it")
	failover := clusterLocks(lost, lost, lost, acked, fence)
	return []Scenario{{
		Name: "cluster-baseline", Description: "no faults on a 3-shard Redis Cluster (a primary and a replica each)",
		Topology: deployment.Cluster,
		Expect:   clusterLocks(safe, safe, safe, safe, safe),
	}, clusterFailoverTimes(Scenario{
		Name: "cluster-failover", Description: "the lock key's primary dies right after a lock is taken, before its " +
			"replica has the key; the cluster promotes the replica on its own",
		Faults: []faults.Spec{{Kind: "cluster-failover"}},
		Expect: failover,
	}), clusterFailoverTimes(Scenario{
		Name: "cluster-split", Description: "the lock key's primary is cut from the rest of the cluster but not " +
			"from half the pods; the majority promotes the replica, the old primary steps down after the node timeout",
		Faults: []faults.Spec{{Kind: "cluster-split"}},
		Expect: clusterLocks(
			why(Expect{Safety: Unsafe}, "a lock taken on the cut-off primary is not replicated and is lost when "+
				"the replica is promoted"), lost, lost,
			why(Expect{Safety: Safe}, "the cut-off primary's replica cannot acknowledge: WAIT 1 refuses the lock"), fence),
	}), clusterFailoverTimes(Scenario{
		Name:        "cluster-manual-failover",
		Description: "CLUSTER FAILOVER on the lock key's replica right after a lock is taken (the safe handover)",
		Faults:      []faults.Spec{manualFailover("")},
		Expect:      clusterLocks(handover, handover, handover, handover, handover),
	}), clusterFailoverTimes(Scenario{
		Name:        "cluster-manual-failover-force",
		Description: "CLUSTER FAILOVER FORCE on the lock key's replica right after a lock is taken, replication lagging",
		Faults:      []faults.Spec{manualFailover("force")},
		Expect:      failover,
	}), clusterFailoverTimes(Scenario{
		Name:        "cluster-manual-failover-takeover",
		Description: "CLUSTER FAILOVER TAKEOVER on the lock key's replica right after a lock is taken, replication lagging",
		Faults:      []faults.Spec{manualFailover("takeover")},
		Expect:      failover,
	}), {
		Name: "slot-migration", Description: "the lock key's slot moves to another shard while a lock is held " +
			"(MIGRATING and IMPORTING, ASK, MIGRATE, then MOVED)",
		// A move takes the fresh holder's 0.9 TTL: few cycles per cell.
		Topology: deployment.Cluster, TTL: ms(1000), WorkMin: ms(300), WorkMax: ms(600), Duration: 6 * time.Second,
		Floor:  FloorOverride{MinCycles: &tenCycles},
		Faults: []faults.Spec{{Kind: "slot-migration"}},
		Expect: clusterLocks(moved, moved, moved, moved, moved),
	}}
}
