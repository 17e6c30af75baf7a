package faults

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The fault kinds that act on the proxies between pods and nodes. Each
// registers itself here and nowhere else.
func init() {
	for _, k := range []Kind{
		{Name: "latency", Doc: "delay every reply of one client by Latency (± Jitter) for Duration",
			Moment: "the slowed pod completed an acquire while its links were slow", Danger: slowedCalls,
			Build: func(s Spec, ttl time.Duration) Fault {
				return Latency{Latency: or(s.Latency, ttl/4), Jitter: s.Jitter, Duration: or(s.Duration, ttl), Direction: s.Direction}
			}},
		{Name: "slow-reply", Doc: "delay every reply by Delay (past the TTL) until the next acquire returns, then heal at once; that acquire's critical section runs for Work",
			Moment: "an acquire that may have won answered more than a TTL after its call", Danger: lateWinner,
			Build: func(s Spec, ttl time.Duration) Fault {
				delay := or(s.Delay, ttl+ttl/2)
				// Long enough for the winning reply (Delay) and a margin; a
				// lock that gives up instead (Redlock) gets its next cycles
				// sooner.
				return SlowReply{Delay: delay, MaxWait: or(s.Duration, delay+ttl/2), Work: or(s.Work, ttl/2)}
			}},
		{Name: "client-partition", Doc: "a holder's links go silent (blackhole) during a critical section of Work; direction: upstream drops only its requests, downstream only the replies (one-way)",
			Moment: "a cut-off holder's lease lapsed while another pod tried for the key", Danger: outlived("was cut off", "the partition"),
			Build: func(s Spec, ttl time.Duration) Fault {
				return ClientPartition{Work: or(s.Work, 2*ttl), Direction: s.Direction}
			}},
		{Name: "minority-partition", Doc: "cut every client off one node (a minority of three) for Duration; direction as for client-partition",
			Moment: "an acquire succeeded while the node was unreachable", Danger: acquiredDuring,
			Needs: Needs{Nodes: 3},
			Build: func(s Spec, ttl time.Duration) Fault {
				return MinorityPartition{Duration: or(s.Duration, 2*ttl), Direction: s.Direction}
			}},
	} {
		if err := RegisterKind(k); err != nil {
			panic(err)
		}
	}
}

// Latency delays one client's traffic (both ways unless Direction says
// otherwise) by Latency ± Jitter for Duration.
type Latency struct {
	Latency, Jitter, Duration time.Duration
	Direction                 Direction
}

// Name implements Fault.
func (Latency) Name() string { return "latency" }

// Inject implements Fault.
func (f Latency) Inject(ctx context.Context, env *Env) (err error) {
	pod := env.Rand.IntN(env.Cluster.Clients())
	links := env.Cluster.ClientLinks(pod)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *Link) error { return l.Latency(f.Direction, f.Latency, f.Jitter) }); err != nil {
		return err
	}
	defer env.window(f.Name(), append([]string{podTarget(pod)}, linkNames(links)...)...)()
	sleepCtx(ctx, f.Duration)
	return nil
}

// SlowReply delays every reply from Redis by Delay, past the TTL, until the
// first acquisition returns (or MaxWait passes), then heals at once. The
// winner's SET NX took effect on arrival; its answer comes back after the
// key expired. Healing right then lets the other clients' (refused, also
// delayed) answers through, and they take the free lock while the winner
// believes it holds it. A client that only ever sees a slow reply to its
// winning acquire in the wild meets exactly this; targeting one client
// instead rarely works, because a busy lock is almost never free at the
// moment that client's request lands.
//
// The late winner then works for Work (half the TTL by default), not the
// few milliseconds a scaled-down cell draws: the others, told at the
// heal, retry within their backoff (at most 20 ms) and take the free key
// while it still believes it holds it. With a drawn section of 2-10 ms
// that race was often lost by a few milliseconds (a backoff draw, a
// driver process's extra hop, a scheduling stall of the harness), so the
// other's grant, real on the server, was recorded only after the late
// winner had written and released: two holders on the server, none in
// the history, the window exercised and nothing to see.
type SlowReply struct{ Delay, MaxWait, Work time.Duration }

// Name implements Fault.
func (SlowReply) Name() string { return "slow-reply" }

// Inject implements Fault.
func (f SlowReply) Inject(ctx context.Context, env *Env) (err error) {
	var links []*Link
	for c := range env.Cluster.Clients() {
		links = append(links, env.Cluster.ClientLinks(c)...)
	}
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *Link) error { return l.Latency(Downstream, f.Delay, 0) }); err != nil {
		return err
	}
	defer env.window(f.Name(), append([]string{delayTarget + f.Delay.String()}, linkNames(links)...)...)()
	wctx, cancel := context.WithTimeout(ctx, f.MaxWait)
	defer cancel()
	_, _ = env.Pods.AwaitAcquireHolding(wctx, f.Work)
	return nil
}

// ClientPartition cuts a holder off Redis (its links go silent) while it
// runs a long critical section of Work: renewals stop, nobody tells it.
//
// With Direction upstream only the pod's requests are dropped; with
// downstream only Redis's replies are: its commands still take effect (a
// renewal lands, a release deletes) while the pod hears nothing, the
// one-way partition a half-broken NAT or a flapping link makes.
type ClientPartition struct {
	Work      time.Duration
	Direction Direction // "" or both: the whole link
}

// Name implements Fault.
func (ClientPartition) Name() string { return "client-partition" }

// Inject implements Fault.
func (f ClientPartition) Inject(ctx context.Context, env *Env) (err error) {
	pod, at, ok := env.Pods.AwaitSlow(ctx, f.Work)
	if !ok {
		return nil
	}
	links := env.Cluster.ClientLinks(pod)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *Link) error { return l.Blackhole(f.Direction) }); err != nil {
		return err
	}
	defer env.window(f.Name(), append([]string{podTarget(pod), directionTarget(f.Direction)}, linkNames(links)...)...)()
	sleepCtx(ctx, time.Until(at.Add(f.Work)))
	return nil
}

// MinorityPartition cuts every client off one node for Duration (with
// three nodes, a minority), in one direction or both.
type MinorityPartition struct {
	Duration  time.Duration
	Direction Direction
}

// Name implements Fault.
func (MinorityPartition) Name() string { return "minority-partition" }

// Inject implements Fault.
func (f MinorityPartition) Inject(ctx context.Context, env *Env) (err error) {
	slot := env.Rand.IntN(env.Cluster.Slots())
	links := env.Cluster.SlotLinks(slot)
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *Link) error { return l.Blackhole(f.Direction) }); err != nil {
		return err
	}
	defer env.window(f.Name(), env.Cluster.Node(slot).Name(), directionTarget(f.Direction))()
	sleepCtx(ctx, f.Duration)
	return nil
}

// podTarget names a pod in a fault window's targets.
func podTarget(pod int) string { return fmt.Sprintf("client%d", pod) }

// eachLink applies a fault to every link, stopping at the first error
// (the caller's deferred healLinks undoes what was applied).
func eachLink(ls []*Link, apply func(*Link) error) error {
	for _, l := range ls {
		if err := apply(l); err != nil {
			return err
		}
	}
	return nil
}

// healLinks heals every link and joins any failure into *err: a link that
// stays faulty must fail the cell loudly, not linger unseen.
func healLinks(ls []*Link, err *error) {
	var errs []error
	for _, l := range ls {
		if e := l.Heal(); e != nil {
			errs = append(errs, fmt.Errorf("heal %s: %w", l.Name(), e))
		}
	}
	*err = errors.Join(*err, errors.Join(errs...))
}

// directionTarget names a partition's direction among a window's targets.
func directionTarget(d Direction) string {
	if d == "" {
		d = Both
	}
	return "direction=" + string(d)
}
