package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "slow-reply", Family: FamilyLateReply,
		Doc: "delay every reply by Delay (past the TTL) until the next acquire returns, then heal at once; that " +
			"acquire's critical section runs for Work",
		Moment: "an acquire that may have won answered more than a TTL after its call",
		Danger: lateWinner,
		Params: SlowReplyParams{}})
}

// SlowReplyParams are slow-reply's parameters.
type SlowReplyParams struct {
	// Duration bounds the wait for the first acquire to return
	// (SlowReply.MaxWait). Default Delay + TTL/2.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Delay holds back every reply. Default 1.5x TTL.
	Delay time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
	// Work is the late winner's critical section. Default TTL/2.
	Work time.Duration `yaml:"work,omitempty" json:"work,omitempty"`
}

// Validate implements Params.
func (p SlowReplyParams) Validate() error {
	return nonNegative("slow-reply", p.Duration, p.Delay, p.Work)
}

// Scaled implements Params.
func (p SlowReplyParams) Scaled(k float64) Params {
	p.Duration, p.Delay, p.Work = scale(p.Duration, k), scale(p.Delay, k), scale(p.Work, k)
	return p
}

// Build implements Params.
func (p SlowReplyParams) Build(ttl time.Duration) Fault {
	delay := or(p.Delay, ttl+ttl/2)
	// Long enough for the winning reply (Delay) and a margin; a lock that
	// gives up instead (Redlock) gets its next cycles sooner.
	return SlowReply{Delay: delay, MaxWait: or(p.Duration, delay+ttl/2), Work: or(p.Work, ttl/2)}
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
	var links []*netfault.Link
	for c := range env.Deployment.Clients() {
		links = append(links, env.Deployment.ClientLinks(c)...)
	}
	defer healLinks(links, &err)
	if err := eachLink(links, func(l *netfault.Link) error { return l.Latency(netfault.Downstream, f.Delay, 0) }); err != nil {
		return err
	}
	defer env.window(f.Name(), history.Hit{Delay: f.Delay, Links: linkNames(links)})()
	wctx, cancel := context.WithTimeout(ctx, f.MaxWait)
	defer cancel()
	_, _ = env.Pods.AwaitAcquireHolding(wctx, f.Work)
	return nil
}

// lateWinner is slow-reply's danger: the reply to an acquire that may have
// taken effect (ok, or no definite answer) was held back past the TTL. An
// ok that came back more than a TTL after its call shows it; so does an
// attempt made while every reply was held back longer than the TTL, whose
// caller gave up before the reply came (a lock that gives up in time is
// one that survived it).
func lateWinner(w history.Event, v *View) (int64, string, bool) {
	delay := w.Hit().Delay
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind != history.Acquire || e.Outcome == history.Refused || e.Open || e.Return < w.Call {
			continue
		}
		if took := time.Duration(e.Return - e.Call); e.Outcome == history.Ok {
			h, held := v.heldAt(e.Client, e.Return)
			if !held {
				continue
			}
			end := v.leaseEndOf(h, e.Return)
			if end.observed && end.at < e.Return {
				return e.Return, fmt.Sprintf("%s's acquire of %s won, and its answer came %s after the call; %s, before the answer arrived",
					clientText(e.Client), e.Key, msec(took), v.lapsed(h, end)), true
			}
			if !end.observed && took > v.TTL {
				return e.Return, fmt.Sprintf(
					"%s's acquire of %s won, and its answer came %s after the call, past the %s (assumed from the TTL: %s)",
					clientText(e.Client), e.Key, msec(took), ttlText(v), end.why), true
			}
		}
		if e.Outcome == history.Indefinite && e.Call >= w.Call && delay > v.TTL {
			return e.Call, fmt.Sprintf("%s's acquire of %s at %s may have taken effect, its reply held back %s "+
				"(past the %s); the lock gave up after %s",
				clientText(e.Client), e.Key, secs(e.Call), msec(delay), ttlText(v), span(e.Call, e.Return)), true
		}
	}
	return w.Call, "no acquire that may have won had its reply held back past the TTL", false
}
