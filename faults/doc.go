// Package faults owns everything the harness breaks on purpose: the Redis
// nodes (real redis-server processes), the network links between simulated
// clients and those nodes (an embedded toxiproxy, one proxy per client-node
// pair plus one per replication link), and the topologies built from them.
//
// Every process, proxy and temp dir this package creates is registered so
// that Cluster.Close, Node.Close and, as a last resort, KillAll (for a signal
// handler) leave nothing behind.
package faults

import "errors"

// Sentinel errors. Callers test them with errors.Is; the wrapping error says
// which node or link and why.
var (
	// ErrNoRedisServer means no redis-server binary could be found.
	ErrNoRedisServer = errors.New("faults: redis-server not found")
	// ErrNodeStart means redis-server was found but did not come up.
	ErrNodeStart = errors.New("faults: redis-server did not start")
	// ErrNodeState means the operation does not fit the node's state
	// (for example Resume on a node that is not paused).
	ErrNodeState = errors.New("faults: node is not in a state for this operation")
	// ErrClosed means the node, link or cluster was already closed.
	ErrClosed = errors.New("faults: closed")
	// ErrTopology means the operation needs a topology this cluster lacks
	// (for example Failover without a replica).
	ErrTopology = errors.New("faults: operation not supported by this topology")
	// ErrInvalidConfig means a Config failed Validate.
	ErrInvalidConfig = errors.New("faults: invalid config")
)
