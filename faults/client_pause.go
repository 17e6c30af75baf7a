package faults

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "client-pause",
		Doc:    "freeze a holder (worker, watchdog, every Redis connection) for Pause",
		Moment: "a paused holder's lease lapsed during the pause while another pod tried for the key",
		Danger: outlived("was paused", "the pause"),
		Build:  func(s Spec, ttl time.Duration) Fault { return ClientPause{Pause: or(s.Pause, ttl+ttl/2)} }})
}

// ClientPause freezes a holder for Pause (a stop-the-world GC pause): its
// worker, its watchdog and every connection it made.
type ClientPause struct{ Pause time.Duration }

// Name implements Fault.
func (ClientPause) Name() string { return "client-pause" }

// Inject implements Fault.
func (f ClientPause) Inject(ctx context.Context, env *Env) error {
	pod, _, err := env.Pods.Holder(ctx, env.Rand)
	if err != nil {
		return nil // the cell ended first
	}
	env.Pods.Pause(pod)
	defer env.Pods.Resume(pod)
	defer env.window(f.Name(), podHit(pod))()
	wait.Sleep(ctx, f.Pause)
	return nil
}
