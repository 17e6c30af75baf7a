package deployment

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
)

// The Cluster topology: Redis Cluster as production runs it, N shards
// (default 3) of a primary and a replica, the 16384 slots split evenly,
// failovers decided by the nodes themselves after cluster-node-timeout.
// Every link between two nodes is a proxy of its own (cluster_relay.go),
// so a fault can cut a primary from the rest of the cluster while some
// clients still reach it; every pod reaches every node through its own
// link, and its cluster client (go-redis ClusterClient, following MOVED and
// ASK) dials the addresses the cluster announces through ClusterRoute.

// ClusterSlots is the number of hash slots of Redis Cluster.
const ClusterSlots = 16384

// DefaultShards is the Cluster topology's number of shards unless
// ClusterConfig.Shards says otherwise.
const DefaultShards = 3

// MinNodeTimeout is the shortest cluster-node-timeout a cell runs with:
// below it nodes count each other failing between two of their pings.
const MinNodeTimeout = 50 * time.Millisecond

// ClusterConfig tunes the Cluster topology. The zero value gives the
// defaults.
type ClusterConfig struct {
	// Shards is the number of primaries, each with one replica. Default 3.
	Shards int
	// NodeTimeout is cluster-node-timeout: how long a node must not answer
	// before the others count it failing, and how long a primary cut from
	// the majority keeps taking writes. Default 500ms (Redis: 15 s; shorter
	// keeps a cell's failovers within a few leases).
	NodeTimeout time.Duration
}

// Validate reports a config that cannot work.
func (c ClusterConfig) Validate() error {
	if c.Shards < 0 || c.Shards == 1 || c.Shards > 7 {
		// One shard: no other primary to vote a replica in, nowhere to
		// move a slot.
		return fmt.Errorf("%w: cluster shards %d out of range 2..7 (0: the default, %d)", ErrInvalidConfig, c.Shards, DefaultShards)
	}
	if c.NodeTimeout < 0 || (c.NodeTimeout > 0 && c.NodeTimeout < MinNodeTimeout) {
		return fmt.Errorf("%w: cluster node timeout %v: want at least %v", ErrInvalidConfig, c.NodeTimeout, MinNodeTimeout)
	}
	return nil
}

// Scaled returns the config with its defaults filled in and the node
// timeout stretched by k, as a cell stretches its lease.
func (c ClusterConfig) Scaled(k float64) ClusterConfig {
	c = c.withDefaults()
	c.NodeTimeout = time.Duration(float64(c.NodeTimeout) * k)
	return c
}

func (c ClusterConfig) withDefaults() ClusterConfig {
	if c.Shards == 0 {
		c.Shards = DefaultShards
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = 500 * time.Millisecond
	}
	return c
}

// clusterState is what the Cluster topology keeps beyond the nodes.
type clusterState struct {
	mu     sync.Mutex         // the link tables, filled after the relays start
	ids    []string           // node i's cluster id
	srcIP  []string           // node i's bind-source-addr
	client []*relay           // node i's announced client port
	bus    []*relay           // node i's announced bus port
	data   [][]*netfault.Link // [from][to]: replication, MIGRATE
	gossip [][]*netfault.Link // [from][to]: the cluster bus
}

// clusterNodeName names node i by position (its role changes with every
// failover): shard0a is shard 0's first primary, shard0b its replica.
func clusterNodeName(i int) string { return fmt.Sprintf("shard%d%c", i/2, 'a'+rune(i%2)) }

// startCluster starts the nodes, the links between them and the pods'
// links, joins the nodes into one cluster with the slots assigned and a
// replica behind every primary, and waits until every node agrees.
func (c *Deployment) startCluster(ctx context.Context) error {
	cc := c.cfg.Cluster.withDefaults()
	n := 2 * cc.Shards
	cs := &clusterState{}
	c.cluster = cs
	cs.data, cs.gossip = make([][]*netfault.Link, n), make([][]*netfault.Link, n)
	for i := range n {
		cs.srcIP = append(cs.srcIP, "127.0.0."+strconv.Itoa(20+i))
		cs.data[i], cs.gossip[i] = make([]*netfault.Link, n), make([]*netfault.Link, n)
	}
	// The relays start once the tables exist: they read them from their
	// own goroutines (the links inside under cs.mu, filled later).
	for i := range n {
		cr, err := newRelay(cs.pairRoute(cs.data, i))
		if err != nil {
			return err
		}
		cs.client = append(cs.client, cr)
		br, err := newRelay(cs.pairRoute(cs.gossip, i))
		if err != nil {
			return err
		}
		cs.bus = append(cs.bus, br)
	}
	busPorts := make([]int, n)
	for i := range n {
		node, bus, err := c.startClusterNode(ctx, cc, i)
		if err != nil {
			return err
		}
		c.nodes, busPorts[i] = append(c.nodes, node), bus
	}
	if err := c.linkClusterNodes(busPorts); err != nil {
		return err
	}
	for client := range c.cfg.Clients {
		row := make([]*netfault.Link, n)
		for i, node := range c.nodes {
			l, err := c.network.NewLink(fmt.Sprintf("client%d->%s", client, node.Name()), node.Addr())
			if err != nil {
				return err
			}
			row[i] = l
		}
		c.links = append(c.links, row)
	}
	return c.formCluster(ctx, cc)
}

// startClusterNode starts node i on two free ports (clients, bus), again
// on fresh ones while another process takes a port between the pick and
// the bind.
func (c *Deployment) startClusterNode(ctx context.Context, cc ClusterConfig, i int) (backend.RedisNode, int, error) {
	cs := c.cluster
	for attempt := 0; ; attempt++ {
		port, err := backend.FreePort()
		if err != nil {
			return nil, 0, err
		}
		bus, err := backend.FreePort()
		if err != nil {
			return nil, 0, err
		}
		nc := c.cfg.Node
		nc.Name, nc.Port = clusterNodeName(i), port
		nc.ExtraArgs = append(slices.Clone(nc.ExtraArgs), clusterArgs(cc, bus, cs.client[i].Port(), cs.bus[i].Port(), cs.srcIP[i])...)
		node, err := c.cfg.Backend.StartNode(ctx, nc)
		if err == nil {
			return node, bus, nil
		}
		if attempt == 4 || !strings.Contains(strings.ToLower(err.Error()), "address already in use") {
			return nil, 0, err
		}
	}
}

// linkClusterNodes makes the links of every pair of nodes, one for data
// (replication, MIGRATE) and one for the bus, each way.
func (c *Deployment) linkClusterNodes(busPorts []int) error {
	cs := c.cluster
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i, from := range c.nodes {
		for j, to := range c.nodes {
			if i == j {
				continue
			}
			var err error
			name := from.Name() + "->" + to.Name()
			if cs.data[i][j], err = c.network.NewLink(name, to.Addr()); err != nil {
				return err
			}
			if cs.gossip[i][j], err = c.network.NewLink(name+"-bus", loopback(busPorts[j])); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairRoute maps the source address of a connection to node to the link
// of that pair in links; a source that is no other node of the cluster
// (the harness, a pod dialing around its proxies) is refused.
func (cs *clusterState) pairRoute(links [][]*netfault.Link, to int) func(string) (*netfault.Link, bool) {
	return func(ip string) (*netfault.Link, bool) {
		i := slices.Index(cs.srcIP, ip)
		if i < 0 || i == to {
			return nil, false
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		l := links[i][to]
		return l, l != nil
	}
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// clusterArgs is a cluster node's command line: its bus port, the relay
// ports it announces, its source address, and the choices that keep a
// shard a shard (a replica never migrates to another primary).
func clusterArgs(cc ClusterConfig, busPort, clientRelay, busRelay int, srcIP string) []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(busPort),
		"--cluster-node-timeout", strconv.FormatInt(cc.NodeTimeout.Milliseconds(), 10),
		"--cluster-announce-ip", "127.0.0.1",
		"--cluster-announce-port", strconv.Itoa(clientRelay),
		"--cluster-announce-bus-port", strconv.Itoa(busRelay),
		"--bind-source-addr", srcIP,
		"--cluster-allow-replica-migration", "no",
		// A replica keeps the RDB of its last sync unless told not to; a
		// node restarted in the same dir (a container) would load it and
		// come back with old lock keys instead of empty.
		"--rdb-del-sync-files", "yes",
	}
}

// Shards returns the number of shards (0 outside the Cluster topology).
func (c *Deployment) Shards() int {
	if c.cluster == nil {
		return 0
	}
	return len(c.nodes) / 2
}

// ShardPeer returns the other node of node i's shard (its replica or its
// primary: replicas never migrate here).
func (c *Deployment) ShardPeer(i int) int { return i ^ 1 }

// ClusterAddr is node i's address as the cluster announces it (what
// CLUSTER SLOTS and MOVED name, and MIGRATE is given).
func (c *Deployment) ClusterAddr(i int) string {
	if c.clusterNodes(i) != nil {
		return ""
	}
	return loopback(c.cluster.client[i].Port())
}

// PeerLinks returns every link between node i and the other nodes, both
// ways, data and bus: disabling them cuts i from the cluster while the
// pods' links to it stay up.
func (c *Deployment) PeerLinks(i int) []*netfault.Link {
	if c.clusterNodes(i) != nil {
		return nil
	}
	var out []*netfault.Link
	for j := range c.nodes {
		if j != i {
			cs := c.cluster
			out = append(out, cs.data[i][j], cs.data[j][i], cs.gossip[i][j], cs.gossip[j][i])
		}
	}
	return out
}

// ReplicationLinkOf returns the link node replica replicates from its
// shard peer through (the data link from it to the peer).
func (c *Deployment) ReplicationLinkOf(replica int) *netfault.Link {
	if c.clusterNodes(replica) != nil {
		return nil
	}
	return c.cluster.data[replica][c.ShardPeer(replica)]
}

// ClusterRoute is what one pod needs to reach the cluster: seed addresses
// (the pod's own links) and Route, which maps an address the cluster
// announces to the pod's own link to that node. An address it does not
// know is refused: a connection around the pod's proxies would escape its
// partitions and pauses.
type ClusterRoute struct {
	Seeds []string
	Route func(addr string) (string, error)
}

// ClusterRoute returns client's way in, or false outside the Cluster
// topology.
func (c *Deployment) ClusterRoute(client int) (ClusterRoute, bool) {
	if c.cluster == nil {
		return ClusterRoute{}, false
	}
	row := c.links[client]
	routes := map[string]string{}
	var r ClusterRoute
	for i, l := range row {
		routes[l.Addr()] = l.Addr()
		routes[c.ClusterAddr(i)] = l.Addr()
		r.Seeds = append(r.Seeds, l.Addr())
	}
	r.Route = routeOnly(routes, "this cluster")
	return r, true
}

// closeCluster ends the relays (after the network, so no proxy dials them).
func (c *Deployment) closeCluster() {
	if c.cluster == nil {
		return
	}
	for _, r := range append(slices.Clone(c.cluster.client), c.cluster.bus...) {
		r.Close()
	}
}
