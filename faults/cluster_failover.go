package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "cluster-failover", Family: FamilyFailover,
		Doc: "on Redis Cluster, right after a fresh lock acquisition (its critical section runs Duration, default " +
			"0.9x TTL), kill the primary of the lock key's slot before its replica has the key (replication lags " +
			"Latency, default TTL/100); the cluster promotes the replica after cluster-node-timeout and an election",
		Moment: "the cluster promoted the replica while a pod believed it held a lease taken from the dead primary",
		Danger: promotedUnder("the cluster", ""),
		Needs:  Needs{NodeControl: true, Cluster: true},
		Params: ClusterFailoverParams{}})
}

// ClusterFailoverParams are cluster-failover's parameters.
type ClusterFailoverParams struct {
	// Latency is the replication lag. Default TTL/100.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
}

// Validate implements Params.
func (p ClusterFailoverParams) Validate() error {
	return nonNegative("cluster-failover", p.Latency, p.Duration)
}

// Scaled implements Params.
func (p ClusterFailoverParams) Scaled(k float64) Params {
	p.Latency, p.Duration = scale(p.Latency, k), scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p ClusterFailoverParams) Build(ttl time.Duration) Fault {
	return &ClusterFailover{Lag: or(p.Latency, ttl/100), Hold: or(p.Duration, ttl*9/10)}
}

// ClusterFailover kills the primary serving the lock key right after a
// fresh acquisition, whose key the lagging replication has not delivered
// (asynchronous replication, "last failover wins": the specification's
// claim that a fresh write is lost), and lets the cluster fail over on its
// own. Then the old primary comes back, empty, and rejoins as the replica.
type ClusterFailover struct {
	// Lag holds the shard's replication back, so the fresh key is still
	// in flight when the primary dies. The bus has links of its own: the
	// lag does not slow failure detection.
	Lag time.Duration
	// Hold is how long the fresh holder's critical section runs: long
	// enough that it still works when the cluster has failed over.
	Hold time.Duration
}

// Name implements Fault.
func (*ClusterFailover) Name() string { return "cluster-failover" }

// Inject implements Fault.
func (f *ClusterFailover) Inject(ctx context.Context, env *Env) (err error) {
	c := env.Deployment
	p, r, err := keyShard(ctx, env)
	if err != nil {
		return err
	}
	if err := lagShard(ctx, env, r, f.Lag); err != nil {
		return err
	}
	if _, _, ok := env.Pods.AwaitSlow(ctx, f.Hold); !ok {
		return nil
	}
	end := env.window(f.Name(), history.Hit{Nodes: []string{c.Node(p).Name(), c.Node(r).Name()}})
	defer end()
	healed := false
	// The old primary comes back at once, as a supervisor restarts it, and
	// rejoins as the replica. Until it answers MOVED a go-redis cluster
	// client does not look for the new primary: it reloads its slot map on
	// a redirect or every 60 s, and a dead node sends no redirect.
	restore := func() error {
		healed = true
		return heal(func(hctx context.Context) error {
			return c.Node(p).Start(hctx)
		})
	}
	defer func() { // also when a step fails or ctx ends half-way
		if !healed {
			err = errors.Join(err, restore())
		}
		if err == nil {
			err = heal(c.WaitClusterSettled)
		}
	}()
	if err := c.Node(p).Kill(); err != nil {
		return err
	}
	// What the replication stream still held back dies with the primary:
	// its connection is dropped with the lag's backlog (a blackhole added
	// behind the lag would first let that backlog through: measured, the
	// replica then had the fresh key in 2 of 3 failovers of one cell).
	if err := c.DropReplication(r); err != nil {
		return err
	}
	promoted := c.AwaitPromotion(ctx, r, deployment.ClusterReadyTimeout, func() { probeKeys(env, c.Node(r)) })
	if err := restore(); err != nil {
		return err
	}
	if promoted {
		wait.Sleep(ctx, env.TTL/2) // the pods find the new primary and take the lock while the holder works
	}
	return nil
}

// keyShard returns the node serving the cell's first lock key and its
// replica.
func keyShard(ctx context.Context, env *Env) (primary, replica int, err error) {
	c := env.Deployment
	if c.Topology() != deployment.Cluster {
		return -1, -1, fmt.Errorf("a cluster fault needs the cluster topology, not %s: %w", c.Topology(), deployment.ErrTopology)
	}
	if len(env.Keys) == 0 {
		return -1, -1, fmt.Errorf("a cluster fault needs the cell's lock key: %w", deployment.ErrTopology)
	}
	return c.KeyNodes(ctx, env.Keys[0])
}

// lagShard delays replication inside replica's shard by lag, both ways
// (whichever node is the replica after the next failover lags too); when
// a link lacked the lag, it lets the lag settle.
func lagShard(ctx context.Context, env *Env, replica int, lag time.Duration) error {
	c := env.Deployment
	name := netfault.ToxicName(netfault.LatencyToxic, netfault.Downstream)
	added := false
	for _, l := range []*netfault.Link{c.ReplicationLinkOf(replica), c.ReplicationLinkOf(c.ShardPeer(replica))} {
		if slices.Contains(l.Toxics(), name) {
			continue
		}
		if err := l.Latency(netfault.Downstream, lag, 0); err != nil {
			return err
		}
		added = true
	}
	if added {
		wait.Sleep(ctx, lag+env.TTL)
	}
	return nil
}
