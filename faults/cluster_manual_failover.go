package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "cluster-manual-failover", Family: FamilyFailover,
		Doc: "on Redis Cluster, right after a fresh lock acquisition (its critical section runs Duration, default " +
			"0.9x TTL), the lock key's replica takes over by CLUSTER FAILOVER with Mode: \"\" (the safe handover: " +
			"the primary stops its clients until the replica caught up), force (no handshake with the primary) or " +
			"takeover (no election either); replication lags Latency (default TTL/100)",
		Moment: "the cluster promoted the replica while a pod believed it held a lease taken from the old primary",
		Danger: promotedUnder("the cluster", ""),
		Needs:  Needs{NodeControl: true, Cluster: true},
		Params: ClusterManualFailoverParams{}})
}

// ClusterManualFailoverModes are CLUSTER FAILOVER's modes, "" the default.
var ClusterManualFailoverModes = []string{"", "force", "takeover"}

// ClusterManualFailoverParams are cluster-manual-failover's parameters.
type ClusterManualFailoverParams struct {
	// Mode is CLUSTER FAILOVER's option: "" (default), force or takeover.
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Latency is the replication lag. Default TTL/100.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
}

// Validate implements Params.
func (p ClusterManualFailoverParams) Validate() error {
	switch p.Mode {
	case "", "force", "takeover":
	default:
		return fmt.Errorf("%w: cluster-manual-failover mode %q (valid: \"\" for the safe handover, force, takeover)",
			ErrInvalidConfig, p.Mode)
	}
	return nonNegative("cluster-manual-failover", p.Latency, p.Duration)
}

// Scaled implements Params.
func (p ClusterManualFailoverParams) Scaled(k float64) Params {
	p.Latency, p.Duration = scale(p.Latency, k), scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p ClusterManualFailoverParams) Build(ttl time.Duration) Fault {
	return &ClusterManualFailover{Mode: p.Mode, Lag: or(p.Latency, ttl/100), Hold: or(p.Duration, ttl*9/10)}
}

// ClusterManualFailover is the failover an operator (or a managed
// service's maintenance) starts: the replica of the lock key's shard takes
// over while the primary lives. The default mode waits for the replica to
// catch up first; force and takeover do not, and what the lagging stream
// still held is gone when the old primary turns replica.
type ClusterManualFailover struct {
	Mode string
	Lag  time.Duration
	Hold time.Duration
}

// Name implements Fault.
func (*ClusterManualFailover) Name() string { return "cluster-manual-failover" }

// Inject implements Fault.
func (f *ClusterManualFailover) Inject(ctx context.Context, env *Env) error {
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
	if err := c.ManualFailover(ctx, r, f.Mode); err != nil {
		return err
	}
	if c.AwaitPromotion(ctx, r, deployment.ClusterReadyTimeout, func() { probeKeys(env, c.Node(r)) }) {
		wait.Sleep(ctx, env.TTL/2) // the pods take the lock while the fresh holder works
	}
	// The old primary turns replica by itself once it hears of the new
	// epoch; the cell goes on once it has.
	return heal(c.WaitClusterSettled)
}
