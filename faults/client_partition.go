package faults

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "client-partition", Family: FamilyHolderCut,
		Doc: "a holder's links go silent (blackhole) during a critical section of Work; direction: upstream drops " +
			"only its requests, downstream only the replies (one-way)",
		Moment: "a cut-off holder's lease lapsed while another pod tried for the key",
		Danger: outlived("was cut off", "the partition"),
		Params: ClientPartitionParams{}})
}

// ClientPartitionParams are client-partition's parameters.
type ClientPartitionParams struct {
	// Work is the cut-off holder's critical section. Default 2x TTL.
	Work time.Duration `yaml:"work,omitempty" json:"work,omitempty"`
	// Direction is the way the links go silent. Default both.
	Direction netfault.Direction `yaml:"direction,omitempty" json:"direction,omitempty"`
}

// Validate implements Params.
func (p ClientPartitionParams) Validate() error {
	if err := nonNegative("client-partition", p.Work); err != nil {
		return err
	}
	return validDirection(p.Direction)
}

// Scaled implements Params.
func (p ClientPartitionParams) Scaled(k float64) Params { p.Work = scale(p.Work, k); return p }

// Build implements Params.
func (p ClientPartitionParams) Build(ttl time.Duration) Fault {
	return ClientPartition{Work: or(p.Work, 2*ttl), Direction: p.Direction}
}

// ClientPartition cuts a holder off Redis (its links go silent) while it
// runs a long critical section of Work: renewals stop, nobody tells it.
//
// With netfault.Direction upstream only the pod's requests are dropped; with
// downstream only Redis's replies are: its commands still take effect (a
// renewal lands, a release deletes) while the pod hears nothing, the
// one-way partition a half-broken NAT or a flapping link makes.
type ClientPartition struct {
	Work      time.Duration
	Direction netfault.Direction // "" or both: the whole link
}

// Name implements Fault.
func (ClientPartition) Name() string { return "client-partition" }

// Inject implements Fault.
func (f ClientPartition) Inject(ctx context.Context, env *Env) (err error) {
	pod, at, ok := env.Pods.AwaitSlow(ctx, f.Work)
	if !ok {
		return nil
	}
	links := env.Deployment.ClientLinks(pod)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *netfault.Link) error { return l.Blackhole(f.Direction) }); err != nil {
		return err
	}
	// Cut off, the holder cannot release: deadlock-free is judged from here.
	hit := history.Hit{Pods: []int{pod}, Direction: direction(f.Direction), StopsHolder: true, Links: linkNames(links)}
	defer env.window(f.Name(), hit)()
	wait.Sleep(ctx, time.Until(at.Add(f.Work)))
	return nil
}
