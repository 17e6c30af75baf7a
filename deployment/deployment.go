// Package deployment is the Redis deployment a cell runs against, named
// for what it is: the nodes a backend started (one, N independent
// primaries, a primary with a replica, a primary and a replica under
// three Sentinels, or a Redis Cluster of shards), the network links from every pod to every node (one
// per pair, so a fault can aim at one pod, one node or all), the
// replication link, and the moves a failover makes. Faults act through it;
// they never own it.
package deployment

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
)

// Topology is the shape of the Redis deployment under test.
type Topology string

// Topologies.
const (
	// Single is one node: what the naive, token, watchdog and fenced locks use.
	Single Topology = "single"
	// Independent is N unrelated primaries: Redlock's deployment.
	Independent Topology = "independent"
	// PrimaryReplica is a primary with one asynchronous replica whose
	// replication link runs through a proxy. Clients see one address (slot
	// 0), which Failover moves to the replica, as Sentinel or a virtual IP would.
	PrimaryReplica Topology = "primary-replica"
	// Sentinel is a primary and a replica watched by three Sentinels that
	// fail over on their own; clients ask the Sentinels for the primary.
	Sentinel Topology = "sentinel"
	// Cluster is Redis Cluster: shards of a primary and a replica that
	// fail over on their own, every node-to-node link a proxy
	// (cluster.go); clients follow the cluster's redirects.
	Cluster Topology = "cluster"
	// Consensus is a consensus group: three etcd members (raft), each
	// behind a link per pod, every peer link per pair and direction
	// (consensus.go).
	Consensus Topology = "consensus"
)

// Topologies lists the valid topologies, for error messages and help.
var Topologies = []Topology{Single, Independent, PrimaryReplica, Sentinel, Cluster, Consensus}

// Deployment is a set of nodes, the links in front of them, and the
// replication link when there is one. A client reaches "slots": one per
// independent node, or the single service address of a primary + replica.
type Deployment struct {
	cfg     Config
	nodes   []backend.RedisNode
	network netfault.Network
	links   [][]*netfault.Link // [client][slot]
	repl    *netfault.Link
	primary int // index of the node clients are pointed at (PrimaryReplica, Sentinel)

	side      []*netfault.Link    // Sentinel: each data node's sentinel-side proxy
	sentinels []backend.RedisNode // Sentinel: the Sentinel processes
	cluster   *clusterState       // Cluster: ids, relays, the links between nodes
	consensus *consensusState     // Consensus: relays, member ids, peer links
}

// New starts the nodes and links. On error everything already
// started is closed again.
func New(ctx context.Context, cfg Config) (_ *Deployment, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Backend == nil {
		// Chosen once, by the command line or lockchaostest, not here.
		return nil, fmt.Errorf("%w: no backend (Config.Backend is required)", ErrInvalidConfig)
	}
	cfg = cfg.withDefaults()
	c := &Deployment{cfg: cfg}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	if c.network, err = newNetwork(cfg); err != nil {
		return nil, err
	}
	switch cfg.Topology {
	case Sentinel:
		err = c.startSentinel(ctx)
	case Cluster:
		err = c.startCluster(ctx)
	case Consensus:
		err = c.startConsensus(ctx)
	default:
		err = c.startNodes(ctx)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// startNodes starts the nodes of the other topologies, the pods' links
// and, behind a replica, the replication link.
func (c *Deployment) startNodes(ctx context.Context) error {
	cfg := c.cfg
	for i := range cfg.Nodes {
		nc := cfg.Node
		nc.Name = fmt.Sprintf("node%d", i)
		if cfg.Topology == PrimaryReplica {
			nc.Name = [...]string{"primary", "replica"}[i]
		}
		n, err := cfg.Backend.StartNode(ctx, nc)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	slots := c.Slots()
	for client := range cfg.Clients {
		row := make([]*netfault.Link, slots)
		for s := range slots {
			l, err := c.network.NewLink(fmt.Sprintf("client%d->%s", client, c.nodes[s].Name()), c.nodes[s].Addr())
			if err != nil {
				return err
			}
			row[s] = l
		}
		c.links = append(c.links, row)
	}
	if cfg.Topology == PrimaryReplica {
		var err error
		if c.repl, err = c.network.NewLink("replica->primary", c.nodes[0].Addr()); err != nil {
			return err
		}
		if err := c.nodes[1].ReplicaOf(ctx, c.repl.Addr()); err != nil {
			return err
		}
		if err := waitSynced(ctx, c.nodes[1], c.nodes[0], cfg.SyncTimeout); err != nil {
			return err
		}
	}
	return nil
}

// newNetwork makes the cell's network: the backend's own, else the
// embedded toxiproxy. On error it returns a nil interface, never a typed
// nil (a nil *Proxies in a Network is not == nil, and Close would call it).
func newNetwork(cfg Config) (netfault.Network, error) {
	if nb, ok := cfg.Backend.(backend.NetworkBackend); ok {
		n, err := nb.NewNetwork()
		if err != nil {
			return nil, err
		}
		return n, nil
	}
	p, err := netfault.NewProxies(cfg.Proxies)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Topology returns the deployment's topology.
func (c *Deployment) Topology() Topology { return c.cfg.Topology }

// Nodes returns every node (primary first for PrimaryReplica).
func (c *Deployment) Nodes() []backend.RedisNode { return c.nodes }

// Node returns node i.
func (c *Deployment) Node(i int) backend.RedisNode { return c.nodes[i] }

// Clients returns the number of clients the deployment has links for.
func (c *Deployment) Clients() int { return c.cfg.Clients }

// Slots returns how many addresses each client sees.
func (c *Deployment) Slots() int {
	if c.cfg.Topology == PrimaryReplica {
		return 1
	}
	return c.cfg.Nodes
}

// LockNode reports whether pods write their lock straight to n: a slot of
// a single-node or independent deployment, or an etcd member. Behind a replica or Sentinel
// the node a pod writes to moves with failovers, so none is named.
func (c *Deployment) LockNode(n backend.RedisNode) bool {
	if c.cfg.Topology != Single && c.cfg.Topology != Independent && c.cfg.Topology != Consensus {
		return false
	}
	for _, m := range c.nodes {
		if m == n {
			return true
		}
	}
	return false
}

// netfault.Link returns the proxy from client to slot.
func (c *Deployment) Link(client, slot int) *netfault.Link { return c.links[client][slot] }

// ClientLinks returns every link of one client (to cut one pod off).
func (c *Deployment) ClientLinks(client int) []*netfault.Link { return c.links[client] }

// SlotLinks returns every client's link to one slot (to cut one node off).
func (c *Deployment) SlotLinks(slot int) []*netfault.Link {
	out := make([]*netfault.Link, 0, len(c.links))
	for _, row := range c.links {
		out = append(out, row[slot])
	}
	return out
}

// ClientAddrs returns the addresses client should dial, one per slot.
func (c *Deployment) ClientAddrs(client int) []string {
	out := make([]string, 0, c.Slots())
	for _, l := range c.links[client][:c.Slots()] {
		out = append(out, l.Addr())
	}
	return out
}

// ReplicationLink returns the replica's link to the primary, or nil.
func (c *Deployment) ReplicationLink() *netfault.Link { return c.repl }

// Primary returns the node clients are pointed at: for PrimaryReplica the
// current primary (the former replica after a Failover), else node 0.
func (c *Deployment) Primary() backend.RedisNode { return c.nodes[c.primary] }

// Replica returns the current replica (nil unless PrimaryReplica or
// Sentinel).
func (c *Deployment) Replica() backend.RedisNode {
	if c.cfg.Topology != PrimaryReplica && c.cfg.Topology != Sentinel {
		return nil
	}
	return c.nodes[1-c.primary]
}

// Failover promotes the replica and moves every client's service address to
// it, the way Sentinel does: the replication link is cut first (whatever it
// still buffers is lost, as when a primary dies with writes in flight), then
// REPLICAOF NO ONE, then the clients' proxies are repointed (their open
// connections close and they reconnect to the new primary). It does not
// kill the old primary: compose with Node.Kill for that.
func (c *Deployment) Failover(ctx context.Context) error {
	if err := c.PromoteReplica(ctx); err != nil {
		return err
	}
	return c.MoveService()
}

// PromoteReplica is Failover's first half: cut replication and promote the
// replica, clients still pointed at the old primary. What the promoted
// node holds can be read between the two halves, before any client writes.
func (c *Deployment) PromoteReplica(ctx context.Context) error {
	if c.cfg.Topology != PrimaryReplica {
		return fmt.Errorf("failover on %s: %w", c.cfg.Topology, ErrTopology)
	}
	if err := c.repl.Disable(); err != nil {
		return err
	}
	return c.Replica().Promote(ctx)
}

// MoveService is Failover's second half: repoint every client's proxy to
// the promoted replica, which becomes the primary.
func (c *Deployment) MoveService() error {
	if c.cfg.Topology != PrimaryReplica {
		return fmt.Errorf("failover on %s: %w", c.cfg.Topology, ErrTopology)
	}
	replica := c.Replica()
	for _, l := range c.SlotLinks(0) {
		if err := l.Repoint(replica.Addr()); err != nil {
			return err
		}
	}
	c.primary = 1 - c.primary
	return nil
}

// Rejoin brings the former primary back after a Failover as the replica of
// the new primary (restarted empty if it was killed), through the same
// replication link, so the next Failover can go the other way.
func (c *Deployment) Rejoin(ctx context.Context) error {
	if c.cfg.Topology != PrimaryReplica {
		return fmt.Errorf("rejoin on %s: %w", c.cfg.Topology, ErrTopology)
	}
	old := c.Replica()
	if old.State() == backend.NodeKilled {
		if err := old.Start(ctx); err != nil {
			return err
		}
	}
	if err := c.repl.Repoint(c.Primary().Addr()); err != nil {
		return err
	}
	if err := c.repl.Enable(); err != nil {
		return err
	}
	if err := old.ReplicaOf(ctx, c.repl.Addr()); err != nil {
		return err
	}
	return waitSynced(ctx, old, c.Primary(), c.cfg.SyncTimeout)
}

// HealAll removes every toxic and re-enables every link.
func (c *Deployment) HealAll() error {
	var errs []error
	for _, l := range c.network.Links() {
		errs = append(errs, l.Heal())
	}
	return errors.Join(errs...)
}

// netfault.Proxies returns the embedded toxiproxy (for its API address), or nil
// when the backend brings its own network.
func (c *Deployment) Proxies() *netfault.Proxies {
	p, _ := c.network.(*netfault.Proxies)
	return p
}

// netfault.Dialer returns how clients reach the links' addresses: nil for a real
// network (dial them as they are), the simulation's in-memory dial else.
func (c *Deployment) Dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d, ok := c.network.(netfault.Dialer); ok {
		return d.DialContext
	}
	return nil
}

// Close stops the proxies, kills every node and removes their temp dirs.
func (c *Deployment) Close() error {
	var errs []error
	// Sentinels first: they would fail over as the nodes go.
	for _, s := range c.sentinels {
		errs = append(errs, s.Close())
	}
	if c.network != nil {
		errs = append(errs, c.network.Close())
	}
	c.closeCluster()
	c.closeConsensus()
	for _, n := range c.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}
