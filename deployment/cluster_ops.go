package deployment

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/internal/wait"
)

// What faults do to a cluster: find the node serving a key, cut a node
// from its peers, fail over by hand, move a slot.

// SlotPrimary returns the index of the node serving slot, as the nodes
// that answer see it: in each view the primary claiming the slot with the
// highest config epoch (the cluster's own rule), then the one most views
// name. An error when no node answers or none names one.
func (c *Deployment) SlotPrimary(ctx context.Context, slot int) (int, error) {
	if c.cluster == nil {
		return -1, fmt.Errorf("slot primary on %s: %w", c.cfg.Topology, ErrTopology)
	}
	votes := map[string]int{}
	for _, n := range c.nodes {
		v, err := c.viewOf(ctx, n)
		if err != nil {
			continue
		}
		best, epoch := "", int64(-1)
		for _, cn := range v.nodes {
			if cn.has("master") && cn.serves(slot) && cn.epoch > epoch {
				best, epoch = cn.id, cn.epoch
			}
		}
		if best != "" {
			votes[best]++
		}
	}
	best, most := -1, 0
	for i, id := range c.cluster.ids {
		if votes[id] > most {
			best, most = i, votes[id]
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("%w: no node answered with a primary for slot %d", ErrTopology, slot)
	}
	return best, nil
}

// KeyNodes returns the node serving key's slot now and its shard peer
// (the replica, unless a failover is under way).
func (c *Deployment) KeyNodes(ctx context.Context, key string) (primary, replica int, err error) {
	p, err := c.SlotPrimary(ctx, KeySlot(key))
	if err != nil {
		return -1, -1, err
	}
	return p, c.ShardPeer(p), nil
}

// AwaitPromotion waits until node i answers ROLE as a primary, calls then
// at once (to read what it has before clients write to it) and returns
// true; false when ctx or timeout end first.
func (c *Deployment) AwaitPromotion(ctx context.Context, i int, timeout time.Duration, then func()) bool {
	if c.clusterNodes(i) != nil {
		return false
	}
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		role, err := c.nodes[i].Do(rctx, "ROLE")
		cancel()
		if r, ok := role.([]any); err == nil && ok && len(r) > 0 && r[0] == "master" {
			if then != nil {
				then()
			}
			return true
		}
		wait.Sleep(ctx, 2*time.Millisecond)
	}
	return false
}

// ManualFailover asks replica i to take its primary's slots over: CLUSTER
// FAILOVER with mode "" (the safe handover: the primary stops its clients
// until the replica has caught up), "force" (no handshake with the
// primary) or "takeover" (not even an election).
func (c *Deployment) ManualFailover(ctx context.Context, i int, mode string) error {
	if err := c.clusterNodes(i); err != nil {
		return err
	}
	args := []any{"CLUSTER", "FAILOVER"}
	if mode != "" {
		args = append(args, strings.ToUpper(mode))
	}
	if _, err := c.nodes[i].Do(ctx, args...); err != nil {
		return fmt.Errorf("deployment: node %s: CLUSTER FAILOVER %s: %w", c.nodes[i].Name(), mode, err)
	}
	return nil
}

// SetSlot runs CLUSTER SETSLOT slot STATE [node id of to] on node i:
// IMPORTING and MIGRATING name the other end, NODE the new owner.
func (c *Deployment) SetSlot(ctx context.Context, i, slot int, state string, to int) error {
	if err := c.clusterNodes(i, to); err != nil {
		return err
	}
	if _, err := c.nodes[i].Do(ctx, "CLUSTER", "SETSLOT", slot, state, c.cluster.ids[to]); err != nil {
		return fmt.Errorf("deployment: node %s: CLUSTER SETSLOT %d %s: %w", c.nodes[i].Name(), slot, state, err)
	}
	return nil
}

// DropReplication closes replica's replication connection to its shard
// peer where the relay carries it, with whatever the pair's proxy still
// holds back (a lag's backlog): those writes never reach the replica. The
// link itself stays up (disabling a proxy and listening again can find its
// port taken by another connection meanwhile: measured).
func (c *Deployment) DropReplication(replica int) error {
	if err := c.clusterNodes(replica); err != nil {
		return err
	}
	c.cluster.client[c.ShardPeer(replica)].drop(c.cluster.srcIP[replica])
	return nil
}

// StableSlot clears a slot's MIGRATING or IMPORTING state on node i
// (CLUSTER SETSLOT slot STABLE): what undoes a move cut short.
func (c *Deployment) StableSlot(ctx context.Context, i, slot int) error {
	if err := c.clusterNodes(i); err != nil {
		return err
	}
	if _, err := c.nodes[i].Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE"); err != nil {
		return fmt.Errorf("deployment: node %s: CLUSTER SETSLOT %d STABLE: %w", c.nodes[i].Name(), slot, err)
	}
	return nil
}

// clusterNodes says why the operation cannot run: not a cluster, or an
// index that is no node of it.
func (c *Deployment) clusterNodes(is ...int) error {
	if c.cluster == nil {
		return fmt.Errorf("cluster operation on %s: %w", c.cfg.Topology, ErrTopology)
	}
	for _, i := range is {
		if i < 0 || i >= len(c.nodes) {
			return fmt.Errorf("%w: no cluster node %d (the cluster has %d)", ErrTopology, i, len(c.nodes))
		}
	}
	return nil
}

// MigrateKeys moves every key of slot from node from to node to with
// MIGRATE (each key with its remaining TTL, deleted at the source once the
// target has it), through the data link between the two, and returns the
// keys moved.
func (c *Deployment) MigrateKeys(ctx context.Context, slot, from, to int) ([]string, error) {
	if err := c.clusterNodes(from, to); err != nil {
		return nil, err
	}
	n := c.nodes[from]
	res, err := n.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 1000)
	if err != nil {
		return nil, fmt.Errorf("deployment: node %s: CLUSTER GETKEYSINSLOT: %w", n.Name(), err)
	}
	list, _ := res.([]any)
	if len(list) == 0 {
		return nil, nil
	}
	// MIGRATE connects from 127.0.0.1, not from the node's
	// bind-source-addr: the relay could not tell who calls, so it is
	// given the pair's link itself.
	host, port, _ := net.SplitHostPort(c.cluster.data[from][to].Addr())
	args := []any{"MIGRATE", host, port, "", 0, 2000, "KEYS"}
	var keys []string
	for _, k := range list {
		s, _ := k.(string)
		keys = append(keys, s)
		args = append(args, s)
	}
	if _, err := n.Do(ctx, args...); err != nil {
		return keys, fmt.Errorf("deployment: node %s: MIGRATE to %s: %w", n.Name(), c.nodes[to].Name(), err)
	}
	return keys, nil
}

// ShardPrimary returns the node of shard s that answers ROLE as a primary
// (the first that does: on a settled cluster there is one).
func (c *Deployment) ShardPrimary(ctx context.Context, s int) (int, error) {
	if c.cluster == nil || s < 0 || s >= c.Shards() {
		return -1, fmt.Errorf("shard %d on %s: %w", s, c.cfg.Topology, ErrTopology)
	}
	for _, i := range []int{2 * s, 2*s + 1} {
		role, err := c.nodes[i].Do(ctx, "ROLE")
		if r, ok := role.([]any); err == nil && ok && len(r) > 0 && r[0] == "master" {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: neither node of shard %d answered as a primary", ErrTopology, s)
}
