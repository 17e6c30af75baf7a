package faults

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "client-pause", Family: FamilyPause,
		Doc:    "freeze a holder (worker, watchdog, every Redis connection) for Pause",
		Moment: "a paused holder's lease lapsed during the pause while another pod tried for the key",
		Danger: outlived("was paused", "the pause"),
		Params: ClientPauseParams{}})
}

// ClientPauseParams are client-pause's parameters.
type ClientPauseParams struct {
	// Pause is how long the holder is frozen. Default 1.5x TTL.
	Pause time.Duration `yaml:"pause,omitempty" json:"pause,omitempty"`
}

// Validate implements Params.
func (p ClientPauseParams) Validate() error { return nonNegative("client-pause", p.Pause) }

// Scaled implements Params.
func (p ClientPauseParams) Scaled(k float64) Params { p.Pause = scale(p.Pause, k); return p }

// Build implements Params.
func (p ClientPauseParams) Build(ttl time.Duration) Fault {
	return ClientPause{Pause: or(p.Pause, ttl+ttl/2)}
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
