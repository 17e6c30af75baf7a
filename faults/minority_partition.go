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
	mustRegister(Kind{Name: "minority-partition",
		Doc:    "cut every client off one node (a minority of three) for Duration; direction as for client-partition",
		Moment: "an acquire succeeded while the node was unreachable",
		Danger: acquiredDuring,
		Needs:  Needs{Nodes: 3},
		Build: func(s Spec, ttl time.Duration) Fault {
			return MinorityPartition{Duration: or(s.Duration, 2*ttl), Direction: s.Direction}
		}})
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
