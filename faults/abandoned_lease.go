package faults

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

func init() {
	mustRegister(Kind{Name: "abandoned-lease", Family: FamilyHolderHang,
		Doc: "a holder's worker never releases (a hung goroutine, a forgotten release, a recovered panic) " +
			"while its process lives on: whatever the lock runs in the background keeps running",
		Moment: "a holder abandoned a live lease while another pod kept trying for the key",
		Danger: stoppedHolding("abandoned"),
		Params: AbandonedLeaseParams{}})
}

// AbandonedLeaseParams are abandoned-lease's parameters: none.
type AbandonedLeaseParams struct{}

// Validate implements Params.
func (AbandonedLeaseParams) Validate() error { return nil }

// Scaled implements Params.
func (p AbandonedLeaseParams) Scaled(float64) Params { return p }

// Build implements Params.
func (AbandonedLeaseParams) Build(time.Duration) Fault { return AbandonedLease{} }

// AbandonedLease makes a holder's worker hang holding its lease for the
// rest of the cell, while its process (and a watchdog in it) lives on:
// the trap of a lock that renews for a holder that will never finish.
type AbandonedLease struct{}

// Name implements Fault.
func (AbandonedLease) Name() string { return "abandoned-lease" }

// Inject implements Fault. It leaves at least minAlive pods alive.
func (f AbandonedLease) Inject(ctx context.Context, env *Env) error {
	if env.Pods.Alive() <= minAlive {
		return nil
	}
	pod, _, err := env.Pods.Holder(ctx, env.Rand)
	if err != nil {
		return nil // the cell ended first
	}
	end := env.window(f.Name(), history.Hit{Pods: []int{pod}, StopsHolder: true, Abandons: true})
	defer end()
	if _, err := env.Pods.Abandon(ctx, pod); err != nil {
		return nil // the cell ended before the worker hung
	}
	return nil
}
