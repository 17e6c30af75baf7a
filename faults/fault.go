package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Env is what a fault acts on.
type Env struct {
	Cluster *Cluster
	Clients *Clients
	// TTL is the lock TTL of the cell, for faults scaled to it.
	TTL time.Duration
	// Rand is seeded from the run's seed: a schedule replays exactly.
	Rand *rand.Rand
	// Window records a fault window as it opens; calling the returned
	// function closes it. Nil records nothing.
	Window func(fault string, targets []string) (end func())
}

func (e *Env) window(fault string, targets ...string) func() {
	if e.Window == nil {
		return func() {}
	}
	return e.Window(fault, targets)
}

// Fault is one kind of misbehaviour. Inject waits for its moment, breaks
// something, records the window, and heals before it returns, also when
// ctx ends first.
type Fault interface {
	Name() string
	Inject(ctx context.Context, env *Env) error
}

// Kinds lists the fault kinds by name with a short description.
var Kinds = map[string]string{
	"latency":              "delay every reply of one client by Latency (± Jitter) for Duration",
	"slow-reply":           "delay every reply by Delay (past the TTL) until the next acquire returns, then heal at once",
	"client-partition":     "a holder's links go silent (blackhole) during a critical section of Work",
	"client-pause":         "freeze a holder (worker, watchdog, every Redis call) for Pause",
	"slow-holder":          "the next critical section runs for Work (past the TTL)",
	"node-restart":         "kill a node (round robin) while a lock is held and restart it empty after Delay",
	"minority-partition":   "cut every client off one node (a minority of three) for Duration",
	"failover":             "while a lock is held, kill the primary and promote the lagging replica",
	"node-restart-delayed": "node-restart with the restart delayed past the TTL",
}

// KindNames returns the fault kinds, sorted.
func KindNames() []string {
	out := make([]string, 0, len(Kinds))
	for k := range Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ErrUnknownFault means a fault kind is not one of KindNames.
var ErrUnknownFault = errors.New("faults: unknown fault")

// Spec describes a fault by kind and parameters (from the scenario catalog
// or a YAML file). Durations left zero are scaled from the TTL.
type Spec struct {
	Kind      string        `yaml:"kind" json:"kind"`
	Latency   time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	Jitter    time.Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	Duration  time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Delay     time.Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
	Work      time.Duration `yaml:"work,omitempty" json:"work,omitempty"`
	Pause     time.Duration `yaml:"pause,omitempty" json:"pause,omitempty"`
	Direction Direction     `yaml:"direction,omitempty" json:"direction,omitempty"`
}

// Validate reports an unknown kind or a negative duration.
func (s Spec) Validate() error {
	if _, ok := Kinds[s.Kind]; !ok {
		return fmt.Errorf("%w %q (valid: %s)", ErrUnknownFault, s.Kind, strings.Join(KindNames(), ", "))
	}
	for _, d := range []time.Duration{s.Latency, s.Jitter, s.Duration, s.Delay, s.Work, s.Pause} {
		if d < 0 {
			return fmt.Errorf("%w: fault %s has a negative duration", ErrInvalidConfig, s.Kind)
		}
	}
	if s.Direction != "" {
		if _, err := s.Direction.streams(); err != nil {
			return err
		}
	}
	return nil
}

// Build turns a spec into a Fault, filling zero durations from ttl.
func (s Spec) Build(ttl time.Duration) (Fault, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	or := func(d time.Duration, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	switch s.Kind {
	case "latency":
		return Latency{Latency: or(s.Latency, ttl/4), Jitter: s.Jitter, Duration: or(s.Duration, ttl), Direction: s.Direction}, nil
	case "slow-reply":
		return SlowReply{Delay: or(s.Delay, ttl+ttl/2), MaxWait: or(s.Duration, 4*ttl)}, nil
	case "client-partition":
		return ClientPartition{Work: or(s.Work, 2*ttl)}, nil
	case "client-pause":
		return ClientPause{Pause: or(s.Pause, ttl+ttl/2)}, nil
	case "slow-holder":
		return SlowHolder{Work: or(s.Work, ttl+ttl/2)}, nil
	case "node-restart":
		return &NodeRestart{Delay: s.Delay}, nil
	case "node-restart-delayed":
		return &NodeRestart{Delay: or(s.Delay, ttl+ttl/2), delayed: true}, nil
	case "minority-partition":
		return MinorityPartition{Duration: or(s.Duration, 2*ttl)}, nil
	case "failover":
		return Failover{Lag: or(s.Latency, ttl+ttl/4)}, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownFault, s.Kind)
}

// Schedule fires faults in turn, with seeded gaps between them, until ctx
// ends.
type Schedule struct {
	Faults []Fault
	// First is when the first fault may fire (clients warm up first).
	First time.Duration
	// GapMin and GapMax bound the seeded pause between two faults.
	GapMin, GapMax time.Duration
}

// Run fires the schedule until ctx is done. It returns the first error a
// fault reports (the cell then counts as a harness error), or nil.
func (s Schedule) Run(ctx context.Context, env *Env) error {
	if len(s.Faults) == 0 {
		<-ctx.Done()
		return nil
	}
	if !sleepCtx(ctx, s.First) {
		return nil
	}
	next := env.Rand.IntN(len(s.Faults))
	for {
		f := s.Faults[next%len(s.Faults)]
		next++
		if err := f.Inject(ctx, env); err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			return fmt.Errorf("fault %s: %w", f.Name(), err)
		}
		gap := s.GapMin
		if s.GapMax > s.GapMin {
			gap += time.Duration(env.Rand.Int64N(int64(s.GapMax - s.GapMin)))
		}
		if !sleepCtx(ctx, gap) {
			return nil
		}
	}
}

// sleepCtx sleeps d; false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// heal runs fn with a fresh context: healing must happen even when the
// run's context is already cancelled.
func heal(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fn(ctx)
}

func linkNames(ls []*Link) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name()
	}
	return out
}
