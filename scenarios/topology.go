package scenarios

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
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
	if needs.Sentinel && p.Lock.BringsClient {
		return "skipped: " + p.Lock.Name + " connects to fixed node addresses with its own client; behind Sentinel " +
			"the harness hands out go-redis failover clients (driver protocol v1 has no Sentinel addresses)"
	}
	return ""
}
