package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "pod-crash", Family: FamilyHolderCrash,
		Doc: "a holder dies for good (OOMKilled): its worker stops, its connections close, its dials are refused, " +
			"a driver process gets SIGKILL; restart: DURATION brings it back as a fresh pod after that delay",
		Moment: "a pod died holding a live lease while another pod kept trying for the key",
		Danger: stoppedHolding("crashed"),
		Params: PodCrashParams{}})
}

// PodCrashParams are pod-crash's parameters.
type PodCrashParams struct {
	// Restart brings the crashed pod back after this long. Default none:
	// it stays dead.
	Restart time.Duration `yaml:"restart,omitempty" json:"restart,omitempty"`
}

// Validate implements Params.
func (p PodCrashParams) Validate() error { return nonNegative("pod-crash", p.Restart) }

// Scaled implements Params.
func (p PodCrashParams) Scaled(k float64) Params { p.Restart = scale(p.Restart, k); return p }

// Build implements Params.
func (p PodCrashParams) Build(time.Duration) Fault { return PodCrash(p) }

// minAlive is how many pods a fault that kills or hangs one leaves alive:
// one to hold the key, one to keep trying for it.
const minAlive = 2

// PodCrash kills a holder while it holds, as Kubernetes kills an OOM pod:
// nothing it left running (a watchdog goroutine) reaches Redis again.
// Restart, when set, brings it back after that delay as a fresh
// incarnation (a new Locker from the spec); zero leaves it dead for the
// rest of the cell.
type PodCrash struct{ Restart time.Duration }

// Name implements Fault.
func (PodCrash) Name() string { return "pod-crash" }

// Inject implements Fault. It leaves at least minAlive pods alive. The
// holder it picked may have released before the kill lands (a loaded
// machine stretches that gap): a crash that struck a pod holding nothing
// tested nothing, so it strikes another holder, while the cell runs and
// enough pods live, until one dies holding its lease.
func (f PodCrash) Inject(ctx context.Context, env *Env) error {
	for ctx.Err() == nil && env.Pods.Alive() > minAlive {
		if !f.crashHolder(ctx, env) {
			return nil
		}
	}
	return nil
}

// crashHolder kills one holder in a window of its own and reports whether
// to strike again: the pod died holding nothing.
func (f PodCrash) crashHolder(ctx context.Context, env *Env) (again bool) {
	pod, _, err := env.Pods.Holder(ctx, env.Rand)
	if err != nil {
		return false // the cell ended first
	}
	hit := history.Hit{Pods: []int{pod}, StopsHolder: true, Abandons: true}
	if f.Restart > 0 {
		hit.Restart = f.Restart
	}
	end := env.window(f.Name(), hit)
	defer end()
	key, err := env.Pods.Crash(ctx, pod)
	if err != nil {
		return false // the cell ended before the pod's worker stopped
	}
	if f.Restart > 0 {
		wait.Sleep(ctx, f.Restart)
		env.Pods.Restart(pod)
	}
	return key == ""
}

// stoppedHolding is the danger of a holder that will never release: the
// window's pod abandoned (how: crashed or abandoned) a lease that was
// still live, and another pod tried for the key afterwards.
func stoppedHolding(how string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		pod, ok := podOf(w)
		if !ok {
			return w.Call, "no pod named in the window", false
		}
		a, ok := v.abandonIn(pod, w)
		if !ok {
			return w.Call, fmt.Sprintf("%s held no lock when it %s", clientText(pod), how), false
		}
		h, held := v.heldAt(pod, a.Call-1)
		if held {
			if end := v.leaseEndOf(h, a.Call); end.at <= a.Call {
				return w.Call, fmt.Sprintf("%s %s at %s, after %s", clientText(pod), how, secs(a.Call), v.lapsed(h, end)), false
			}
		}
		e, ok := v.tried(a.Key, pod, a.Call, history.Forever)
		if !ok {
			return w.Call, fmt.Sprintf("%s %s at %s holding %s, but no other pod tried for it afterwards",
				clientText(pod), how, secs(a.Call), a.Key), false
		}
		lease := ttlText(v)
		if held {
			lease = v.dueText(h, a.Call)
		}
		return a.Call, fmt.Sprintf("%s %s at %s holding %s (%s); %s", clientText(pod), how, secs(a.Call), a.Key,
			lease, triedText(e)), true
	}
}

// abandonIn returns pod's Abandon event within window w.
func (v *View) abandonIn(pod int, w history.Event) (history.Event, bool) {
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind == history.Abandon && e.Client == pod && e.Call >= w.Call {
			return e, true
		}
	}
	return history.Event{}, false
}
