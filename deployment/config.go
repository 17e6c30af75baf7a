package deployment

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/service"
)

// Config describes a deployment. The zero value is one node, one client.
type Config struct {
	// Topology, default Single.
	Topology Topology
	// Nodes is the number of independent nodes for Independent (default 3).
	// Single always has 1 and PrimaryReplica 2; a different value is an error.
	Nodes int
	// Clients is the number of simulated clients; each gets its own proxy to
	// every slot. Default 1.
	Clients int
	// Node is the template for every node; its Name is replaced.
	Node backend.NodeConfig
	// Proxies configures the embedded toxiproxy.
	Proxies netfault.ProxiesConfig
	// SyncTimeout bounds the replica's initial sync. Default 10s.
	SyncTimeout time.Duration
	// Backend starts the nodes. Required: the command line and lockchaostest
	// choose it (process.Backend, local redis-server processes, by default).
	Backend backend.Backend
	// Sentinel tunes the Sentinels of the Sentinel topology.
	Sentinel SentinelConfig
	// Cluster tunes the Cluster topology (its shards: Nodes is twice that).
	Cluster ClusterConfig
	// Consensus tunes the Consensus topology's members (Nodes: 3, 5 or 7).
	Consensus ConsensusConfig
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch c.Topology {
	case Single, "":
		if c.Nodes > 1 {
			return fmt.Errorf("%w: topology %s has 1 node, not %d", ErrInvalidConfig, Single, c.Nodes)
		}
	case PrimaryReplica, Sentinel:
		if c.Nodes != 0 && c.Nodes != 2 {
			return fmt.Errorf("%w: topology %s has 2 nodes, not %d", ErrInvalidConfig, c.Topology, c.Nodes)
		}
	case Cluster:
		if c.Nodes != 0 && c.Nodes != 2*c.Cluster.withDefaults().Shards {
			return fmt.Errorf("%w: topology %s has 2 nodes per shard, not %d", ErrInvalidConfig, Cluster, c.Nodes)
		}
	case Consensus:
		if c.Nodes != 0 && (c.Nodes < 3 || c.Nodes > 7 || c.Nodes%2 == 0) {
			return fmt.Errorf("%w: topology %s has 3, 5 or 7 members, not %d", ErrInvalidConfig, Consensus, c.Nodes)
		}
		if c.Node.Service != "" && c.Node.Service != service.Etcd {
			return fmt.Errorf("%w: topology %s runs etcd members, not %s", ErrInvalidConfig, Consensus, c.Node.Service.Server())
		}
		if err := c.Consensus.Validate(); err != nil {
			return err
		}
	case Independent:
		if c.Nodes < 0 || c.Nodes > 15 {
			return fmt.Errorf("%w: topology %s: nodes %d out of range 1..15", ErrInvalidConfig, Independent, c.Nodes)
		}
	default:
		return fmt.Errorf("%w: unknown topology %q (valid: %v)", ErrInvalidConfig, string(c.Topology), Topologies)
	}
	if c.Clients < 0 || c.Clients > 1000 {
		return fmt.Errorf("%w: clients %d out of range 1..1000", ErrInvalidConfig, c.Clients)
	}
	if c.SyncTimeout < 0 {
		return fmt.Errorf("%w: negative sync timeout", ErrInvalidConfig)
	}
	if err := c.Node.Validate(); err != nil {
		return err
	}
	if err := c.Sentinel.Validate(); err != nil {
		return err
	}
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	return c.Proxies.Validate()
}

func (c Config) withDefaults() Config {
	if c.Topology == "" {
		c.Topology = Single
	}
	switch c.Topology {
	case Single:
		c.Nodes = 1
	case PrimaryReplica, Sentinel:
		c.Nodes = 2
	case Cluster:
		c.Nodes = 2 * c.Cluster.withDefaults().Shards
	case Independent, Consensus:
		if c.Nodes == 0 {
			c.Nodes = 3
		}
		if c.Topology == Consensus && c.Node.Service == "" {
			c.Node.Service = service.Etcd // the one consensus store lockchaos runs
		}
	}
	if c.Clients == 0 {
		c.Clients = 1
	}
	if c.SyncTimeout == 0 {
		c.SyncTimeout = 10 * time.Second
	}
	return c
}
