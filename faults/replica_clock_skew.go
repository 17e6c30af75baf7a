package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "replica-clock-skew", Family: FamilyClock,
		Doc: "the replica's wall clock runs Jump ahead (default 2x TTL); while a lock is held the primary dies and " +
			"the replica is promoted",
		Moment: "the promoted replica lacked a key a pod believed it held",
		Danger: lostOnPromotion,
		Needs:  Needs{NodeControl: true, Replica: true, Clock: true},
		Params: ReplicaClockSkewParams{}})
}

// ReplicaClockSkewParams are replica-clock-skew's parameters.
type ReplicaClockSkewParams struct {
	// Jump is how far the replica's clock runs ahead. Default 2x TTL.
	Jump time.Duration `yaml:"jump,omitempty" json:"jump,omitempty"`
}

// Validate implements Params.
func (ReplicaClockSkewParams) Validate() error { return nil }

// Scaled implements Params.
func (p ReplicaClockSkewParams) Scaled(k float64) Params { p.Jump = scale(p.Jump, k); return p }

// Build implements Params.
func (p ReplicaClockSkewParams) Build(ttl time.Duration) Fault {
	return &ReplicaClockSkew{Skew: or(p.Jump, 2*ttl)}
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
	c := env.Deployment
	if c.Topology() != deployment.PrimaryReplica {
		return fmt.Errorf("replica-clock-skew needs a primary and a replica: %w", deployment.ErrTopology)
	}
	primary, replica := c.Primary(), c.Replica()
	pc, ok1 := primary.(backend.ClockNode)
	rc, ok2 := replica.(backend.ClockNode)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: this backend cannot move node clocks", backend.ErrNoClockShim)
	}
	if err := rc.ShiftClock(pc.ClockOffset() + f.Skew - rc.ClockOffset()); err != nil {
		return err
	}
	// A fresh acquisition, and a moment for its key to reach the replica
	// (no lag here: the key is there, already expired by the replica's clock).
	if _, err := env.Pods.NextAcquire(ctx); err != nil {
		return nil
	}
	wait.Sleep(ctx, 5*time.Millisecond)
	return failOver(ctx, env, f.Name(), jumpHit(f.Skew))
}
