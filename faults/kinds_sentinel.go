package faults

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault kinds of the Sentinel topology: the harness breaks the
// primary, and the Sentinels decide on their own when and whether to fail
// over; the fault only watches, probes and heals.
func init() {
	for _, k := range []Kind{
		{Name: "sentinel-failover", Doc: "right after a fresh lock acquisition, whose critical section runs Duration (default 0.9x TTL, to outlast the failover), kill the primary before its replica has the key (replication lags Latency, default TTL/100, well under the Sentinels' down-after); the Sentinels promote the replica on their own timing",
			Moment: "the Sentinels promoted the replica while a pod believed it held a lease taken from the dead primary", Danger: promotedUnderLease,
			Needs: Needs{NodeControl: true, Sentinel: true},
			Build: func(s Spec, ttl time.Duration) Fault {
				return &SentinelFailover{Lag: or(s.Latency, ttl/100), Hold: or(s.Duration, ttl*9/10)}
			}},
		{Name: "sentinel-partition", Doc: "cut the primary off from the Sentinels and its replica (the pods still reach it) until the Sentinels promote the replica; then heal, and the old primary rejoins as a replica, losing what it took meanwhile",
			Moment: "the Sentinels promoted the replica while a pod believed it held a lease taken from the cut-off primary", Danger: promotedUnderLease,
			Needs: Needs{NodeControl: true, Sentinel: true},
			Build: func(s Spec, ttl time.Duration) Fault { return &SentinelFailover{cutOff: true} }},
	} {
		if err := RegisterKind(k); err != nil {
			panic(err)
		}
	}
}

// SentinelFailover breaks the primary of a Sentinel deployment and lets
// the Sentinels fail over: killed right after a fresh acquisition, whose
// key the lagging replication has not delivered (the seed's claim: a
// freshly written lock key is lost); or, with cutOff, cut off from the
// Sentinels and the replica while the pods still reach it, so locks taken
// there meanwhile exist only on a primary about to be demoted.
type SentinelFailover struct {
	// Lag holds replication back (on the primary's side proxy), so the
	// fresh key is still in flight when the primary dies. Not used cut off.
	// The Sentinels' pings take the same proxy: a lag near their
	// down-after would make them fail over on their own.
	Lag time.Duration
	// Hold is how long the fresh holder's critical section runs: long
	// enough that it still works when the Sentinels have failed over
	// (their timing, not ours: 0.6 s quiet, over 2 s on a busy machine).
	Hold   time.Duration
	cutOff bool
}

// Name implements Fault.
func (f *SentinelFailover) Name() string {
	if f.cutOff {
		return "sentinel-partition"
	}
	return "sentinel-failover"
}

// Inject implements Fault.
func (f *SentinelFailover) Inject(ctx context.Context, env *Env) error {
	c := env.Cluster
	if c.Topology() != Sentinel {
		return fmt.Errorf("%s needs the Sentinel topology: %w", f.Name(), ErrTopology)
	}
	// The Sentinels are the truth about which node is primary: they may
	// have failed over on their own (a node that answered too slowly).
	if i := c.SentinelPrimary(ctx); i >= 0 {
		c.primary = i
	}
	oldIdx := c.primary
	old, replica := c.Primary(), c.Replica()
	side := c.SideLink(oldIdx)
	if f.cutOff {
		if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
			return nil
		}
	} else {
		if err := f.lagReplication(ctx, env); err != nil {
			return err
		}
		// A fresh acquisition (its key still in the lagging stream), whose
		// holder goes on working through the failover.
		if _, _, ok := env.Pods.AwaitSlow(ctx, f.Hold); !ok {
			return nil
		}
	}
	end := env.window(f.Name(), old.Name(), replica.Name())
	defer end()
	// Whatever the side proxy still holds back is lost with the primary, as
	// writes in a dying primary's replication buffer are.
	if err := side.Disable(); err != nil {
		return err
	}
	if !f.cutOff {
		if err := old.Kill(); err != nil {
			return err
		}
	}
	if f.awaitFailover(ctx, env, replica, 1-oldIdx) {
		// Let the pods find the new primary and work on it for a lease.
		sleepCtx(ctx, env.TTL)
	}
	return heal(func(hctx context.Context) error { return f.rejoin(hctx, c, old, oldIdx) })
}

// lagReplication puts the lag on the current primary's side proxy only
// (the previous primary's lag, if any, goes), and lets it settle once.
func (f *SentinelFailover) lagReplication(ctx context.Context, env *Env) error {
	c := env.Cluster
	for i := range c.Nodes() {
		l := c.SideLink(i)
		has := slices.Contains(l.Toxics(), "latency_downstream")
		switch {
		case i == c.primary && !has:
			if err := l.Latency(Downstream, f.Lag, 0); err != nil {
				return err
			}
			sleepCtx(ctx, f.Lag+env.TTL)
		case i != c.primary && has:
			if err := l.Heal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// awaitFailover waits for the Sentinels: the replica turning primary (then
// its keys are probed at once, before any client is told to use it), and
// the Sentinels naming it. A replica seen turning primary counts as
// failed over even if the Sentinels are slow to name it (they will). False
// if neither happened within their election timeout and a margin (a
// failover that never came is reported by the window's judgment, not
// faked). One connection each to the replica and the Sentinels: polled
// every few milliseconds, fresh connections would number thousands.
func (f *SentinelFailover) awaitFailover(ctx context.Context, env *Env, replica RedisNode, replicaIdx int) bool {
	c := env.Cluster
	sc := c.cfg.Sentinel.withDefaults()
	deadline := time.Now().Add(10*sc.DownAfter + 4*sc.FailoverTimeout + 2*time.Second)
	role := admin(replica.Addr())
	defer role.Close()
	sentinels := make([]*redis.Client, len(c.sentinels))
	for i, s := range c.sentinels {
		sentinels[i] = admin(s.Addr())
		defer sentinels[i].Close()
	}
	probed := false
	for tick := 0; ctx.Err() == nil && time.Now().Before(deadline); tick++ {
		if !probed {
			if r, err := role.Do(ctx, "ROLE").Slice(); err == nil && len(r) > 0 && r[0] == "master" {
				probeKeys(env, replica)
				probed = true
			}
		}
		if probed && tick%5 == 0 && c.namedPrimary(ctx, sentinels) == replicaIdx {
			return true
		}
		sleepCtx(ctx, 2*time.Millisecond)
	}
	return probed
}

// rejoin brings the old primary back as the replica of the one the
// Sentinels name now: the side proxy open again, the process restarted
// (empty) if it was killed, and REPLICAOF the primary, as a restarted
// node's start-up script does after asking the Sentinels (they would
// otherwise convert it after their own info period). A cut-off primary
// drops what it took meanwhile. If the Sentinels still name the old node
// (no failover), its replica syncs from it again.
func (f *SentinelFailover) rejoin(ctx context.Context, c *Cluster, old RedisNode, oldIdx int) error {
	if err := c.SideLink(oldIdx).Enable(); err != nil {
		return err
	}
	if old.State() == NodeKilled {
		if err := old.Start(ctx); err != nil {
			return err
		}
	}
	now := c.SentinelPrimary(ctx)
	if now < 0 {
		now = c.primary
	}
	c.primary = now
	if now == oldIdx {
		return waitSynced(ctx, c.Replica(), old, c.cfg.SyncTimeout)
	}
	if err := old.ReplicaOf(ctx, c.SideLink(now).Addr()); err != nil {
		return err
	}
	return waitSynced(ctx, old, c.Nodes()[now], c.cfg.SyncTimeout)
}
