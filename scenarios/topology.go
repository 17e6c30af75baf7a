package scenarios

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
)

// Where a cell runs: the deployment its lock and its faults need
// together, and whether the backend can give it.

// topologyFor decides the deployment from what the lock and the faults
// need, or says why they cannot share one.
func topologyFor(sc Scenario, lock lockimpl.Spec, needs backend.Needs) (deployment.Topology, int, string) {
	faultsNeeding := func(pred func(backend.Needs) bool) string {
		var names []string
		for _, f := range sc.Faults {
			if k, err := faults.LookupKind(f.Kind); err == nil && pred(k.Needs) {
				names = append(names, f.Kind)
			}
		}
		if len(names) == 0 {
			return "the scenario"
		}
		return strings.Join(names, ", ")
	}
	if !lock.Service.IsRedis() {
		return serviceTopology(sc, lock, needs, faultsNeeding)
	}
	if needs.Cluster {
		return clusterTopology(lock, needs, faultsNeeding)
	}
	switch {
	case lock.Nodes > 1 && (needs.Replica || needs.Sentinel):
		return "", 0, fmt.Sprintf("not applicable: %s needs a primary with a replica; %s needs %d independent nodes",
			faultsNeeding(func(n backend.Needs) bool { return n.Replica || n.Sentinel }), lock.Name, lock.Nodes)
	case lock.Nodes > 1:
		return deployment.Independent, lock.Nodes, ""
	case needs.Nodes > 1:
		return "", 0, fmt.Sprintf("not applicable: %s needs %d independent nodes; %s uses %s",
			faultsNeeding(func(n backend.Needs) bool { return n.Nodes > 1 }), needs.Nodes, lock.Name, lock.Describe())
	case lock.NeedsReplica && !needs.Replica && !needs.Sentinel:
		return "", 0, fmt.Sprintf("not applicable: %s needs a replica behind its node; %s runs a single node", lock.Name, sc.Name)
	case needs.Sentinel && needs.Replica:
		return "", 0, fmt.Sprintf("not applicable: %s fails over by the harness's hand; under Sentinel the Sentinels fail over",
			faultsNeeding(func(n backend.Needs) bool { return n.Replica }))
	case needs.Sentinel:
		return deployment.Sentinel, 2, ""
	case needs.Replica:
		return deployment.PrimaryReplica, 2, ""
	}
	return deployment.Single, 1, ""
}

// clusterTopology is the deployment of a Redis lock on Redis Cluster, or
// why the lock and the faults cannot share one.
func clusterTopology(lock lockimpl.Spec, needs backend.Needs,
	faultsNeeding func(func(backend.Needs) bool) string) (deployment.Topology, int, string) {
	switch {
	case lock.Nodes > 1:
		// redsync writes one key name to every pool: on one cluster that
		// is one key on one shard, taken three times over.
		return "", 0, fmt.Sprintf("not applicable: %s needs %d independent Redis servers; a cluster's shards share "+
			"one failure detector and one failover machinery, and the lock writes the same key name to each, "+
			"which one cluster places on one shard", lock.Name, lock.Nodes)
	case needs.Replica || needs.Sentinel:
		return "", 0, fmt.Sprintf("not applicable: %s fails over by the harness's hand or by Sentinel; a cluster "+
			"fails over by itself", faultsNeeding(func(n backend.Needs) bool { return n.Replica || n.Sentinel }))
	case needs.Nodes > 1:
		return "", 0, fmt.Sprintf("not applicable: %s needs %d independent nodes; a cluster serves a key from one shard",
			faultsNeeding(func(n backend.Needs) bool { return n.Nodes > 1 }), needs.Nodes)
	}
	return deployment.Cluster, 2 * deployment.DefaultShards, ""
}

// unsupported says why the backend cannot run the planned cell, or "":
// the backend's own answer (Supports) to what the faults and the lock
// need, then what no backend gives a lock that brings its own client.
func unsupported(p *Plan, needs backend.Needs, b backend.Backend) string {
	needs.RealTime = p.Lock.OutOfProcess
	if p.Topology == deployment.Independent {
		needs.Nodes = max(needs.Nodes, p.Nodes)
	}
	if err := b.Supports(needs); err != nil {
		return "skipped: " + backend.Reason(err)
	}
	if needs.Cluster && p.Lock.BringsClient {
		return "skipped: " + p.Lock.Name + " connects to fixed node addresses with its own client; on a cluster " +
			"the harness hands out go-redis cluster clients (driver protocol v1 has no cluster seed addresses)"
	}
	if needs.Sentinel && p.Lock.BringsClient {
		return "skipped: " + p.Lock.Name + " connects to fixed node addresses with its own client; behind Sentinel " +
			"the harness hands out go-redis failover clients (driver protocol v1 has no Sentinel addresses)"
	}
	return ""
}

// serviceTopology is the deployment of a lock on a service other than
// Redis: one server (PostgreSQL's primary), or a primary and a standby
// for a fault that promotes a replica. Faults that need several
// independent nodes do not apply to a lock that has one; a standby, a
// clock shim or persistence are the backend's to give or refuse
// (Supports), with its own reason.
func serviceTopology(sc Scenario, lock lockimpl.Spec, needs backend.Needs,
	faultsNeeding func(func(backend.Needs) bool) string) (deployment.Topology, int, string) {
	if lock.Service == service.Etcd {
		return etcdTopology(sc, lock, needs, faultsNeeding)
	}
	if needs.Cluster {
		return "", 0, fmt.Sprintf("not applicable: %s runs on Redis Cluster; %s runs on one %s",
			faultsNeeding(func(n backend.Needs) bool { return n.Cluster }), lock.Name, lock.Service.Server())
	}
	if needs.Nodes > 1 {
		return "", 0, fmt.Sprintf("not applicable: %s needs %d independent nodes; %s uses one %s",
			faultsNeeding(func(n backend.Needs) bool { return n.Nodes > 1 }), needs.Nodes, lock.Name, lock.Service.Server())
	}
	if sc.Topology != "" && sc.Topology != deployment.Single {
		return "", 0, fmt.Sprintf("not applicable: %s sets the Redis topology %s; %s runs on one %s",
			sc.Name, sc.Topology, lock.Name, lock.Service.Server())
	}
	if needs.Replica && !needs.Sentinel {
		// A primary and a streaming standby the harness promotes.
		return deployment.PrimaryReplica, 2, ""
	}
	return deployment.Single, 1, ""
}

// etcdTopology is the deployment of an etcd lock: three members, or why
// the scenario's faults cannot run on them. A fault that cuts pods from
// one of several nodes (minority-partition) cuts them from one member;
// replicas, Sentinel and Redis Cluster are Redis's failover machinery,
// which raft replaces.
func etcdTopology(sc Scenario, lock lockimpl.Spec, needs backend.Needs,
	faultsNeeding func(func(backend.Needs) bool) string) (deployment.Topology, int, string) {
	switch {
	case needs.Cluster || needs.Replica || needs.Sentinel:
		return "", 0, fmt.Sprintf("not applicable: %s fails over Redis by hand, by Sentinel or by Redis Cluster; "+
			"%s's members elect their leader by raft", faultsNeeding(func(n backend.Needs) bool {
			return n.Cluster || n.Replica || n.Sentinel
		}), lock.Name)
	case needs.Nodes > lock.Nodes:
		return "", 0, fmt.Sprintf("not applicable: %s needs %d nodes; %s runs on %d etcd members",
			faultsNeeding(func(n backend.Needs) bool { return n.Nodes > lock.Nodes }), needs.Nodes, lock.Name, lock.Nodes)
	case sc.Topology != "" && sc.Topology != deployment.Consensus:
		return "", 0, fmt.Sprintf("not applicable: %s sets the Redis topology %s; %s runs on etcd members",
			sc.Name, sc.Topology, lock.Name)
	}
	return deployment.Consensus, lock.Nodes, ""
}

// nodeConfig is the template of the cell's nodes: its service, and the
// server settings the lock runs with (its spec's, at the cell's TTL).
func nodeConfig(p *Plan) backend.NodeConfig {
	nc := backend.NodeConfig{Service: p.Lock.Service, Clock: p.Clock, Persistence: p.Persistence, Fsync: p.Scenario.Fsync}
	if p.Lock.ServerArgs != nil {
		nc.ExtraArgs = p.Lock.ServerArgs(p.Scenario.TTL)
	}
	return nc
}
