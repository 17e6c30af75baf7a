package deployment

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/redis/go-redis/v9"
)

// The Sentinel topology: a primary and a replica watched by three real
// Sentinels (`redis-server --sentinel`), which fail over on their own
// timing. Clients find the primary by asking the Sentinels, every
// connection through the pod's own proxies.
//
// Every data node sits behind a "sentinel-side" proxy and announces that
// proxy's address (replica-announce-ip/port): the Sentinels monitor it and
// the replica replicates through it, so a lag on the primary's side proxy
// holds fresh writes back from the replica, and disabling it cuts the
// primary off from Sentinels and replica at once. Sentinel reports those
// side addresses to clients; each pod's dialer routes them to the pod's
// own link to the same node (SentinelRoute).

// SentinelMaster is the name the Sentinels monitor the primary under.
const SentinelMaster = "lockchaos"

// SentinelConfig tunes the Sentinels. The zero value gives the defaults.
type SentinelConfig struct {
	// DownAfter is down-after-milliseconds: how long the primary must not
	// answer before a Sentinel thinks it down. Default 200ms (Redis: 30s;
	// shorter keeps a cell's failovers within a lease of a few seconds).
	DownAfter time.Duration
	// FailoverTimeout is failover-timeout. Default 1s.
	FailoverTimeout time.Duration
}

// Validate reports a config that cannot work.
func (c SentinelConfig) Validate() error {
	if c.DownAfter < 0 || c.FailoverTimeout < 0 {
		return fmt.Errorf("%w: negative sentinel timing %+v", ErrInvalidConfig, c)
	}
	return nil
}

// Scaled returns the config with its defaults filled in and both times
// stretched by k, as a cell stretches its lease on a slower machine.
func (c SentinelConfig) Scaled(k float64) SentinelConfig {
	c = c.withDefaults()
	c.DownAfter = time.Duration(float64(c.DownAfter) * k)
	c.FailoverTimeout = time.Duration(float64(c.FailoverTimeout) * k)
	return c
}

func (c SentinelConfig) withDefaults() SentinelConfig {
	if c.DownAfter == 0 {
		c.DownAfter = 200 * time.Millisecond
	}
	if c.FailoverTimeout == 0 {
		c.FailoverTimeout = time.Second
	}
	return c
}

// sentinelCount and sentinelQuorum: three Sentinels, two to agree the
// primary is down (and a majority, two, to elect the one that fails over).
const (
	sentinelCount  = 3
	sentinelQuorum = 2
)

// startSentinel starts the Sentinel topology's nodes, side proxies,
// Sentinels and client links, and waits until the Sentinels know the
// replica and each other (they find each other through the primary every
// two seconds).
func (c *Deployment) startSentinel(ctx context.Context) error {
	starter, ok := c.cfg.Backend.(backend.SentinelStarter)
	if !ok {
		return fmt.Errorf("%w: the %s backend cannot run Sentinels", ErrTopology, c.cfg.Backend.Name())
	}
	// Named by position, not role: the roles swap at every failover.
	for i, name := range []string{"node0", "node1"} {
		port, err := backend.FreePort()
		if err != nil {
			return err
		}
		side, err := c.network.NewLink("sentinel-side->"+name, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return err
		}
		_, sidePort, _ := net.SplitHostPort(side.Addr())
		nc := c.cfg.Node
		nc.Name, nc.Port = name, port
		nc.ExtraArgs = append(slices.Clone(nc.ExtraArgs), "--replica-announce-ip", "127.0.0.1", "--replica-announce-port", sidePort)
		n, err := c.cfg.Backend.StartNode(ctx, nc)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
		c.side = append(c.side, side)
		if i == 1 {
			if err := n.ReplicaOf(ctx, c.side[0].Addr()); err != nil {
				return err
			}
			if err := waitSynced(ctx, n, c.nodes[0], c.cfg.SyncTimeout); err != nil {
				return err
			}
		}
	}
	sc := c.cfg.Sentinel.withDefaults()
	_, primaryPort, _ := net.SplitHostPort(c.side[0].Addr())
	conf := strings.Join([]string{
		"sentinel resolve-hostnames no",
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s %d", SentinelMaster, primaryPort, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMaster, sc.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", SentinelMaster, sc.FailoverTimeout.Milliseconds()),
	}, "\n") + "\n"
	for i := range sentinelCount {
		s, err := starter.StartSentinel(ctx, fmt.Sprintf("sentinel%d", i), conf, c.cfg.Node)
		if err != nil {
			return err
		}
		c.sentinels = append(c.sentinels, s)
	}
	for client := range c.cfg.Clients {
		var row []*netfault.Link
		for _, n := range append(append([]backend.RedisNode{}, c.nodes...), c.sentinels...) {
			l, err := c.network.NewLink(fmt.Sprintf("client%d->%s", client, n.Name()), n.Addr())
			if err != nil {
				return err
			}
			row = append(row, l)
		}
		c.links = append(c.links, row)
	}
	return c.waitSentinelsAgree(ctx, 20*time.Second)
}

// waitSentinelsAgree waits until every Sentinel knows the replica and the
// other Sentinels: before that a failover cannot be elected.
func (c *Deployment) waitSentinelsAgree(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready := true
		for _, s := range c.sentinels {
			others, err1 := s.Do(ctx, "SENTINEL", "SENTINELS", SentinelMaster)
			replicas, err2 := s.Do(ctx, "SENTINEL", "REPLICAS", SentinelMaster)
			o, _ := others.([]any)
			r, _ := replicas.([]any)
			if err1 != nil || err2 != nil || len(o) < sentinelCount-1 || len(r) < 1 {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w: the Sentinels did not find each other and the replica within %s", backend.ErrNodeStart, timeout)
		}
		wait.Sleep(ctx, 50*time.Millisecond)
	}
}

// SentinelRoute is what one pod needs to reach the deployment through
// Sentinel: the Sentinels' addresses as the pod sees them, and Route,
// which maps an address Sentinel reports (a node's side proxy, or another
// Sentinel) to the pod's own link to the same process. An address it does
// not know is an error: a connection around the pod's proxies would escape
// its partitions and pauses.
type SentinelRoute struct {
	Master    string
	Sentinels []string
	Route     func(addr string) (string, error)
}

// SentinelRoute returns client's way in, or false outside the Sentinel
// topology.
func (c *Deployment) SentinelRoute(client int) (SentinelRoute, bool) {
	if c.cfg.Topology != Sentinel {
		return SentinelRoute{}, false
	}
	row := c.links[client]
	routes := map[string]string{}
	for _, l := range row {
		routes[l.Addr()] = l.Addr() // already the pod's own way in
	}
	for i, side := range c.side {
		routes[side.Addr()] = row[i].Addr()
	}
	r := SentinelRoute{Master: SentinelMaster}
	for i, s := range c.sentinels {
		l := row[len(c.side)+i]
		routes[s.Addr()] = l.Addr()
		r.Sentinels = append(r.Sentinels, l.Addr())
	}
	r.Route = routeOnly(routes, "this deployment")
	return r, true
}

// routeOnly maps an address a server reports to the pod's own way to the
// same process (routes), and refuses any other: a connection around the
// pod's proxies would escape its partitions and pauses. of names the
// deployment in the error.
func routeOnly(routes map[string]string, of string) func(string) (string, error) {
	return func(addr string) (string, error) {
		if to, ok := routes[addr]; ok {
			return to, nil
		}
		return "", fmt.Errorf("%w: %s is not an address of %s; refusing to dial around the pod's proxies", ErrTopology, addr, of)
	}
}

// SideLink returns the side proxy of node i (Sentinels and replication
// reach the node through it), or nil outside the Sentinel topology.
func (c *Deployment) SideLink(i int) *netfault.Link {
	if i < len(c.side) {
		return c.side[i]
	}
	return nil
}

// SentinelPrimary asks the Sentinels which node they name as primary:
// the index of the node whose side proxy they report, -1 if none answers
// with a known one.
func (c *Deployment) SentinelPrimary(ctx context.Context) int {
	clients := make([]*redis.Client, len(c.sentinels))
	for i, s := range c.sentinels {
		clients[i] = backend.Admin(s.Addr())
	}
	defer closeClients(clients)
	return c.namedPrimary(ctx, clients)
}

// closeClients closes admin connections the caller is done with.
func closeClients(clients []*redis.Client) {
	for _, cl := range clients {
		cl.Close()
	}
}

// namedPrimary is SentinelPrimary over connections the caller keeps.
func (c *Deployment) namedPrimary(ctx context.Context, sentinels []*redis.Client) int {
	for _, s := range sentinels {
		pair, err := s.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster).StringSlice()
		if err != nil || len(pair) != 2 {
			continue
		}
		for i, side := range c.side {
			if side.Addr() == net.JoinHostPort(pair[0], pair[1]) {
				return i
			}
		}
	}
	return -1
}
