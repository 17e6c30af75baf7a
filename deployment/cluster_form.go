package deployment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
)

// Forming a cluster and reading its nodes' views, as redis-cli --cluster
// create does it: distinct config epochs, the slots split, MEET, then a
// replica behind every primary.

// ClusterReadyTimeout bounds the forming of a cluster and each wait for
// it to settle after a fault.
const ClusterReadyTimeout = 20 * time.Second

// formCluster joins the started nodes into one cluster.
func (c *Deployment) formCluster(ctx context.Context, cc ClusterConfig) error {
	cs := c.cluster
	for i, n := range c.nodes {
		id, err := n.Do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return fmt.Errorf("deployment: node %s: CLUSTER MYID: %w", n.Name(), err)
		}
		s, _ := id.(string)
		cs.ids = append(cs.ids, s)
		// Distinct epochs before the nodes meet: otherwise they settle
		// their collisions one by one, which takes seconds.
		if _, err := n.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1); err != nil {
			return fmt.Errorf("deployment: node %s: CLUSTER SET-CONFIG-EPOCH: %w", n.Name(), err)
		}
		if i%2 == 0 {
			lo, hi := shardRange(i/2, cc.Shards)
			if _, err := n.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
				return fmt.Errorf("deployment: node %s: CLUSTER ADDSLOTSRANGE: %w", n.Name(), err)
			}
		}
	}
	for i := 1; i < len(c.nodes); i++ {
		if _, err := c.nodes[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", cs.client[i].Port(), cs.bus[i].Port()); err != nil {
			return fmt.Errorf("deployment: CLUSTER MEET %s: %w", c.nodes[i].Name(), err)
		}
	}
	if err := c.waitCluster(ctx, "every node to know the others", func(vs []clusterView) bool {
		for _, v := range vs {
			if len(v.known()) != len(c.nodes) {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	for i := 1; i < len(c.nodes); i += 2 {
		if _, err := c.nodes[i].Do(ctx, "CLUSTER", "REPLICATE", cs.ids[i-1]); err != nil {
			return fmt.Errorf("deployment: node %s: CLUSTER REPLICATE: %w", c.nodes[i].Name(), err)
		}
	}
	return c.WaitClusterSettled(ctx)
}

// WaitClusterSettled waits until every node is up, every node's view is
// the same healthy cluster (state ok, every slot served, in each shard one
// primary and the other node its replica) and every replica has
// acknowledged a write of its primary: the state a cell starts from, and
// the one a cluster fault leaves behind.
func (c *Deployment) WaitClusterSettled(ctx context.Context) error {
	if c.cluster == nil {
		return fmt.Errorf("settle on %s: %w", c.cfg.Topology, ErrTopology)
	}
	if err := c.waitCluster(ctx, "every node to agree on one healthy cluster", c.settled); err != nil {
		return err
	}
	v, err := c.viewOf(ctx, c.nodes[0])
	if err != nil {
		return err
	}
	for i, id := range c.cluster.ids {
		if v.nodes[id].master() {
			if err := c.waitShardSynced(ctx, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// settled reports whether the views show one healthy cluster: each
// healthy (state ok, every slot served, no slot half-moved, in each shard
// one primary and the other node its replica), and all naming the same
// primaries with the same slots.
func (c *Deployment) settled(vs []clusterView) bool {
	var want string
	for _, v := range vs {
		if len(v.known()) != len(c.nodes) || v.migrating {
			return false
		}
		var owners strings.Builder
		for s := range c.Shards() {
			a, b := v.nodes[c.cluster.ids[2*s]], v.nodes[c.cluster.ids[2*s+1]]
			switch {
			case a.master() && b.replicaOf(a.id):
				fmt.Fprintf(&owners, "%s%v;", a.id, a.slots)
			case b.master() && a.replicaOf(b.id):
				fmt.Fprintf(&owners, "%s%v;", b.id, b.slots)
			default:
				return false
			}
		}
		if want == "" {
			want = owners.String()
		}
		if owners.String() != want || v.info["cluster_state"] != "ok" || v.info["cluster_slots_ok"] != strconv.Itoa(ClusterSlots) {
			return false
		}
	}
	return true
}

// waitCluster polls every node's view until ok holds for them together.
func (c *Deployment) waitCluster(ctx context.Context, what string, ok func([]clusterView) bool) error {
	deadline := time.Now().Add(ClusterReadyTimeout)
	var last error
	for {
		var vs []clusterView
		for _, n := range c.nodes {
			v, err := c.viewOf(ctx, n)
			if err != nil {
				last = err
				break
			}
			vs = append(vs, v)
		}
		if len(vs) == len(c.nodes) {
			if ok(vs) {
				return nil
			}
			last = errors.New("the nodes do not agree yet")
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: stopped waiting for %s: %w", backend.ErrNodeStart, what, ctx.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: waited %v for %s: %w", backend.ErrNodeStart, ClusterReadyTimeout, what, last)
		}
		wait.Sleep(ctx, 20*time.Millisecond)
	}
}

// waitShardSynced waits until primary's replica acknowledges a write on
// primary (WAIT 1), as waitSynced does, with a key on primary's slots.
func (c *Deployment) waitShardSynced(ctx context.Context, primary int) error {
	if err := c.nodes[c.ShardPeer(primary)].WaitLinkUp(ctx, c.cfg.SyncTimeout); err != nil {
		return err
	}
	v, err := c.viewOf(ctx, c.nodes[primary])
	if err != nil {
		return err
	}
	slots := v.nodes[c.cluster.ids[primary]].slots
	if len(slots) == 0 {
		return fmt.Errorf("%w: node %s serves no slot", ErrTopology, c.nodes[primary].Name())
	}
	key := keyInSlots("lockchaos:replication-probe", slots[0][0], slots[0][1])
	cl := backend.Admin(c.nodes[primary].Addr())
	defer cl.Close()
	defer cl.Del(context.Background(), key)
	deadline := time.Now().Add(c.cfg.SyncTimeout)
	for {
		err := cl.Set(ctx, key, "1", 0).Err()
		var acks int64
		if err == nil {
			acks, err = cl.Do(ctx, "WAIT", 1, 500).Int64()
		}
		if err == nil && acks >= 1 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			why := errors.New("no acknowledgement")
			if err != nil {
				why = err
			}
			return fmt.Errorf("deployment: node %s: its replica acknowledged no write within %v: %w",
				c.nodes[primary].Name(), c.cfg.SyncTimeout, why)
		}
		wait.Sleep(ctx, 20*time.Millisecond)
	}
}

// clusterView is one node's view of the cluster: CLUSTER INFO and CLUSTER
// NODES, parsed.
type clusterView struct {
	info  map[string]string
	nodes map[string]clusterNode // by id
	// migrating: a slot is half-moved (MIGRATING or IMPORTING) here.
	migrating bool
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr, primary string
	flags             []string
	epoch             int64
	slots             [][2]int
}

func (n clusterNode) has(flag string) bool {
	for _, f := range n.flags {
		if f == flag {
			return true
		}
	}
	return false
}

func (n clusterNode) master() bool { return n.has("master") && !n.has("fail") && !n.has("fail?") }

func (n clusterNode) replicaOf(id string) bool { return n.has("slave") && n.primary == id }

func (n clusterNode) serves(slot int) bool {
	for _, r := range n.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// known returns the nodes the view knows that are past the handshake.
func (v clusterView) known() []clusterNode {
	var out []clusterNode
	for _, n := range v.nodes {
		if !n.has("handshake") && !n.has("noaddr") {
			out = append(out, n)
		}
	}
	return out
}

// viewOf reads node n's view.
func (c *Deployment) viewOf(ctx context.Context, n backend.RedisNode) (clusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := n.Do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return clusterView{}, fmt.Errorf("node %s: CLUSTER INFO: %w", n.Name(), err)
	}
	nodes, err := n.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return clusterView{}, fmt.Errorf("node %s: CLUSTER NODES: %w", n.Name(), err)
	}
	s1, _ := info.(string)
	s2, _ := nodes.(string)
	return parseClusterView(s1, s2), nil
}

// parseClusterView parses CLUSTER INFO's "field:value" lines and CLUSTER
// NODES' lines ("id addr flags primary ping pong epoch link slot...").
func parseClusterView(info, nodes string) clusterView {
	v := clusterView{info: map[string]string{}, nodes: map[string]clusterNode{}}
	for _, line := range strings.Split(info, "\n") {
		if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			v.info[k] = val
		}
	}
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := clusterNode{id: f[0], addr: f[1], flags: strings.Split(f[2], ","), primary: f[3]}
		n.epoch, _ = strconv.ParseInt(f[6], 10, 64)
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				v.migrating = true // a slot being migrated or imported
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				n.slots = append(n.slots, [2]int{a, b})
			}
		}
		v.nodes[n.id] = n
	}
	return v
}
