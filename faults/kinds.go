package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Latency delays one client's traffic (both ways unless Direction says
// otherwise) by Latency ± Jitter for Duration.
type Latency struct {
	Latency, Jitter, Duration time.Duration
	Direction                 Direction
}

// Name implements Fault.
func (Latency) Name() string { return "latency" }

// Inject implements Fault.
func (f Latency) Inject(ctx context.Context, env *Env) error {
	client := env.Rand.IntN(env.Cluster.Clients())
	links := env.Cluster.ClientLinks(client)
	defer healLinks(links)
	if err := eachLink(links, func(l *Link) error { return l.Latency(f.Direction, f.Latency, f.Jitter) }); err != nil {
		return err
	}
	defer env.window(f.Name(), linkNames(links)...)()
	sleepCtx(ctx, f.Duration)
	return nil
}

// SlowReply delays every reply from Redis by Delay, past the TTL, until the
// first acquisition returns (or MaxWait passes), then heals at once. The
// winner's SET NX took effect on arrival; its answer comes back after the
// key expired. Healing right then lets the other clients' (refused, also
// delayed) answers through, and they take the free lock while the winner
// believes it holds it. A client that only ever sees a slow reply to its
// winning acquire in the wild meets exactly this; targeting one client
// instead rarely works, because a busy lock is almost never free at the
// moment that client's request lands.
type SlowReply struct{ Delay, MaxWait time.Duration }

// Name implements Fault.
func (SlowReply) Name() string { return "slow-reply" }

// Inject implements Fault.
func (f SlowReply) Inject(ctx context.Context, env *Env) error {
	var links []*Link
	for c := range env.Cluster.Clients() {
		links = append(links, env.Cluster.ClientLinks(c)...)
	}
	defer healLinks(links)
	if err := eachLink(links, func(l *Link) error { return l.Latency(Downstream, f.Delay, 0) }); err != nil {
		return err
	}
	defer env.window(f.Name(), linkNames(links)...)()
	wctx, cancel := context.WithTimeout(ctx, f.MaxWait)
	defer cancel()
	_, _ = env.Clients.NextAcquire(wctx)
	return nil
}

// ClientPartition cuts a holder off Redis (its links go silent) while it
// runs a long critical section of Work: renewals stop, nobody tells it.
type ClientPartition struct{ Work time.Duration }

// Name implements Fault.
func (ClientPartition) Name() string { return "client-partition" }

// Inject implements Fault.
func (f ClientPartition) Inject(ctx context.Context, env *Env) error {
	s, ok := awaitSlow(ctx, env, f.Work)
	if !ok {
		return nil
	}
	links := env.Cluster.ClientLinks(s.Client)
	defer healLinks(links)
	if err := eachLink(links, func(l *Link) error { return l.Blackhole(Both) }); err != nil {
		return err
	}
	defer env.window(f.Name(), append([]string{fmt.Sprintf("client%d", s.Client)}, linkNames(links)...)...)()
	sleepCtx(ctx, time.Until(s.At.Add(f.Work)))
	return nil
}

// ClientPause freezes a holder for Pause (a stop-the-world GC pause): its
// worker, its watchdog and every Redis call it makes.
type ClientPause struct{ Pause time.Duration }

// Name implements Fault.
func (ClientPause) Name() string { return "client-pause" }

// Inject implements Fault.
func (f ClientPause) Inject(ctx context.Context, env *Env) error {
	client, _, err := env.Clients.Holder(ctx, env.Rand)
	if err != nil {
		return nil
	}
	env.Clients.Pause(client)
	defer env.Clients.Resume(client)
	defer env.window(f.Name(), fmt.Sprintf("client%d", client))()
	sleepCtx(ctx, f.Pause)
	return nil
}

// SlowHolder makes the next critical section run for Work (past the TTL),
// the seed's 7 s job under a 5 s TTL, scaled down.
type SlowHolder struct{ Work time.Duration }

// Name implements Fault.
func (SlowHolder) Name() string { return "slow-holder" }

// Inject implements Fault.
func (f SlowHolder) Inject(ctx context.Context, env *Env) error {
	if s, ok := awaitSlow(ctx, env, f.Work); ok {
		defer env.window(f.Name(), fmt.Sprintf("client%d", s.Client))()
		sleepCtx(ctx, time.Until(s.At.Add(f.Work)))
	}
	return nil
}

// awaitSlow asks for the next critical section to run for work and waits
// until one takes it; false when ctx ends first (the request is dropped).
func awaitSlow(ctx context.Context, env *Env, work time.Duration) (SlowStart, bool) {
	started := env.Clients.SlowNext(work)
	defer env.Clients.CancelSlow()
	select {
	case s := <-started:
		return s, true
	case <-ctx.Done():
		return SlowStart{}, false
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

// Inject implements Fault.
func (f *NodeRestart) Inject(ctx context.Context, env *Env) error {
	if _, _, err := env.Clients.Holder(ctx, env.Rand); err != nil {
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

// MinorityPartition cuts every client off one node for Duration (with
// three nodes, a minority).
type MinorityPartition struct{ Duration time.Duration }

// Name implements Fault.
func (MinorityPartition) Name() string { return "minority-partition" }

// Inject implements Fault.
func (f MinorityPartition) Inject(ctx context.Context, env *Env) error {
	slot := env.Rand.IntN(env.Cluster.Slots())
	links := env.Cluster.SlotLinks(slot)
	defer healLinks(links)
	if err := eachLink(links, func(l *Link) error { return l.Blackhole(Both) }); err != nil {
		return err
	}
	defer env.window(f.Name(), env.Cluster.Node(slot).Name())()
	sleepCtx(ctx, f.Duration)
	return nil
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
	if _, err := env.Clients.NextAcquire(ctx); err != nil {
		return nil
	}
	old := c.Primary()
	end := env.window(f.Name(), old.Name(), c.Replica().Name())
	defer end()
	if err := old.Kill(); err != nil {
		return err
	}
	if err := heal(c.Failover); err != nil {
		return err
	}
	// Let the clients work on the new primary before the old one rejoins.
	sleepCtx(ctx, env.TTL)
	return heal(c.Rejoin)
}

// eachLink applies a fault to every link, stopping at the first error
// (the caller's deferred healLinks undoes what was applied).
func eachLink(ls []*Link, apply func(*Link) error) error {
	for _, l := range ls {
		if err := apply(l); err != nil {
			return err
		}
	}
	return nil
}

func healLinks(ls []*Link) {
	var errs []error
	for _, l := range ls {
		errs = append(errs, l.Heal())
	}
	_ = errors.Join(errs...)
}
