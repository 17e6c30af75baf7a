package faults

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// The fault kinds that kill, restart or promote nodes.
func init() {
	for _, k := range []Kind{
		{Name: "node-restart", Doc: "kill a node (round robin) while a lock is held and restart it empty after Delay",
			Moment: "a node came back empty while a lease it carried was live", Danger: restartedUnder(false),
			Needs: Needs{NodeControl: true},
			Build: func(s Spec, ttl time.Duration) Fault { return &NodeRestart{Delay: s.Delay} }},
		{Name: "node-restart-delayed", Doc: "node-restart with the restart delayed past the TTL",
			Moment: "a node carrying a live lease stayed down past the TTL", Danger: restartedUnder(true),
			Needs: Needs{NodeControl: true},
			Build: func(s Spec, ttl time.Duration) Fault {
				return &NodeRestart{Delay: or(s.Delay, ttl+ttl/2), delayed: true}
			}},
		{Name: "failover", Doc: "while a lock is held, kill the primary and promote the lagging replica",
			Moment: "the promoted replica lacked a key a pod believed it held", Danger: lostOnPromotion,
			Needs: Needs{NodeControl: true, Replica: true},
			Build: func(s Spec, ttl time.Duration) Fault { return Failover{Lag: or(s.Latency, ttl+ttl/4)} }},
	} {
		if err := RegisterKind(k); err != nil {
			panic(err)
		}
	}
}

// NodeRestart kills a node while a lock is held (nodes in turn) and
// restarts it empty after Delay (0: at once). A node that forgets the
// locks it held is Redlock's known weak spot; waiting past the TTL before
// coming back is the documented remedy.
type NodeRestart struct {
	Delay   time.Duration
	delayed bool
	next    int
}

// Name implements Fault.
func (f *NodeRestart) Name() string {
	if f.delayed {
		return "node-restart-delayed"
	}
	return "node-restart"
}

// Inject implements Fault. It strikes while a lock is held; with short
// gaps, nodes go down in turn under one lease, which is what it takes for
// a second pod to win a majority.
func (f *NodeRestart) Inject(ctx context.Context, env *Env) error {
	if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
		return nil
	}
	nodes := env.Cluster.Nodes()
	n := nodes[f.next%len(nodes)]
	f.next++
	end := env.window(f.Name(), n.Name())
	defer end()
	if err := n.Kill(); err != nil {
		return err
	}
	sleepCtx(ctx, f.Delay)
	return heal(n.Start)
}

// Failover waits for a held lock, kills the primary before the lagging
// replica has the lock key, promotes the replica and repoints the clients;
// then brings the old primary back as the new replica, ready for the next
// round.
type Failover struct {
	// Lag delays the replication stream, so the key of the lock just
	// taken is not on the replica yet when the primary dies. A lag longer
	// than the TTL also means the replica holds no live lock key from
	// earlier holders (their keys expired there): the promoted replica is
	// free, and the other clients take the lock at once.
	Lag time.Duration
}

// Name implements Fault.
func (Failover) Name() string { return "failover" }

// Inject implements Fault.
func (f Failover) Inject(ctx context.Context, env *Env) error {
	c := env.Cluster
	if c.Topology() != PrimaryReplica {
		return fmt.Errorf("failover needs a primary and a replica: %w", ErrTopology)
	}
	// Setting a latency that is already there is a no-op: replacing it
	// would flush what the proxy holds back, the very writes to lose. The
	// first time, let the lag settle, so the replica is Lag behind.
	repl := c.ReplicationLink()
	if !slices.Contains(repl.Toxics(), "latency_downstream") {
		if err := repl.Latency(Downstream, f.Lag, 0); err != nil {
			return err
		}
		sleepCtx(ctx, f.Lag+env.TTL)
	}
	// Wait for a fresh acquisition: its key is still in the lagging stream.
	if _, err := env.Pods.NextAcquire(ctx); err != nil {
		return nil
	}
	old := c.Primary()
	end := env.window(f.Name(), old.Name(), c.Replica().Name())
	defer end()
	if err := old.Kill(); err != nil {
		return err
	}
	if err := heal(c.PromoteReplica); err != nil {
		return err
	}
	probeKeys(env, c.Replica()) // promoted, clients not moved yet: nobody has written to it
	if err := c.MoveService(); err != nil {
		return err
	}
	// Let the clients work on the new primary before the old one rejoins.
	sleepCtx(ctx, env.TTL)
	return heal(c.Rejoin)
}

// probeKeys records which of the cell's keys the node has right now (the
// promoted replica, just after promotion): the evidence a lock key was
// lost, read from the node, not assumed.
func probeKeys(env *Env, n RedisNode) {
	if env.Probe == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, k := range env.Keys {
		v, err := n.Do(ctx, "EXISTS", k)
		if err != nil {
			continue
		}
		count, _ := v.(int64)
		env.Probe(n.Name(), k, count == 1)
	}
}
