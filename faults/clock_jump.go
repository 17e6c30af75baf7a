package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
)

func init() {
	mustRegister(Kind{Name: "clock-jump", Family: FamilyClock,
		Doc: "while a lock is held, jump one node's wall clock by Jump (default 2x TTL; negative: back), nodes in " +
			"turn; the window stays open Duration (default TTL)",
		Moment: "a forward jump lapsed a live lease early on the node while another pod tried",
		Danger: jumpedUnder,
		Needs:  Needs{NodeControl: true, Clock: true},
		Params: ClockJumpParams{}})
}

// ClockJumpParams are clock-jump's parameters.
type ClockJumpParams struct {
	// Duration keeps the window open after the jump. Default TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Jump is the clock's shift: forward when positive, back when
	// negative (the one duration that may be). Default 2x TTL.
	Jump time.Duration `yaml:"jump,omitempty" json:"jump,omitempty"`
}

// Validate implements Params.
func (p ClockJumpParams) Validate() error { return nonNegative("clock-jump", p.Duration) }

// Scaled implements Params.
func (p ClockJumpParams) Scaled(k float64) Params {
	p.Duration, p.Jump = scale(p.Duration, k), scale(p.Jump, k)
	return p
}

// Build implements Params.
func (p ClockJumpParams) Build(ttl time.Duration) Fault {
	return &ClockJump{Jump: or(p.Jump, 2*ttl), Hold: or(p.Duration, ttl)}
}

// ClockJump moves one node's wall clock by Jump (forward: lock keys on it
// expire early; back: they live longer) while a lock is held, nodes in
// turn, and keeps the window open for Hold so other pods can try. The
// clock stays where it jumped, as a stepped clock does.
type ClockJump struct {
	Jump, Hold time.Duration
	next       int
}

// Name implements Fault.
func (*ClockJump) Name() string { return "clock-jump" }

// Inject implements Fault.
func (f *ClockJump) Inject(ctx context.Context, env *Env) error {
	nodes := env.Deployment.Nodes()
	n := nodes[f.next%len(nodes)]
	f.next++
	hit := history.Hit{Jump: f.Jump}
	if len(nodes) > 2 {
		// Look for a bare majority for a few TTLs; a lock that always
		// writes every node gets the round-robin node instead, so the rest
		// of the schedule is not held up.
		look, cancel := context.WithTimeout(ctx, 5*env.TTL)
		bare, found := f.bareMajorityNode(look, env)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if found {
			n = bare
			hit.BareMajority = true
		}
	}
	if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
		return nil // (at once when bare: its holder still holds)
	}
	cn, ok := n.(backend.ClockNode)
	if !ok {
		return fmt.Errorf("%w: node %s cannot move its clock on this backend", backend.ErrNoClockShim, n.Name())
	}
	hit.Nodes = []string{n.Name()}
	end := env.window(f.Name(), hit)
	defer end()
	if err := cn.ShiftClock(f.Jump); err != nil {
		return err
	}
	wait.Sleep(ctx, f.Hold)
	return nil
}

// bareMajorityNode waits for a holder whose key is on a bare majority of
// the independent nodes (the others free: some attempt lost the race
// there) and returns one of the nodes that carry it: a jump there leaves
// the holder a minority while a majority is free for the next pod, the
// Redlock critique's case. A holder on every node survives one jump; it
// keeps looking until ctx ends.
func (f *ClockJump) bareMajorityNode(ctx context.Context, env *Env) (backend.RedisNode, bool) {
	nodes := env.Deployment.Nodes()
	for ctx.Err() == nil {
		_, key, err := env.Pods.Holder(ctx, env.Rand)
		if err != nil {
			return nil, false
		}
		var carrying []backend.RedisNode
		for _, n := range nodes {
			v, err := n.Do(ctx, "EXISTS", key)
			if c, _ := v.(int64); err == nil && c == 1 {
				carrying = append(carrying, n)
			}
		}
		if 2*len(carrying) > len(nodes) && len(carrying) < len(nodes) {
			return carrying[env.Rand.IntN(len(carrying))], true
		}
		wait.Sleep(ctx, time.Millisecond)
	}
	return nil, false
}

// jumpedUnder is clock-jump's danger: a forward jump made a live lease's
// key lapse early on the node (the jump was longer than what the lease had
// left) and another pod tried for the key before it was due to lapse. A
// jump back cannot end a lease early; it is judged by whether a lease was
// live to be stretched.
func jumpedUnder(w history.Event, v *View) (int64, string, bool) {
	jump, node := w.Hit().Jump, w.Node()
	// Only a jump on a node of a holder's bare majority (Hit.BareMajority)
	// can leave a quorum lock's holder a minority.
	if v.Nodes > 2 && jump > 0 && !w.Hit().BareMajority {
		// The holder's key was on every node (or none was found on a bare
		// majority in time): one jumped node leaves it a majority.
		return w.Call, fmt.Sprintf("%s's clock jumped, but no holder was on a bare majority of the %d nodes: one "+
			"node less left every lease a majority", node, v.Nodes), false
	}
	for _, h := range v.holdsAt(w.Call) {
		// When the lease was due to lapse before the jump: the TTL from
		// its acquire (and renewals), since what the server did after the
		// jump is what the jump changed.
		due := max(expiry(h, v.TTL), v.renewedUntil(h, w.Call))
		if end := v.leaseEndOf(h, w.Call); end.observed && end.at <= w.Call {
			continue // the server had already dropped it: the jump took nothing from it
		} else if end.observed && end.at < due && jump > 0 {
			if e, ok := v.tried(h.Key, h.Client, w.Call, due); ok {
				return max(w.Call, e.Call), fmt.Sprintf(
					"%s's clock jumped %s at %s under %s's lease on %s, due to lapse at %s; %s; %s tried at %s",
					node, msec(jump), secs(w.Call), clientText(h.Client), h.Key, secs(due), v.lapsed(h, end),
					clientText(e.Client), secs(max(w.Call, e.Call))), true
			}
		}
		if due <= w.Call {
			continue // already lapsed: the jump took nothing from it
		}
		if jump < 0 {
			return w.Call, fmt.Sprintf("%s's clock went back %s at %s under %s's live lease on %s: it lives that much longer there",
				node, msec(-jump), secs(w.Call), clientText(h.Client), h.Key), true
		}
		if due-w.Call > int64(jump) {
			continue // the jump was shorter than what the lease had left
		}
		if e, ok := v.tried(h.Key, h.Client, w.Call, due); ok {
			return max(w.Call, e.Call), fmt.Sprintf("%s's clock jumped %s at %s under %s's lease on %s, due to lapse at %s; %s tried at %s",
				node, msec(jump), secs(w.Call), clientText(h.Client), h.Key, secs(due),
				clientText(e.Client), secs(max(w.Call, e.Call))), true
		}
	}
	return w.Call, "no live lease lapsed early on the jumped node while another pod tried", false
}
