package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

func init() {
	mustRegister(Kind{Name: "failover", Family: FamilyFailover,
		Doc:    "while a lock is held, kill the primary and promote the lagging replica",
		Moment: "the promoted replica lacked a key a pod believed it held", Danger: lostOnPromotion,
		Needs:  Needs{NodeControl: true, Replica: true},
		Params: FailoverParams{}})
}

// FailoverParams are failover's parameters.
type FailoverParams struct {
	// Latency is the replication lag (Failover.Lag). Default 1.25x TTL.
	Latency time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
}

// Validate implements Params.
func (p FailoverParams) Validate() error { return nonNegative("failover", p.Latency) }

// Scaled implements Params.
func (p FailoverParams) Scaled(k float64) Params { p.Latency = scale(p.Latency, k); return p }

// Build implements Params.
func (p FailoverParams) Build(ttl time.Duration) Fault {
	return Failover{Lag: or(p.Latency, ttl+ttl/4)}
}

// Failover waits for a held lock, kills the primary before the lagging
// replica has the lock key, promotes the replica and repoints the clients;
// then brings the old primary back as the new replica, ready for the next
// round.
type Failover struct {
	// Lag delays the replication stream, so the key of the lock just
	// taken is not on the replica yet when the primary dies. A lag longer
	// than the TTL also means the replica holds no live lock key from
	// earlier holders (their keys expired there): the promoted replica is
	// free, and the other clients take the lock at once.
	Lag time.Duration
}

// Name implements Fault.
func (Failover) Name() string { return "failover" }

// Inject implements Fault.
func (f Failover) Inject(ctx context.Context, env *Env) error {
	c := env.Deployment
	if c.Topology() != deployment.PrimaryReplica {
		return fmt.Errorf("failover needs a primary and a replica: %w", deployment.ErrTopology)
	}
	// Setting a latency that is already there is a no-op: replacing it
	// would flush what the proxy holds back, the very writes to lose. The
	// first time, let the lag settle, so the replica is Lag behind.
	repl := c.ReplicationLink()
	if !slices.Contains(repl.Toxics(), netfault.ToxicName(netfault.LatencyToxic, netfault.Downstream)) {
		if err := repl.Latency(netfault.Downstream, f.Lag, 0); err != nil {
			return err
		}
		wait.Sleep(ctx, f.Lag+env.TTL)
	}
	// Wait for a fresh acquisition: its key is still in the lagging stream.
	if _, err := env.Pods.NextAcquire(ctx); err != nil {
		return nil
	}
	return failOver(ctx, env, f.Name(), history.Hit{})
}

// failOver kills the primary, promotes the replica, probes it for the
// cell's keys, moves the service address to it, lets the clients work a
// TTL, and brings the old primary back as the replica: one window named
// fault over primary and replica (and any extra targets).
func failOver(ctx context.Context, env *Env, fault string, hit history.Hit) error {
	c := env.Deployment
	old := c.Primary()
	hit.Nodes = []string{old.Name(), c.Replica().Name()}
	end := env.window(fault, hit)
	defer end()
	if err := old.Kill(); err != nil {
		return err
	}
	if err := heal(c.PromoteReplica); err != nil {
		return err
	}
	probeKeys(env, c.Replica()) // promoted, clients not moved yet: nobody has written to it
	if err := c.MoveService(); err != nil {
		return err
	}
	// Let the clients work on the new primary before the old one rejoins.
	wait.Sleep(ctx, env.TTL)
	return heal(c.Rejoin)
}

// probeKeys records which of the cell's keys the node has right now, and
// their values (the promoted replica, just after promotion): the evidence
// a lock key was lost, read from the node, not assumed.
func probeKeys(env *Env, n backend.RedisNode) {
	if env.Probe == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if p, ok := n.(backend.KeyProber); ok {
		probeHolders(ctx, env, n.Name(), p)
		return
	}
	for _, k := range env.Keys {
		v, err := n.Do(ctx, "GET", k)
		switch {
		case err == nil || backend.IsNil(err):
			s, _ := v.(string)
			env.Probe(n.Name(), k, s, err == nil)
		case strings.Contains(err.Error(), "WRONGTYPE"):
			// A lock that keeps its key as a hash or a set: whether it is
			// there is all the probe can say.
			if c, err := n.Do(ctx, "EXISTS", k); err == nil {
				count, _ := c.(int64)
				env.Probe(n.Name(), k, "", count == 1)
			}
		}
	}
}

// probeHolders is probeKeys on a node that does not answer GET (a
// PostgreSQL server): who holds each key there now, a key nobody holds
// recorded as missing. A failed probe records nothing, as a GET that
// failed does.
func probeHolders(ctx context.Context, env *Env, node string, p backend.KeyProber) {
	held, err := p.ProbeKeys(ctx, env.Keys)
	if err != nil {
		return
	}
	for _, k := range env.Keys {
		v, ok := held[k]
		env.Probe(node, k, v, ok)
	}
}

// The dangers of failovers: what a promoted replica had of the leases
// pods believed they held.

// lostOnPromotion is failover's danger: the promoted replica lacked a key a
// pod believed it held (a probe the fault recorded right after promotion).
func lostOnPromotion(w history.Event, v *View) (int64, string, bool) {
	var tokens map[string]bool // every token the history handed out, read once
	for _, e := range v.Events {
		if e.Call > w.Return {
			break
		}
		if e.Kind != history.Probe || e.Call < w.Call {
			continue
		}
		for _, h := range v.holdsAt(e.Call) {
			if h.Key != e.Key || v.dueOf(h, e.Call).at <= e.Call {
				continue
			}
			if !e.Probed().Exists {
				return e.Call, fmt.Sprintf("the promoted replica lacked %s at %s while %s believed it held it (acquired at %s, %s)",
					e.Key, secs(e.Call), clientText(h.Client), secs(h.Start), v.dueText(h, e.Call)), true
			}
			if tokens == nil {
				tokens = v.tokens()
			}
			// Another pod's older key (its release was lost with the
			// primary): the holder's key is gone all the same. Compared
			// only when the value is a token the history knows, as locks
			// store different things.
			if found := e.Probed().Value; h.Token != "" && found != h.Token && tokens[found] {
				return e.Call, fmt.Sprintf("the promoted replica had an older lease's key for %s at %s, not the one "+
					"%s believed it held (acquired at %s, %s)",
					e.Key, secs(e.Call), clientText(h.Client), secs(h.Start), v.dueText(h, e.Call)), true
			}
		}
	}
	return w.Call, "the promoted replica had every key a pod believed it held", false
}

// tokens returns every token an acquire returned.
func (v *View) tokens() map[string]bool {
	out := map[string]bool{}
	for _, e := range v.Events {
		if e.Kind == history.Acquire && e.Token != "" {
			out[e.Token] = true
		}
	}
	return out
}
