package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// The fault kinds that kill, restart or promote nodes.
func init() {
	for _, k := range []Kind{
		{Name: "node-restart", Doc: "kill a node (round robin) while a lock is held and restart it empty after Delay",
			Moment: "a node came back empty while a lease it carried was live", Danger: restartedUnder(false, "empty"),
			Needs: Needs{NodeControl: true},
			Build: func(s Spec, ttl time.Duration) Fault { return &NodeRestart{Delay: s.Delay} }},
		{Name: "node-restart-delayed", Doc: "node-restart with the restart delayed past the TTL",
			Moment: "a node carrying a live lease stayed down past the TTL", Danger: restartedUnder(true, "empty"),
			Needs: Needs{NodeControl: true},
			Build: func(s Spec, ttl time.Duration) Fault {
				return &NodeRestart{Delay: or(s.Delay, ttl+ttl/2), delayed: true}
			}},
		{Name: "power-loss", Doc: "node-restart where the node loses power instead: it comes back from its AOF, less what its fsync policy (the scenario's fsync) had not made durable",
			Moment: "nodes lost power and came back while a lease they carried was live, a majority of them under one lease",
			Danger: restartedUnder(false, "from its AOF after a power loss"),
			Needs:  Needs{NodeControl: true, Persistence: true},
			Build:  func(s Spec, ttl time.Duration) Fault { return &NodeRestart{Delay: s.Delay, powerLoss: true} }},
		{Name: "failover", Doc: "while a lock is held, kill the primary and promote the lagging replica",
			Moment: "the promoted replica lacked a key a pod believed it held", Danger: lostOnPromotion,
			Needs: Needs{NodeControl: true, Replica: true},
			Build: func(s Spec, ttl time.Duration) Fault { return Failover{Lag: or(s.Latency, ttl+ttl/4)} }},
		{Name: "clock-jump", Doc: "while a lock is held, jump one node's wall clock by Jump (default 2x TTL; negative: back), nodes in turn; the window stays open Duration (default TTL)",
			Moment: "a forward jump lapsed a live lease early on the node while another pod tried", Danger: jumpedUnder,
			Needs: Needs{NodeControl: true, Clock: true},
			Build: func(s Spec, ttl time.Duration) Fault {
				return &ClockJump{Jump: or(s.Jump, 2*ttl), Hold: or(s.Duration, ttl)}
			}},
		{Name: "replica-clock-skew", Doc: "the replica's wall clock runs Jump ahead (default 2x TTL); while a lock is held the primary dies and the replica is promoted",
			Moment: "the promoted replica lacked a key a pod believed it held", Danger: lostOnPromotion,
			Needs: Needs{NodeControl: true, Replica: true, Clock: true},
			Build: func(s Spec, ttl time.Duration) Fault {
				return &ReplicaClockSkew{Skew: or(s.Jump, 2*ttl)}
			}},
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
	Delay     time.Duration
	delayed   bool
	powerLoss bool // PowerLoss instead of Kill: back from the AOF
	next      int
}

// Name implements Fault.
func (f *NodeRestart) Name() string {
	if f.powerLoss {
		return "power-loss"
	}
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
	if f.powerLoss {
		pl, ok := n.(PowerLossNode)
		if !ok {
			return fmt.Errorf("%w: node %s cannot lose power on this backend", ErrTopology, n.Name())
		}
		if _, err := pl.PowerLoss(); err != nil {
			return err
		}
	} else if err := n.Kill(); err != nil {
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
	return failOver(ctx, env, f.Name())
}

// failOver kills the primary, promotes the replica, probes it for the
// cell's keys, moves the service address to it, lets the clients work a
// TTL, and brings the old primary back as the replica: one window named
// fault over primary and replica (and any extra targets).
func failOver(ctx context.Context, env *Env, fault string, extra ...string) error {
	c := env.Cluster
	old := c.Primary()
	end := env.window(fault, append([]string{old.Name(), c.Replica().Name()}, extra...)...)
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

// probeKeys records which of the cell's keys the node has right now, and
// their values (the promoted replica, just after promotion): the evidence
// a lock key was lost, read from the node, not assumed.
func probeKeys(env *Env, n RedisNode) {
	if env.Probe == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, k := range env.Keys {
		v, err := n.Do(ctx, "GET", k)
		switch {
		case err == nil || isNil(err):
			s, _ := v.(string)
			env.Probe(n.Name(), k, s, err == nil)
		case strings.Contains(err.Error(), "WRONGTYPE"):
			// A lock that keeps its key as a hash or a set: whether it is
			// there is all the probe can say.
			if c, err := n.Do(ctx, "EXISTS", k); err == nil {
				count, _ := c.(int64)
				env.Probe(n.Name(), k, "", count == 1)
			}
		}
	}
}

// ClockJump moves one node's wall clock by Jump (forward: lock keys on it
// expire early; back: they live longer) while a lock is held, nodes in
// turn, and keeps the window open for Hold so other pods can try. The
// clock stays where it jumped, as a stepped clock does.
type ClockJump struct {
	Jump, Hold time.Duration
	next       int
}

// Name implements Fault.
func (*ClockJump) Name() string { return "clock-jump" }

// Inject implements Fault.
func (f *ClockJump) Inject(ctx context.Context, env *Env) error {
	nodes := env.Cluster.Nodes()
	n := nodes[f.next%len(nodes)]
	f.next++
	targets := []string{jumpTarget + f.Jump.String()}
	if len(nodes) > 2 {
		// Look for a bare majority for a few TTLs; a lock that always
		// writes every node gets the round-robin node instead, so the rest
		// of the schedule is not held up.
		look, cancel := context.WithTimeout(ctx, 5*env.TTL)
		bare, found := f.bareMajorityNode(look, env)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if found {
			n = bare
			targets = append(targets, bareMajorityTarget)
		}
	}
	if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
		return nil // (at once when bare: its holder still holds)
	}
	cn, ok := n.(ClockNode)
	if !ok {
		return fmt.Errorf("%w: node %s cannot move its clock on this backend", ErrNoClockShim, n.Name())
	}
	end := env.window(f.Name(), append([]string{n.Name()}, targets...)...)
	defer end()
	if err := cn.ShiftClock(f.Jump); err != nil {
		return err
	}
	sleepCtx(ctx, f.Hold)
	return nil
}

// bareMajorityNode waits for a holder whose key is on a bare majority of
// the independent nodes (the others free: some attempt lost the race
// there) and returns one of the nodes that carry it: a jump there leaves
// the holder a minority while a majority is free for the next pod, the
// Redlock critique's case. A holder on every node survives one jump; it
// keeps looking until ctx ends.
func (f *ClockJump) bareMajorityNode(ctx context.Context, env *Env) (RedisNode, bool) {
	nodes := env.Cluster.Nodes()
	for ctx.Err() == nil {
		_, key, err := env.Pods.Holder(ctx, env.Rand)
		if err != nil {
			return nil, false
		}
		var carrying []RedisNode
		for _, n := range nodes {
			v, err := n.Do(ctx, "EXISTS", key)
			if c, _ := v.(int64); err == nil && c == 1 {
				carrying = append(carrying, n)
			}
		}
		if 2*len(carrying) > len(nodes) && len(carrying) < len(nodes) {
			return carrying[env.Rand.IntN(len(carrying))], true
		}
		sleepCtx(ctx, time.Millisecond)
	}
	return nil, false
}

// jumpTarget prefixes a clock jump among a window's targets.
const jumpTarget = history.JumpTarget

// bareMajorityTarget marks a jump on a node of a holder's bare majority:
// on a quorum lock only such a jump can leave the holder a minority.
const bareMajorityTarget = "bare-majority"

// jumpedUnder is clock-jump's danger: a forward jump made a live lease's
// key lapse early on the node (the jump was longer than what the lease had
// left) and another pod tried for the key before it was due to lapse. A
// jump back cannot end a lease early; it is judged by whether a lease was
// live to be stretched.
func jumpedUnder(w history.Event, v *View) (int64, string, bool) {
	jump, _ := w.TargetDuration(jumpTarget)
	node := w.Targets()[0]
	if v.Nodes > 2 && jump > 0 && !slices.Contains(w.Targets(), bareMajorityTarget) {
		// The holder's key was on every node (or none was found on a bare
		// majority in time): one jumped node leaves it a majority.
		return w.Call, fmt.Sprintf("%s's clock jumped, but no holder was on a bare majority of the %d nodes: one node less left every lease a majority", node, v.Nodes), false
	}
	for _, h := range v.holdsAt(w.Call) {
		due := max(h.expiry(v.TTL), v.renewedUntil(h, w.Call))
		if due <= w.Call {
			continue // already lapsed: the jump took nothing from it
		}
		if jump < 0 {
			return w.Call, fmt.Sprintf("%s's clock went back %s at %s under %s's live lease on %s: it lives that much longer there",
				node, msec(-jump), secs(w.Call), clientText(h.client), h.key), true
		}
		if due-w.Call > int64(jump) {
			continue // the jump was shorter than what the lease had left
		}
		if e, ok := v.tried(h.key, h.client, w.Call, due); ok {
			return max(w.Call, e.Call), fmt.Sprintf("%s's clock jumped %s at %s under %s's lease on %s, due to lapse at %s; %s tried at %s",
				node, msec(jump), secs(w.Call), clientText(h.client), h.key, secs(due), clientText(e.Client), secs(max(w.Call, e.Call))), true
		}
	}
	return w.Call, "no live lease lapsed early on the jumped node while another pod tried", false
}

// ReplicaClockSkew runs the replica's wall clock Skew ahead of the
// primary's, then fails over while a lock is held. A lock key reaches the
// replica as PXAT, an absolute time: on a clock that runs ahead it is
// already past, so the promoted replica has no live key and another pod
// wins while the holder still believes it holds. Each round skews the
// current replica anew (the old primary comes back as the replica).
type ReplicaClockSkew struct{ Skew time.Duration }

// Name implements Fault.
func (*ReplicaClockSkew) Name() string { return "replica-clock-skew" }

// Inject implements Fault.
func (f *ReplicaClockSkew) Inject(ctx context.Context, env *Env) error {
	c := env.Cluster
	if c.Topology() != PrimaryReplica {
		return fmt.Errorf("replica-clock-skew needs a primary and a replica: %w", ErrTopology)
	}
	primary, replica := c.Primary(), c.Replica()
	pc, ok1 := primary.(ClockNode)
	rc, ok2 := replica.(ClockNode)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: this backend cannot move node clocks", ErrNoClockShim)
	}
	if err := rc.ShiftClock(pc.ClockOffset() + f.Skew - rc.ClockOffset()); err != nil {
		return err
	}
	// A fresh acquisition, and a moment for its key to reach the replica
	// (no lag here: the key is there, already expired by the replica's clock).
	if _, err := env.Pods.NextAcquire(ctx); err != nil {
		return nil
	}
	sleepCtx(ctx, 5*time.Millisecond)
	return failOver(ctx, env, f.Name(), jumpTarget+f.Skew.String())
}
