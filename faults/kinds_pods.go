package faults

import (
	"context"
	"time"
)

// The fault kinds that act on the pods themselves.
func init() {
	for _, k := range []Kind{
		{Name: "client-pause", Doc: "freeze a holder (worker, watchdog, every Redis connection) for Pause",
			Moment: "a paused holder's lease lapsed during the pause while another pod tried for the key", Danger: outlived("was paused", "the pause"),
			Build: func(s Spec, ttl time.Duration) Fault { return ClientPause{Pause: or(s.Pause, ttl+ttl/2)} }},
		{Name: "slow-holder", Doc: "the next critical section runs for Work (past the TTL)",
			Moment: "a critical section ran past its lease while another pod tried for the key", Danger: outlived("worked", "the slow critical section"),
			Build: func(s Spec, ttl time.Duration) Fault { return SlowHolder{Work: or(s.Work, ttl+ttl/2)} }},
	} {
		if err := RegisterKind(k); err != nil {
			panic(err)
		}
	}
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
	defer env.window(f.Name(), podTarget(pod))()
	sleepCtx(ctx, f.Pause)
	return nil
}

// SlowHolder makes the next critical section run for Work (past the TTL),
// the seed's 7 s job under a 5 s TTL, scaled down.
type SlowHolder struct{ Work time.Duration }

// Name implements Fault.
func (SlowHolder) Name() string { return "slow-holder" }

// Inject implements Fault.
func (f SlowHolder) Inject(ctx context.Context, env *Env) error {
	if pod, at, ok := env.Pods.AwaitSlow(ctx, f.Work); ok {
		defer env.window(f.Name(), podTarget(pod))()
		sleepCtx(ctx, time.Until(at.Add(f.Work)))
	}
	return nil
}
