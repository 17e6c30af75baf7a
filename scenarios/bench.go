package scenarios

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
)

// ErrBenchSkipped is a bench the backend cannot give (the cell's skip
// reason follows it).
var ErrBenchSkipped = errors.New("scenarios: bench skipped")

// Bench is a cell's deployment and its pods' locks with no workload and
// no faults: what a measurement the history does not give needs (a lock
// cycle's latency beside a bare round trip to the same server, through
// the same links). Each pod's lock is built as a cell builds it (a driver
// lock starts its process), so a user's lock is measured like a built-in
// one.
type Bench struct {
	plan    *Plan
	dep     *deployment.Deployment
	control *workload.Control
	pods    *pods
	done    func()
}

// StartBench starts cell's deployment on opts.Backend with clients pods
// and builds every pod's lock. A virtual backend has no real time to
// measure: refused.
func StartBench(ctx context.Context, cell Cell, clients int, opts Options) (*Bench, error) {
	if _, ok := backend.Virtual(opts.Backend); ok {
		return nil, fmt.Errorf("%w: the simulation's time is virtual: a cost is measured on real servers", ErrBenchSkipped)
	}
	cell.Scenario.Clients = clients
	cell.Scenario.Faults = nil
	opts.Clients = clients
	p := NewPlan(cell, opts)
	switch {
	case p.Err != nil:
		return nil, p.Err
	case p.Skip != "":
		return nil, fmt.Errorf("%w: %s", ErrBenchSkipped, p.Skip)
	}
	dep, err := startDeployment(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	keysDone, err := ownKeys(p, dep)
	if err != nil {
		_ = dep.Close()
		return nil, err
	}
	b := &Bench{plan: p, dep: dep, control: workload.NewControl(clients), done: func() {
		_ = dep.Close()
		keysDone()
	}}
	if dial := dep.Dialer(); dial != nil {
		b.control.UseDialer(dial)
	}
	if err := resetResource(ctx, dep, p.KeyPrefix); err != nil {
		b.Close()
		return nil, err
	}
	b.pods = newPods(p, dep, b.control)
	if err := b.pods.build(clients); err != nil {
		b.Close() // the pods built so far (a driver that started) too
		return nil, fmt.Errorf("workload: %w", err)
	}
	return b, nil
}

// Locker is pod's lock.
func (b *Bench) Locker(pod int) (lockimpl.Locker, error) { return b.pods.locker(pod) }

// Key is the cell's first lock key (under the cell's prefix on a user's
// own servers).
func (b *Bench) Key() string { return b.plan.Keys[0] }

// Floor is the bare round trip to the lock's service from pod, through
// its links.
func (b *Bench) Floor(ctx context.Context, pod int) (*lockimpl.Floor, error) {
	in := &incarnation{}
	b.pods.mu.Lock()
	b.pods.incs = append(b.pods.incs, in) // its clients close with the pods
	b.pods.mu.Unlock()
	env, err := b.pods.env(pod, in)
	if err != nil {
		return nil, err
	}
	return lockimpl.NewFloor(ctx, b.plan.Lock.Service, env)
}

// Close stops every pod's lock, then the deployment.
func (b *Bench) Close() {
	if b.pods != nil {
		b.pods.close()
	}
	b.control.Close()
	b.done()
}
