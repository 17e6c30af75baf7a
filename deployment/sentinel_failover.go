package deployment

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/redis/go-redis/v9"
)

// AwaitSentinelFailover waits for the Sentinels to fail over to node
// replicaIdx: the replica turning primary (promoted is called at once,
// before any client is told to use it), and the Sentinels naming it. A
// replica seen turning primary counts as failed over even if the
// Sentinels are slow to name it (they will). False
// if neither happened within their election timeout and a margin (a
// failover that never came is reported by the window's judgment, not
// faked). One connection each to the replica and the Sentinels: polled
// every few milliseconds, fresh connections would number thousands.
func (c *Deployment) AwaitSentinelFailover(ctx context.Context, replicaIdx int, promoted func()) bool {
	replica := c.nodes[replicaIdx]
	sc := c.cfg.Sentinel.withDefaults()
	deadline := time.Now().Add(10*sc.DownAfter + 4*sc.FailoverTimeout + 2*time.Second)
	role := backend.Admin(replica.Addr())
	defer role.Close()
	sentinels := make([]*redis.Client, len(c.sentinels))
	for i, s := range c.sentinels {
		sentinels[i] = backend.Admin(s.Addr())
	}
	defer closeClients(sentinels)
	probed := false
	for tick := 0; ctx.Err() == nil && time.Now().Before(deadline); tick++ {
		if !probed {
			if r, err := role.Do(ctx, "ROLE").Slice(); err == nil && len(r) > 0 && r[0] == "master" {
				promoted()
				probed = true
			}
		}
		if probed && tick%5 == 0 && c.namedPrimary(ctx, sentinels) == replicaIdx {
			return true
		}
		wait.Sleep(ctx, 2*time.Millisecond)
	}
	return probed
}

// SentinelRejoin brings the old primary (node oldIdx) back as the replica
// of the one the Sentinels name now: the side proxy open again, the process restarted
// (empty) if it was killed, and REPLICAOF the primary, as a restarted
// node's start-up script does after asking the Sentinels (they would
// otherwise convert it after their own info period). A cut-off primary
// drops what it took meanwhile. If the Sentinels still name the old node
// (no failover), its replica syncs from it again.
func (c *Deployment) SentinelRejoin(ctx context.Context, oldIdx int) error {
	old := c.nodes[oldIdx]
	if err := c.SideLink(oldIdx).Enable(); err != nil {
		return err
	}
	if old.State() == backend.NodeKilled {
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

// SyncPrimary makes the node the Sentinels name the deployment's primary
// (they may have failed over on their own: a node that answered too
// slowly) and returns its index. The Sentinels are the truth about which
// node is primary.
func (c *Deployment) SyncPrimary(ctx context.Context) int {
	if i := c.SentinelPrimary(ctx); i >= 0 {
		c.primary = i
	}
	return c.primary
}

// PrimaryIndex returns the index of the node clients are pointed at.
func (c *Deployment) PrimaryIndex() int { return c.primary }
