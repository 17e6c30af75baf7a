package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "node-restart", Family: FamilyNodeRestart,
		Doc: "kill a node (round robin) while a lock is held (one node: just after an acquisition, made to " +
			"hold the longest critical section) and restart it empty after Delay",
		Moment: "a node came back empty while a lease it carried was live", Danger: restartedUnder(false, "empty"),
		Needs:  Needs{NodeControl: true},
		Params: NodeRestartParams{}})
}

// NodeRestartParams are node-restart's parameters.
type NodeRestartParams struct {
	// Delay is how long the killed node stays down. Default none: at once.
	Delay time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
}

// Validate implements Params.
func (p NodeRestartParams) Validate() error { return nonNegative("node-restart", p.Delay) }

// Scaled implements Params.
func (p NodeRestartParams) Scaled(k float64) Params { p.Delay = scale(p.Delay, k); return p }

// Build implements Params.
func (p NodeRestartParams) Build(time.Duration) Fault { return &NodeRestart{Delay: p.Delay} }

// NodeRestart kills a node while a lock is held (nodes in turn) and
// restarts it empty after Delay (0: at once). A node that forgets the
// locks it held is Redlock's known weak spot; waiting past the TTL before
// coming back is the documented remedy.
type NodeRestart struct {
	Delay     time.Duration
	delayed   bool
	powerLoss bool // PowerLoss instead of Kill: back from the AOF
	next      int
}

// Name implements Fault.
func (f *NodeRestart) Name() string {
	if f.powerLoss {
		return "power-loss"
	}
	if f.delayed {
		return "node-restart-delayed"
	}
	return "node-restart"
}

// Inject implements Fault. It strikes while a lock is held; with short
// gaps, nodes go down in turn under one lease, which is what it takes for
// a second pod to win a majority.
//
// On a single node the danger is one restart inside one hold, and a
// holder drawn at random was often near the end of its work: a PostgreSQL
// server takes 0.3 to 0.9 s to come back under eight reconnecting pods,
// longer than most holds had left (node-restart/pg-row: 2 of 38 windows
// inside a hold, inconclusive). There the fault waits for a fresh
// acquisition and makes it hold for the longest critical section the
// workload draws: the worst case the workload allows, no longer, so a
// margin found by delaying the restart still reads against the
// workload's own sections. A delayed restart needs only a lease live at
// the kill, which any holder has: it keeps the old rule.
func (f *NodeRestart) Inject(ctx context.Context, env *Env) error {
	nodes := env.Deployment.Nodes()
	if len(nodes) == 1 && env.WorkMax > 0 && !f.delayed {
		if _, err := env.Pods.AwaitAcquireHolding(ctx, env.WorkMax); err != nil {
			return nil
		}
	} else if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
		return nil
	}
	n := nodes[f.next%len(nodes)]
	f.next++
	hit := history.Hit{Nodes: []string{n.Name()}}
	if env.Deployment.LockNode(n) {
		hit.Down = []string{n.Name()}
	}
	end := env.window(f.Name(), hit)
	defer end()
	if f.powerLoss {
		pl, ok := n.(backend.PowerLossNode)
		if !ok {
			return fmt.Errorf("%w: node %s cannot lose power on this backend", deployment.ErrTopology, n.Name())
		}
		if _, err := pl.PowerLoss(); err != nil {
			return err
		}
	} else if err := n.Kill(); err != nil {
		return err
	}
	wait.Sleep(ctx, f.Delay)
	return heal(n.Start)
}

// restartedUnder is node-restart's danger: nodes came back empty while a
// lease they carried was live, a majority of them under the same lease
// (one forgetful node is what a quorum lock is built to survive; on a
// single node, one is the majority). Delayed, the node also stayed down
// past the TTL, the remedy the Redlock description gives.
//
// how says how the node came back ("empty", or "from its AOF after a power
// loss", which may or may not have kept the key: the verdict tells).
func restartedUnder(delayed bool, how string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		node := w.Node()
		if delayed && time.Duration(w.Return-w.Call) <= v.TTL {
			return w.Call, fmt.Sprintf("%s was down %s, not past the %s", node, span(w.Call, w.Return), ttlText(v)), false
		}
		nodes := v.restartedNodes(w.Fault())
		why := fmt.Sprintf("no lease was live both when %s went down at %s and when it came back at %s", node, secs(w.Call), secs(w.Return))
		for _, h := range v.holdsAt(w.Call) {
			if delayed {
				if v.dueOf(h, w.Call).at > w.Call {
					return w.Return, fmt.Sprintf("%s was killed at %s under %s's live lease on %s (%s, from %s) and stayed down %s",
						node, secs(w.Call), clientText(h.Client), h.Key, v.dueText(h, w.Call), secs(h.Start), span(w.Call, w.Return)), true
				}
				continue
			}
			if v.dueOf(h, w.Call).at <= w.Return || releasedBy(h, w.Return) {
				continue
			}
			under := v.restartsUnder(h, w)
			if 2*len(under) > nodes {
				return w.Return, fmt.Sprintf("%s restarted %s at %s while %s's lease on %s (%s, from %s) was live: "+
					"%d of %d nodes (%s) under it",
					node, how, secs(w.Return), clientText(h.Client), h.Key, v.dueText(h, w.Call), secs(h.Start),
					len(under), nodes, strings.Join(under, ", ")), true
			}
			why = fmt.Sprintf("%s restarted %s under %s's live lease, but only %d of %d nodes did",
				node, how, clientText(h.Client), len(under), nodes)
		}
		return w.Call, why, false
	}
}

// restartedNodes is the deployment's node count, or, in a history that
// does not record it, the distinct nodes windows of this fault hit.
func (v *View) restartedNodes(fault string) int {
	if v.Nodes > 0 {
		return v.Nodes
	}
	seen := map[string]bool{}
	for _, e := range v.Events {
		if e.Kind == history.Fault && e.Fault() == fault {
			seen[e.Node()] = true
		}
	}
	return max(1, len(seen))
}

// restartsUnder lists the nodes that came back empty during h's lease, up
// to and including window w.
func (v *View) restartsUnder(h hold, w history.Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range v.Events {
		if e.Call > w.Call {
			break
		}
		if e.Kind == history.Fault && e.Fault() == w.Fault() && !e.Open && e.Call >= h.AcquireCall && e.Return <= w.Return {
			if n := e.Node(); !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
