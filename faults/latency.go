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
	mustRegister(Kind{Name: "latency", Family: FamilyLateReply, Doc: "delay every reply of one client by Latency (± Jitter) for Duration",
		Moment: "the slowed pod completed an acquire while its links were slow", Danger: slowedCalls,
		Params: LatencyParams{}})
}

// LatencyParams are latency's parameters.
type LatencyParams struct {
	// Latency is added to the slowed pod's traffic. Default TTL/4.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Jitter varies it either way. Default none.
	Jitter time.Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	// Duration is how long the links stay slow. Default TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Direction is the way the traffic is slowed. Default both.
	Direction netfault.Direction `yaml:"direction,omitempty" json:"direction,omitempty"`
}

// Validate implements Params.
func (p LatencyParams) Validate() error {
	if err := nonNegative("latency", p.Latency, p.Jitter, p.Duration); err != nil {
		return err
	}
	return validDirection(p.Direction)
}

// Scaled implements Params.
func (p LatencyParams) Scaled(k float64) Params {
	p.Latency, p.Jitter, p.Duration = scale(p.Latency, k), scale(p.Jitter, k), scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p LatencyParams) Build(ttl time.Duration) Fault {
	return Latency{Latency: or(p.Latency, ttl/4), Jitter: p.Jitter, Duration: or(p.Duration, ttl), Direction: p.Direction}
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
