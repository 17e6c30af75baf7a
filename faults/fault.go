package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"
)

// Pods is the client side a fault acts on: the cell's simulated pods
// (workload.Control implements it). Faults aim at held moments through it
// and freeze pods with it; they never reach into a lock.
type Pods interface {
	// Pods returns how many pods the cell has.
	Pods() int
	// Pause freezes a pod (worker, renewals, every connection); Resume
	// lets it go on.
	Pause(pod int)
	Resume(pod int)
	// Holder waits until some pod holds a lock and returns one, chosen
	// with rng, and its key.
	Holder(ctx context.Context, rng *rand.Rand) (pod int, key string, err error)
	// NextAcquire waits for the next acquisition by any pod.
	NextAcquire(ctx context.Context) (pod int, err error)
	// AwaitAcquireHolding is NextAcquire whose acquisition then holds its
	// lock for work (its critical section's time), unless its lock
	// reports the lease lost first.
	AwaitAcquireHolding(ctx context.Context, work time.Duration) (pod int, err error)
	// AwaitSlow makes the next critical section run for work and waits
	// until one does; false when ctx ended first.
	AwaitSlow(ctx context.Context, work time.Duration) (pod int, at time.Time, ok bool)
	// Alive returns how many pods are neither dead nor hung.
	Alive() int
	// Crash kills a pod as the kernel kills a process (worker stopped,
	// connections closed, dials refused, a driver process SIGKILLed) and
	// returns the key it held when it died ("" if none).
	Crash(ctx context.Context, pod int) (key string, err error)
	// Restart brings a crashed pod back as a fresh incarnation.
	Restart(pod int)
	// Abandon makes a pod's worker hang holding its lease (its process
	// lives on) and returns the key abandoned.
	Abandon(ctx context.Context, pod int) (key string, err error)
}

// Env is what a fault acts on.
type Env struct {
	// Deployment is the cell's nodes and links, which faults act through.
	Deployment *deployment.Deployment
	Pods       Pods
	// TTL is the lock TTL of the cell, for faults scaled to it.
	TTL time.Duration
	// WorkMax is the longest critical section the cell's workload draws
	// (0: not known), for a fault that makes a hold last that long.
	WorkMax time.Duration
	// Rand is seeded from the run's seed: a schedule replays exactly.
	Rand *rand.Rand
	// Window records a fault window as it opens, with what it hit;
	// calling the returned function closes it. Nil records nothing.
	Window func(fault string, hit history.Hit) (end func())
	// Keys are the cell's lock keys, for faults that probe nodes.
	Keys []string
	// Probe records what a fault observed on a node: whether key exists
	// there, and its value. Nil records nothing.
	Probe func(node, key, value string, exists bool)
}

func (e *Env) window(fault string, hit history.Hit) func() {
	if e.Window == nil {
		return func() {}
	}
	return e.Window(fault, hit)
}

// Fault is one kind of misbehaviour, built for a cell. Inject waits for its
// moment, breaks something, records the window, and heals before it
// returns, also when ctx ends first. A heal that fails is an error.
type Fault interface {
	Name() string
	Inject(ctx context.Context, env *Env) error
}

// Needs is what a fault kind needs of a cell (backend.Needs): a cell
// that cannot give it is skipped with the reason, never faked.
type Needs = backend.Needs

// Kind is a kind of fault, registered once: what it is called, what it
// does, what it needs, and its parameters (which build it). Nothing else
// in the harness names a fault kind.
type Kind struct {
	Name string
	Doc  string
	// Family is what the kind does to a lock whatever the service (the
	// column `lockchaos choose` puts its cells in).
	Family Family
	// Needs says what a cell must offer for this fault to mean anything.
	Needs Needs
	// Params are the kind's own parameters, zero: their type is what a
	// YAML entry of the kind decodes into (a struct, not a pointer), and
	// built as they are they give the kind's defaults.
	Params Params
	// Moment says in words what the dangerous moment is.
	Moment string
	// Danger decides from the history whether a window reached it.
	Danger Danger
}

var kinds struct {
	sync.Mutex
	list []Kind
}

// RegisterKind adds a fault kind; names are unique.
func RegisterKind(k Kind) error {
	if k.Name == "" || k.Params == nil || reflect.TypeOf(k.Params).Kind() != reflect.Struct {
		return fmt.Errorf("%w: a fault kind needs a name and parameters (a struct)", ErrInvalidConfig)
	}
	kinds.Lock()
	defer kinds.Unlock()
	if slices.ContainsFunc(kinds.list, func(o Kind) bool { return o.Name == k.Name }) {
		return fmt.Errorf("%w: fault kind %q is already registered", ErrInvalidConfig, k.Name)
	}
	kinds.list = append(kinds.list, k)
	history.RegisterFaultKind(k.Name) // so a history's header may list it
	return nil
}

// LookupKind returns the registered fault kind of that name; an unknown
// name is an error listing the valid ones.
func LookupKind(name string) (Kind, error) {
	kinds.Lock()
	defer kinds.Unlock()
	for _, k := range kinds.list {
		if k.Name == name {
			return k, nil
		}
	}
	names := make([]string, len(kinds.list))
	for i, k := range kinds.list {
		names[i] = k.Name
	}
	sort.Strings(names)
	return Kind{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknownFault, name, strings.Join(names, ", "))
}

// mustRegister registers a kind from its file's init: a kind that cannot
// register is a bug in the harness, found at start.
func mustRegister(k Kind) {
	if err := RegisterKind(k); err != nil {
		panic(err)
	}
}

// Kinds returns every registered fault kind, sorted by name.
func Kinds() []Kind {
	kinds.Lock()
	defer kinds.Unlock()
	out := slices.Clone(kinds.list)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Schedule fires faults in turn, with seeded gaps between them, until ctx
// ends.
type Schedule struct {
	Faults []Fault
	// First is when the first fault may fire (clients warm up first).
	First time.Duration
	// GapMin and GapMax bound the seeded pause between two faults.
	GapMin, GapMax time.Duration
	// Max bounds how many faults fire (0: no bound); the schedule then
	// waits for ctx. A backstop: scenarios plans no cell that could reach
	// it (scenarios.MaxFaultWindows).
	Max int
}

// Run fires the schedule until ctx is done. It returns the first error a
// fault reports (the cell then counts as a harness error), or nil.
func (s Schedule) Run(ctx context.Context, env *Env) error {
	if len(s.Faults) == 0 {
		<-ctx.Done()
		return nil
	}
	if !wait.Sleep(ctx, s.First) {
		return nil
	}
	next := env.Rand.IntN(len(s.Faults))
	for fired := 0; ; fired++ {
		// A cancelled run fires nothing more, whatever the gap: a sleep
		// and a cancellation that are both ready are picked at random, so
		// the sleep alone would let a short-gapped schedule fire on for a
		// while after SIGINT.
		if ctx.Err() != nil {
			return nil
		}
		if s.Max > 0 && fired >= s.Max {
			<-ctx.Done()
			return nil
		}
		f := s.Faults[next%len(s.Faults)]
		next++
		if err := f.Inject(ctx, env); err != nil && ctx.Err() == nil &&
			!errors.Is(err, backend.ErrClosed) && !errors.Is(err, netfault.ErrClosed) {
			return fmt.Errorf("fault %s: %w", f.Name(), err)
		}
		gap := s.GapMin
		if s.GapMax > s.GapMin {
			gap += time.Duration(env.Rand.Int64N(int64(s.GapMax - s.GapMin)))
		}
		if !wait.Sleep(ctx, gap) {
			return nil
		}
	}
}

// heal runs fn with a fresh context: healing must happen even when the
// run's context is already cancelled.
func heal(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fn(ctx)
}
