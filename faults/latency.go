package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "latency", Doc: "delay every reply of one client by Latency (± Jitter) for Duration",
		Moment: "the slowed pod completed an acquire while its links were slow", Danger: slowedCalls,
		Build: func(s Spec, ttl time.Duration) Fault {
			return Latency{Latency: or(s.Latency, ttl/4), Jitter: s.Jitter, Duration: or(s.Duration, ttl), Direction: s.Direction}
		}})
}

// Latency delays one client's traffic (both ways unless netfault.Direction says
// otherwise) by Latency ± Jitter for Duration.
type Latency struct {
	Latency, Jitter, Duration time.Duration
	Direction                 netfault.Direction
}

// Name implements Fault.
func (Latency) Name() string { return "latency" }

// Inject implements Fault.
func (f Latency) Inject(ctx context.Context, env *Env) (err error) {
	pod := env.Rand.IntN(env.Deployment.Clients())
	links := env.Deployment.ClientLinks(pod)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *netfault.Link) error { return l.Latency(f.Direction, f.Latency, f.Jitter) }); err != nil {
		return err
	}
	defer env.window(f.Name(), history.Hit{Pods: []int{pod}, Links: linkNames(links)})()
	wait.Sleep(ctx, f.Duration)
	return nil
}

// slowedCalls is latency's danger: the targeted pod completed a call while
// its links were slow.
func slowedCalls(w history.Event, v *View) (int64, string, bool) {
	pod, ok := podOf(w)
	for _, e := range v.Events {
		if e.Call >= w.Return {
			break
		}
		if ok && e.Client == pod && e.Kind == history.Acquire && e.Call >= w.Call && !e.Open && e.Return <= w.Return {
			return e.Call, fmt.Sprintf("%s's acquire took %s under the added latency", clientText(pod), span(e.Call, e.Return)), true
		}
	}
	return w.Call, "the slowed pod made no call in the window", false
}
