package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "slow-holder", Family: FamilySlowHolder,
		Doc:    "the next critical section runs for Work (past the TTL)",
		Moment: "a critical section ran past its lease while another pod tried for the key",
		Danger: outlived("worked", "the slow critical section"),
		Params: SlowHolderParams{}})
}

// SlowHolderParams are slow-holder's parameters.
type SlowHolderParams struct {
	// Work is the slow critical section. Default 1.5x TTL.
	Work time.Duration `yaml:"work,omitempty" json:"work,omitempty"`
}

// Validate implements Params.
func (p SlowHolderParams) Validate() error { return nonNegative("slow-holder", p.Work) }

// Scaled implements Params.
func (p SlowHolderParams) Scaled(k float64) Params { p.Work = scale(p.Work, k); return p }

// Build implements Params.
func (p SlowHolderParams) Build(ttl time.Duration) Fault {
	return SlowHolder{Work: or(p.Work, ttl+ttl/2)}
}

// SlowHolder makes the next critical section run for Work (past the TTL),
// the seed's 7 s job under a 5 s TTL, scaled down.
type SlowHolder struct{ Work time.Duration }

// Name implements Fault.
func (SlowHolder) Name() string { return "slow-holder" }

// Inject implements Fault.
func (f SlowHolder) Inject(ctx context.Context, env *Env) error {
	if pod, at, ok := env.Pods.AwaitSlow(ctx, f.Work); ok {
		defer env.window(f.Name(), history.Hit{Pods: []int{pod}})()
		wait.Sleep(ctx, time.Until(at.Add(f.Work)))
	}
	return nil
}

// outlived is the danger of a pod that keeps believing past its lease: the
// window froze, cut off or stretched a holder, and its lease lapsed before
// the window ended while another pod was trying for the key.
func outlived(what, during string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		pod, ok := podOf(w)
		if !ok {
			return w.Call, "no pod named in the window", false
		}
		h, ok := v.heldAt(pod, w.Call)
		if !ok {
			return w.Call, fmt.Sprintf("%s held no lock when %s began", clientText(pod), during), false
		}
		end := v.leaseEndOf(h, w.Call)
		exp := end.at
		// The window ends when the fault's goroutine wakes, which on a
		// loaded machine can be after the pod already released: a lease
		// its holder deleted did not lapse under it.
		stop := min(w.Return, h.End)
		if stop <= exp {
			if end.observed && exp == history.Forever {
				return w.Call, fmt.Sprintf("%s: the lease outlived %s", v.lapsed(h, end), during), false
			}
			if end.observed {
				return w.Call, fmt.Sprintf("%s, %s after %s ended at %s: the lease outlived %s",
					v.lapsed(h, end), span(stop, exp), during, secs(stop), during), false
			}
			return w.Call, fmt.Sprintf("%s ended at %s, before %s", during, secs(stop), v.lapsed(h, end)), false
		}
		e, ok := v.tried(h.Key, pod, max(exp, w.Call), stop)
		if !ok {
			return w.Call, fmt.Sprintf("%s during %s, but no other pod tried for %s before it ended",
				v.lapsed(h, end), during, h.Key), false
		}
		return exp, fmt.Sprintf("%s %s %s from %s; %s; %s",
			clientText(pod), what, span(w.Call, w.Return), secs(w.Call), v.lapsed(h, end), triedText(e)), true
	}
}
