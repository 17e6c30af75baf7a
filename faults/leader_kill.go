package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "leader-kill", Family: FamilyFailover,
		Doc: "on etcd, right after a fresh lock acquisition (its critical section runs Duration, default 0.9x TTL), " +
			"kill the raft leader (SIGKILL); the other members elect a new one; the old leader restarts after Down " +
			"(default 2x TTL) with its data and rejoins",
		Moment: "the leader died while a pod held a lease and another pod tried for the key before it was released",
		Danger: heldThrough("the leader's death"),
		Needs:  Needs{NodeControl: true},
		Params: LeaderKillParams{}})
}

// LeaderKillParams are leader-kill's parameters.
type LeaderKillParams struct {
	// Duration is the fresh holder's critical section. Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Down is how long the old leader stays dead. Default 2x TTL.
	Down time.Duration `yaml:"down,omitempty" json:"down,omitempty"`
}

// Validate implements Params.
func (p LeaderKillParams) Validate() error { return nonNegative("leader-kill", p.Duration, p.Down) }

// Scaled implements Params.
func (p LeaderKillParams) Scaled(k float64) Params {
	p.Duration, p.Down = scale(p.Duration, k), scale(p.Down, k)
	return p
}

// Build implements Params.
func (p LeaderKillParams) Build(ttl time.Duration) Fault {
	return LeaderKill{Hold: or(p.Duration, ttl*9/10), Down: or(p.Down, 2*ttl)}
}

// LeaderKill kills the etcd leader under a fresh holder. Raft commits a
// write on a majority before it answers, so the lock key survives the
// leader; what the kill tests is what the new leader does with the
// leases (it refreshes every lease's expiry on election) and how long
// the pods wait.
type LeaderKill struct{ Hold, Down time.Duration }

// Name implements Fault.
func (LeaderKill) Name() string { return "leader-kill" }

// Inject implements Fault.
func (f LeaderKill) Inject(ctx context.Context, env *Env) (err error) {
	c := env.Deployment
	lead, ok, err := leaderUnderFreshHolder(ctx, env, f.Name(), f.Hold)
	if !ok {
		return err
	}
	node := c.Node(lead)
	// Down: the lock must go on with the two members left (fault-tolerant).
	end := env.window(f.Name(), history.Hit{Nodes: []string{node.Name()}, Down: []string{node.Name()}})
	defer end()
	defer func() { // back with its data, also when ctx ended half-way
		err = errors.Join(err, heal(node.Start))
		if err == nil {
			err = heal(func(hctx context.Context) error { return c.WaitConsensusHealthy(hctx, 20*time.Second) })
		}
	}()
	if err := node.Kill(); err != nil {
		return err
	}
	wait.Sleep(ctx, f.Down)
	return nil
}

// leaderUnderFreshHolder waits for a fresh acquisition (its critical
// section stretched to hold) and returns the raft leader then; false
// (with a nil error) when the cell ended first.
func leaderUnderFreshHolder(ctx context.Context, env *Env, fault string, hold time.Duration) (int, bool, error) {
	c := env.Deployment
	if c.Topology() != deployment.Consensus {
		return -1, false, fmt.Errorf("%s needs etcd members (the consensus topology), not %s: %w", fault, c.Topology(),
			deployment.ErrTopology)
	}
	if _, _, ok := env.Pods.AwaitSlow(ctx, hold); !ok {
		return -1, false, nil
	}
	// On a loaded machine a member may be slow to answer: wait for a
	// majority to name the leader rather than ask once.
	lead, err := c.AwaitLeader(ctx, -1, 10*time.Second)
	switch {
	case err != nil && ctx.Err() != nil:
		return -1, false, nil // the cell ended first: nothing was struck
	case err != nil:
		return -1, false, fmt.Errorf("%s: %w", fault, err)
	}
	return lead, true, nil
}

// heldThrough is the danger of a fault that strikes the servers under a
// live lease: a pod held a lock when the window opened, and another pod
// tried for the key while it still did. Whether the servers then kept
// the holder's lease is the checker's to say.
func heldThrough(what string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		holds := v.holdsAt(w.Call)
		if len(holds) == 0 {
			return w.Call, "no pod held a lock when " + what + " began", false
		}
		for _, h := range holds {
			if e, ok := v.tried(h.Key, h.Client, w.Call, min(h.End, w.Return)); ok {
				return e.Call, fmt.Sprintf("%s held %s from %s through %s at %s; %s", clientText(h.Client), h.Key,
					secs(h.Start), what, secs(w.Call), triedText(e)), true
			}
		}
		h := holds[0]
		return w.Call, fmt.Sprintf("%s held %s through %s at %s, but no other pod tried for it before it was released",
			clientText(h.Client), h.Key, what, secs(w.Call)), false
	}
}
