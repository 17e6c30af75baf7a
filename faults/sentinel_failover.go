package faults

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "sentinel-failover", Family: FamilyFailover,
		Doc: "right after a fresh lock acquisition, whose critical section runs Duration (default 0.9x TTL, to " +
			"outlast the failover), kill the primary before its replica has the key (replication lags Latency, " +
			"default TTL/100, well under the Sentinels' down-after); the Sentinels promote the replica on their " +
			"own timing",
		Moment: "the Sentinels promoted the replica while a pod believed it held a lease taken from the dead primary",
		Danger: promotedUnderLease,
		Needs:  Needs{NodeControl: true, Sentinel: true},
		Params: SentinelFailoverParams{}})
}

// SentinelFailoverParams are sentinel-failover's parameters.
type SentinelFailoverParams struct {
	// Latency is the replication lag (SentinelFailover.Lag). Default TTL/100.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	// Duration is the fresh holder's critical section
	// (SentinelFailover.Hold). Default 0.9x TTL.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
}

// Validate implements Params.
func (p SentinelFailoverParams) Validate() error {
	return nonNegative("sentinel-failover", p.Latency, p.Duration)
}

// Scaled implements Params.
func (p SentinelFailoverParams) Scaled(k float64) Params {
	p.Latency, p.Duration = scale(p.Latency, k), scale(p.Duration, k)
	return p
}

// Build implements Params.
func (p SentinelFailoverParams) Build(ttl time.Duration) Fault {
	return &SentinelFailover{Lag: or(p.Latency, ttl/100), Hold: or(p.Duration, ttl*9/10)}
}

// SentinelFailover breaks the primary of a Sentinel deployment and lets
// the Sentinels fail over: killed right after a fresh acquisition, whose
// key the lagging replication has not delivered (the seed's claim: a
// freshly written lock key is lost); or, with cutOff, cut off from the
// Sentinels and the replica while the pods still reach it, so locks taken
// there meanwhile exist only on a primary about to be demoted.
type SentinelFailover struct {
	// Lag holds replication back (on the primary's side proxy), so the
	// fresh key is still in flight when the primary dies. Not used cut off.
	// The Sentinels' pings take the same proxy: a lag near their
	// down-after would make them fail over on their own.
	Lag time.Duration
	// Hold is how long the fresh holder's critical section runs: long
	// enough that it still works when the Sentinels have failed over
	// (their timing, not ours: 0.6 s quiet, over 2 s on a busy machine).
	Hold   time.Duration
	cutOff bool
}

// Name implements Fault.
func (f *SentinelFailover) Name() string {
	if f.cutOff {
		return "sentinel-partition"
	}
	return "sentinel-failover"
}

// Inject implements Fault.
func (f *SentinelFailover) Inject(ctx context.Context, env *Env) error {
	c := env.Deployment
	if c.Topology() != deployment.Sentinel {
		return fmt.Errorf("%s needs the Sentinel topology: %w", f.Name(), deployment.ErrTopology)
	}
	// The Sentinels are the truth about which node is primary: they may
	// have failed over on their own (a node that answered too slowly).
	oldIdx := c.SyncPrimary(ctx)
	old, replica := c.Primary(), c.Replica()
	side := c.SideLink(oldIdx)
	if f.cutOff {
		if _, _, err := env.Pods.Holder(ctx, env.Rand); err != nil {
			return nil
		}
	} else {
		if err := f.lagReplication(ctx, env); err != nil {
			return err
		}
		// A fresh acquisition (its key still in the lagging stream), whose
		// holder goes on working through the failover.
		if _, _, ok := env.Pods.AwaitSlow(ctx, f.Hold); !ok {
			return nil
		}
	}
	end := env.window(f.Name(), history.Hit{Nodes: []string{old.Name(), replica.Name()}})
	defer end()
	// Whatever the side proxy still holds back is lost with the primary, as
	// writes in a dying primary's replication buffer are.
	if err := side.Disable(); err != nil {
		return err
	}
	if !f.cutOff {
		if err := old.Kill(); err != nil {
			return err
		}
	}
	// The promoted replica's keys are probed the moment it turns primary,
	// before any client is told to use it.
	if c.AwaitSentinelFailover(ctx, 1-oldIdx, func() { probeKeys(env, replica) }) {
		// Let the pods find the new primary and work on it for a lease.
		wait.Sleep(ctx, env.TTL)
	}
	return heal(func(hctx context.Context) error { return c.SentinelRejoin(hctx, oldIdx) })
}

// lagReplication puts the lag on the current primary's side proxy only
// (the previous primary's lag, if any, goes), and lets it settle once.
func (f *SentinelFailover) lagReplication(ctx context.Context, env *Env) error {
	c := env.Deployment
	for i := range c.Nodes() {
		l := c.SideLink(i)
		has := slices.Contains(l.Toxics(), netfault.ToxicName(netfault.LatencyToxic, netfault.Downstream))
		switch {
		case i == c.PrimaryIndex() && !has:
			if err := l.Latency(netfault.Downstream, f.Lag, 0); err != nil {
				return err
			}
			wait.Sleep(ctx, f.Lag+env.TTL)
		case i != c.PrimaryIndex() && has:
			if err := l.Heal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// promotedUnderLease is the Sentinel faults' danger: the Sentinels
// promoted the replica (the fault probed it the moment it turned primary)
// while a pod's lease on the old primary was at stake. Killed: a pod
// believed it held a lease it took before the primary died. Cut off: a
// pod asked the cut-off primary for the lock before the promotion (what
// it was granted there is lost; a lock that waits for a replica is
// refused there). What became of a lease's key is the lock's business;
// the sentence says whether the promoted replica had it.
var promotedUnderLease = promotedUnder("the Sentinels", "sentinel-partition")

// promotedUnder is the danger of a failover the servers decide on their
// own (who: "the Sentinels", "the cluster"); a window of the kind cutOff
// cut the primary off instead of killing it ("": none does; the cluster
// faults judge every failover by the lease taken from the old primary).
func promotedUnder(who, cutOff string) Danger {
	return func(w history.Event, v *View) (int64, string, bool) {
		probe, ok := firstProbe(w, v)
		if !ok {
			return w.Call, who + " did not promote the replica within the window", false
		}
		if w.Fault() == cutOff {
			if e, ok := askedCutOff(w, v, probe.Call); ok {
				granted := "was refused"
				if e.Outcome == history.Ok {
					granted = "was granted it"
				}
				return probe.Call, fmt.Sprintf("%s asked the cut-off primary for %s at %s and %s; %s promoted %s at %s",
					clientText(e.Client), e.Key, secs(e.Call), granted, who, probe.Node(), secs(probe.Call)), true
			}
			return w.Call, "no pod asked the cut-off primary for a lock before " + who + " promoted the replica", false
		}
		var tokens map[string]bool
		for _, h := range v.holdsAt(probe.Call) {
			if h.Key != probe.Key || h.Start > w.Call || v.dueOf(h, probe.Call).at <= probe.Call {
				continue
			}
			if tokens == nil {
				tokens = v.tokens()
			}
			return probe.Call, fmt.Sprintf("%s promoted %s at %s while %s believed it held %s (acquired at %s, %s): %s",
				who, probe.Node(), secs(probe.Call), clientText(h.Client), h.Key, secs(h.Start), v.dueText(h, probe.Call),
				keyFound(probe, h, tokens)), true
		}
		return w.Call, "no pod held a lease from the old primary when " + who + " promoted the replica", false
	}
}

// keyFound says what the promoted replica had of h's key.
func keyFound(probe history.Event, h hold, tokens map[string]bool) string {
	switch found := probe.Probed().Value; {
	case !probe.Probed().Exists:
		return "it lacked the key"
	case h.Token != "" && found != h.Token && tokens[found]:
		return "it had an older lease's key, not this one"
	default:
		return "it had the key"
	}
}

// firstProbe returns the window's first probe (the promoted replica read
// the moment it turned primary).
func firstProbe(w history.Event, v *View) (history.Event, bool) {
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind == history.Probe && e.Call >= w.Call {
			return e, true
		}
	}
	return history.Event{}, false
}
