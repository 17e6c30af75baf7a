package faults

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "leader-isolated", Family: FamilyServerSplit,
		Doc: "on etcd, right after a fresh lock acquisition (its critical section runs Duration, default 0.9x TTL), " +
			"cut the raft leader from its peers for Cut (default 2x TTL) while every pod still reaches it; " +
			"the other two elect a new leader, the old one steps down when it misses a quorum",
		Moment: "the leader was cut off while a pod held a lease and another pod tried for the key before it was released",
		Danger: heldThrough("the leader's isolation"),
		Params: LeaderIsolatedParams{}})
}

// LeaderIsolatedParams are leader-isolated's parameters.
type LeaderIsolatedParams struct {
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Cut is how long the leader stays cut from its peers. Default 2x TTL.
	Cut time.Duration `yaml:"cut,omitempty" json:"cut,omitempty"`
}

// Validate implements Params.
func (p LeaderIsolatedParams) Validate() error {
	return nonNegative("leader-isolated", p.Duration, p.Cut)
}

// Scaled implements Params.
func (p LeaderIsolatedParams) Scaled(k float64) Params {
	p.Duration, p.Cut = scale(p.Duration, k), scale(p.Cut, k)
	return p
}

// Build implements Params.
func (p LeaderIsolatedParams) Build(ttl time.Duration) Fault {
	return LeaderIsolated{Hold: or(p.Duration, ttl*9/10), Cut: or(p.Cut, 2*ttl)}
}

// LeaderIsolated is the split brain a consensus store is built to
// survive: the old leader, still reached by every pod, can no longer
// commit (it needs a majority), and a new leader is elected behind it.
type LeaderIsolated struct{ Hold, Cut time.Duration }

// Name implements Fault.
func (LeaderIsolated) Name() string { return "leader-isolated" }

// Inject implements Fault.
func (f LeaderIsolated) Inject(ctx context.Context, env *Env) (err error) {
	c := env.Deployment
	lead, ok, err := leaderUnderFreshHolder(ctx, env, f.Name(), f.Hold)
	if !ok {
		return err
	}
	links := c.MemberPeerLinks(lead)
	defer func() { // after the links heal (deferred calls run last first)
		if err == nil {
			err = heal(func(hctx context.Context) error { return c.WaitConsensusHealthy(hctx, 20*time.Second) })
		}
	}()
	defer healLinks(links, &err)
	// The quiet partition: connections stay open, nothing arrives; the
	// members notice by their heartbeats, as across a real network.
	if err := eachLink(links, func(l *netfault.Link) error { return l.Blackhole(netfault.Both) }); err != nil {
		return err
	}
	defer env.window(f.Name(), history.Hit{Nodes: []string{c.Node(lead).Name()}})()
	wait.Sleep(ctx, f.Cut)
	return nil
}
