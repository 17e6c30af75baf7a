package choose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// The contended measurement: 8 pods on one key, each critical section
// 2 ms, for 3 s; one key allows at most one 2 ms section after another.
const (
	contendedPods     = 8
	contendedWork     = 2 * time.Millisecond
	contendedDuration = 3 * time.Second
	contendedCeiling  = float64(time.Second / contendedWork)
)

// measureCost times samples uncontended cycles of cell's lock and as
// many bare round trips to its service, one of each in turn (so a load
// that comes and goes weighs on both alike), on a deployment of its own
// with one pod, through that pod's links. A warm-up of each comes first.
func measureCost(ctx context.Context, cell scenarios.Cell, opts scenarios.Options, samples int) *Cost {
	c := &Cost{}
	fail := func(what string, err error) *Cost {
		c.Error = fmt.Sprintf("%s: %v", what, err)
		return c
	}
	b, err := scenarios.StartBench(ctx, cell, 1, opts)
	if err != nil {
		return fail("deployment", err)
	}
	defer b.Close()
	floor, err := b.Floor(ctx, 0)
	if err != nil {
		return fail("floor", err)
	}
	defer func() { _ = floor.Close() }()
	l, err := b.Locker(0)
	if err != nil {
		return fail("lock", err)
	}
	c.FloorOp = floor.Op
	key := b.Key()
	const warmup = 10
	var floors, cycles []time.Duration
	for i := range samples + warmup {
		f, err := timed(ctx, floor.Do)
		if err != nil {
			return fail(floor.Op, err)
		}
		cy, err := timed(ctx, func(ctx context.Context) error { return cycle(ctx, l, key) })
		if err != nil {
			return fail("cycle", err)
		}
		if i >= warmup {
			floors, cycles = append(floors, f), append(cycles, cy)
		}
	}
	c.Samples = samples
	c.FloorP50, c.FloorP99 = percentile(floors, 50), percentile(floors, 99)
	c.CycleP50, c.CycleP99 = percentile(cycles, 50), percentile(cycles, 99)
	c.RatioP50 = float64(c.CycleP50) / float64(max(c.FloorP50, 1))
	c.RatioP99 = float64(c.CycleP99) / float64(max(c.FloorP99, 1))
	return c
}

// withContended is c with the contended figures of from (the row's
// contended cell), if any, and why they are missing.
func (c *Cost) withContended(from *Cost) *Cost {
	if from != nil {
		c.Contended, c.ContendedScenario, c.Ceiling, c.Share = from.Contended, from.ContendedScenario, from.Ceiling, from.Share
		if from.Error != "" {
			c.Error = strings.TrimPrefix(c.Error+"; "+from.Error, "; ")
		}
	}
	return c
}

// timed runs fn once, bounded, and says how long it took.
func timed(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	err := fn(ctx)
	return time.Since(start), err
}

// cycle is one uncontended lock cycle: acquire, read and write the
// resource (through the lease's transaction where it has one; the
// harness's resource is in memory and free), release. A refusal (the
// last cycle's lease not yet gone on a lagging server) is tried again.
func cycle(ctx context.Context, l lockimpl.Locker, key string) error {
	var lease lockimpl.Lease
	var err error
	for range 20 {
		if lease, err = l.Acquire(ctx, key); !errors.Is(err, lockimpl.ErrNotAcquired) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		return err
	}
	if tx, ok := lease.(lockimpl.TxLease); ok {
		v, err := tx.ReadResource(ctx, key)
		if err == nil {
			err = tx.CommitWrite(ctx, key, v+1)
		}
		if err != nil {
			return err
		}
	}
	return lease.Release(ctx)
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// contended is row's contended cell: its cost cell's scenario with 8
// pods on one key, 2 ms critical sections and no faults, held to its
// no-fault expectation; its runs count in the row's no-fault cell.
func (p *Plan) contended(row *Row) scenarios.Cell {
	base := p.Cost[row.Name]
	s := base.Scenario
	s.Name = contendedName(base.Scenario.Name)
	s.Description = fmt.Sprintf("%s with %d pods on one key, %v critical sections and no faults: the contended cost",
		base.Scenario.Name, contendedPods, contendedWork)
	s.Faults, s.Clients, s.Keys = nil, contendedPods, 1
	s.WorkMin, s.WorkMax, s.Duration = contendedWork, contendedWork, contendedDuration
	e := base.Expect
	if len(base.Scenario.Faults) > 0 {
		// The row has no no-fault scenario, so no expectation without
		// faults: reported, not gated.
		e = results.Expect{Safety: results.Either, Liveness: results.Either}
	}
	s.Expect = map[string]results.Expect{base.Lock.Name: e}
	c := scenarios.Cell{Scenario: s, Lock: base.Lock, Expect: e}
	cell := row.cell(NoFaults)
	cell.Scenarios = append(cell.Scenarios, s.Name)
	cell.Expect = stricterSafety(cell.Expect, e.Safety)
	cell.Liveness = stricterLiveness(cell.Liveness, e.Liveness)
	p.where[c.Name()], p.rowOf[c.Name()] = cell, row
	return c
}

// contendedName is the contended cell's scenario name.
func contendedName(base string) string { return base + "-contended" }
