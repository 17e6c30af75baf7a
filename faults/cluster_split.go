package faults

import (
	"context"
	"errors"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "cluster-split", Family: FamilyServerSplit,
		Doc: "on Redis Cluster, right after a fresh lock acquisition (its critical section runs Duration, default " +
			"0.9x TTL; replication lags Latency, default TTL/100), cut the primary of the lock key's slot from every " +
			"other node (bus and replication, both ways) and from the pods of the other half, the holder's half " +
			"still reaching it; the majority promotes the replica after cluster-node-timeout, the cut-off primary " +
			"refuses writes once it counts itself in the minority; healed After (default 0) past the promotion",
		Moment: "the cluster promoted the replica while a pod believed it held a lease taken from the cut-off primary",
		Danger: promotedUnder("the cluster", ""),
		Needs:  Needs{NodeControl: true, Cluster: true},
		Params: ClusterSplitParams{}})
}

// ClusterSplitParams are cluster-split's parameters.
type ClusterSplitParams struct {
	// Latency is the replication lag. Default TTL/100.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// After is how long the split lasts once the replica is promoted.
	// Default 0: healed at once, a brief partition. A go-redis cluster
	// client cut from the old primary finds the new one only through a
	// redirect (MOVED), which the old primary sends once it has rejoined:
	// a long split keeps its pods from the lock rather than giving it
	// twice.
	After time.Duration `yaml:"after,omitempty" json:"after,omitempty"`
}

// Validate implements Params.
func (p ClusterSplitParams) Validate() error {
	return nonNegative("cluster-split", p.Latency, p.Duration, p.After)
}

// Scaled implements Params.
func (p ClusterSplitParams) Scaled(k float64) Params {
	p.Latency, p.Duration, p.After = scale(p.Latency, k), scale(p.Duration, k), scale(p.After, k)
	return p
}

// Build implements Params.
func (p ClusterSplitParams) Build(ttl time.Duration) Fault {
	return &ClusterSplit{Lag: or(p.Latency, ttl/100), Hold: or(p.Duration, ttl*9/10), After: p.After}
}

// ClusterSplit is the partition the cluster specification warns of: a
// primary in the minority keeps taking writes until cluster-node-timeout,
// while the majority side promotes its replica; what the old primary took
// and had not passed on is lost when it rejoins as a replica.
type ClusterSplit struct {
	Lag, Hold, After time.Duration
}

// Name implements Fault.
func (*ClusterSplit) Name() string { return "cluster-split" }

// Inject implements Fault.
func (f *ClusterSplit) Inject(ctx context.Context, env *Env) (err error) {
	c := env.Deployment
	p, r, err := keyShard(ctx, env)
	if err != nil {
		return err
	}
	if err := lagShard(ctx, env, r, f.Lag); err != nil {
		return err
	}
	holder, _, ok := env.Pods.AwaitSlow(ctx, f.Hold)
	if !ok {
		return nil
	}
	cut := c.PeerLinks(p)
	for pod := range env.Pods.Pods() {
		if pod%2 != holder%2 {
			cut = append(cut, c.Link(pod, p))
		}
	}
	end := env.window(f.Name(), history.Hit{Nodes: []string{c.Node(p).Name(), c.Node(r).Name()}})
	defer end()
	// A quiet partition (blackholes): nobody is told, as when a switch
	// drops the packets; closing the proxies' listeners instead would
	// risk their ports being taken before they listen again. Healing
	// takes the replication lag off too; the next split puts it back.
	var cutOff []*netfault.Link
	defer func() { // healed also when ctx ends half-way
		for _, l := range cutOff {
			err = errors.Join(err, l.Heal())
		}
		if err == nil {
			err = heal(c.WaitClusterSettled)
		}
	}()
	// The replication connection is dropped first, with what the lag
	// still holds back, the fresh key among it: a blackhole added behind
	// the lag would let that backlog through. The replica connects again
	// on its next second's cron, into the blackhole.
	if err := c.DropReplication(r); err != nil {
		return err
	}
	for _, l := range cut {
		cutOff = append(cutOff, l)
		if err := l.Blackhole(netfault.Both); err != nil {
			return err
		}
	}
	if c.AwaitPromotion(ctx, r, deployment.ClusterReadyTimeout, func() { probeKeys(env, c.Node(r)) }) {
		wait.Sleep(ctx, f.After)
	}
	return nil
}
