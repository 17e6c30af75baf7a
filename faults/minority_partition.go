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
	mustRegister(Kind{Name: "minority-partition", Family: FamilyMinority,
		Doc:    "cut every client off one node (a minority of three) for Duration; direction as for client-partition",
		Moment: "an acquire succeeded while the node was unreachable",
		Danger: acquiredDuring,
		Needs:  Needs{Nodes: 3},
		Params: MinorityPartitionParams{}})
}

// MinorityPartitionParams are minority-partition's parameters.
type MinorityPartitionParams struct {
	// Duration is how long the node stays cut off. Default 2x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Direction is the way the links go silent. Default both.
	Direction netfault.Direction `yaml:"direction,omitempty" json:"direction,omitempty"`
}

// Validate implements Params.
func (p MinorityPartitionParams) Validate() error {
	if err := nonNegative("minority-partition", p.Duration); err != nil {
		return err
	}
	return validDirection(p.Direction)
}

// Scaled implements Params.
func (p MinorityPartitionParams) Scaled(k float64) Params {
	p.Duration = scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p MinorityPartitionParams) Build(ttl time.Duration) Fault {
	return MinorityPartition{Duration: or(p.Duration, 2*ttl), Direction: p.Direction}
}

// MinorityPartition cuts every client off one node for Duration (with
// three nodes, a minority), in one direction or both.
type MinorityPartition struct {
	Duration  time.Duration
	Direction netfault.Direction
}

// Name implements Fault.
func (MinorityPartition) Name() string { return "minority-partition" }

// Inject implements Fault.
func (f MinorityPartition) Inject(ctx context.Context, env *Env) (err error) {
	slot := env.Rand.IntN(env.Deployment.Slots())
	links := env.Deployment.SlotLinks(slot)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *netfault.Link) error { return l.Blackhole(f.Direction) }); err != nil {
		return err
	}
	node := env.Deployment.Node(slot)
	hit := history.Hit{Nodes: []string{node.Name()}, Direction: direction(f.Direction)}
	if env.Deployment.LockNode(node) {
		hit.Down = []string{node.Name()}
	}
	defer env.window(f.Name(), hit)()
	wait.Sleep(ctx, f.Duration)
	return nil
}

// acquiredDuring is minority-partition's danger: the lock kept working (a
// successful acquire) while a node was unreachable.
func acquiredDuring(w history.Event, v *View) (int64, string, bool) {
	for _, e := range v.Events {
		if e.Call >= w.Return {
			break
		}
		if e.Kind == history.Acquire && e.Outcome == history.Ok && e.Call >= w.Call && e.Return <= w.Return {
			return e.Return, fmt.Sprintf("%s acquired %s at %s while %s was cut off",
				clientText(e.Client), e.Key, secs(e.Return), w.Node()), true
		}
	}
	return w.Call, "no acquire succeeded while the node was cut off", false
}
