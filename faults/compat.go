package faults

import (
	"context"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"
)

// The names below lived in this package before backends, deployments and
// links got packages of their own. They are kept for one release so code
// that imports them still builds; each says where it lives now.

// Backend starts Redis nodes.
//
// Deprecated: use backend.Backend.
type Backend = backend.Backend

// RedisNode is one Redis server the harness controls.
//
// Deprecated: use backend.RedisNode.
type RedisNode = backend.RedisNode

// NodeConfig describes one Redis server.
//
// Deprecated: use backend.NodeConfig.
type NodeConfig = backend.NodeConfig

// NodeState is what a node is doing now.
//
// Deprecated: use backend.NodeState.
type NodeState = backend.NodeState

// ProcessBackend runs each node as a local redis-server process.
//
// Deprecated: use process.Backend.
type ProcessBackend = process.Backend

// Node is one real redis-server process.
//
// Deprecated: use process.Node.
type Node = process.Node

// Cluster is a deployment: nodes, links, replication.
//
// Deprecated: use deployment.Deployment.
type Cluster = deployment.Deployment

// ClusterConfig describes a deployment.
//
// Deprecated: use deployment.Config.
type ClusterConfig = deployment.Config

// Topology is the shape of the Redis deployment under test.
//
// Deprecated: use deployment.Topology.
type Topology = deployment.Topology

// Link is one path from one client to one node.
//
// Deprecated: use netfault.Link.
type Link = netfault.Link

// Direction says which way a toxic acts on a link.
//
// Deprecated: use netfault.Direction.
type Direction = netfault.Direction

// Deprecated: use the constants of package deployment and netfault.
const (
	Single         = deployment.Single
	Independent    = deployment.Independent
	PrimaryReplica = deployment.PrimaryReplica
	Sentinel       = deployment.Sentinel
	Upstream       = netfault.Upstream
	Downstream     = netfault.Downstream
	Both           = netfault.Both
)

// NewCluster starts a deployment.
//
// Deprecated: use deployment.New.
func NewCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	return deployment.New(ctx, cfg)
}

// FindRedisServer returns the path of the redis-server binary.
//
// Deprecated: use process.FindRedisServer.
func FindRedisServer() (string, error) { return process.FindRedisServer() }

// KillAll closes every node this process started and has not closed.
//
// Deprecated: use backend.KillAll.
func KillAll() int { return backend.KillAll() }

// ErrNoRedisServer means no redis-server binary could be found.
//
// Deprecated: use process.ErrNoRedisServer.
var ErrNoRedisServer = process.ErrNoRedisServer
