package scenarios_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

func cellOf(t *testing.T, scenario, lockName string) scenarios.Cell {
	t.Helper()
	sc, err := scenarios.Get(scenario)
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.Cell{Scenario: sc, Lock: lock(lockName), Expect: sc.Expect[lockName]}
}

// TestPlanRefusesTooManyParts: a part length that would cut a cell into
// more than MaxParts parts is a plan error with the shortest length that
// works, and the plan holds one part (a part length of 1 ns used to make
// two billion parts and run out of memory).
func TestPlanRefusesTooManyParts(t *testing.T) {
	for _, length := range []time.Duration{time.Nanosecond, time.Microsecond} {
		p := scenarios.NewPlan(cellOf(t, "baseline", "token"), scenarios.Options{Backend: sim.New(nil), PartLength: length})
		if !errors.Is(p.Err, scenarios.ErrTooLarge) || !strings.Contains(p.Err.Error(), "more than 100000; want a part length of at least 100ms") {
			t.Errorf("part length %v: %v", length, p.Err)
		}
		if len(p.Parts) != 1 {
			t.Errorf("part length %v: %d parts planned, want the one the error keeps", length, len(p.Parts))
		}
	}
	p := scenarios.NewPlan(cellOf(t, "baseline", "token"), scenarios.Options{Backend: sim.New(nil), PartLength: scenarios.MinPartLength})
	if p.Err != nil || len(p.Parts) != 20 {
		t.Errorf("part length 100ms: %d parts, %v; want 20, no error", len(p.Parts), p.Err)
	}
	if err := (scenarios.Options{PartLength: time.Nanosecond}).Validate(); err == nil || !strings.Contains(err.Error(), "part-length 1ns: want 100ms or more") {
		t.Errorf("Validate, part length 1ns: %v", err)
	}
	if err := (scenarios.Options{Duration: 721 * time.Hour}).Validate(); err == nil || !strings.Contains(err.Error(), "duration 721h0m0s: want at most 720h0m0s") {
		t.Errorf("Validate, duration 721h: %v", err)
	}
}

// TestPlanRefusesTooManyFaultWindows: a cell whose gaps could open more
// than MaxFaultWindows fault windows in one part is a plan error naming
// the gap that would do; a gap a Go caller left below the floor (no YAML
// to refuse it) is caught here too.
func TestPlanRefusesTooManyFaultWindows(t *testing.T) {
	gaps := func(min, max, d time.Duration) scenarios.Cell {
		c := cellOf(t, "gc-pause", "token")
		c.Scenario.GapMin, c.Scenario.GapMax, c.Scenario.Duration = min, max, d
		return c
	}
	for _, c := range []struct {
		cell scenarios.Cell
		says string
	}{
		{gaps(time.Nanosecond, time.Nanosecond, 2*time.Second), "gap_min 1ns over 10s fires up to 9900000001 fault windows, more than the 100000"},
		{gaps(0, 50*time.Millisecond, 2*time.Second), "gap_min 0s over 10s"},
		// Simulated: in parts of 2 minutes, 120,000 gaps of 1 ms each.
		{gaps(time.Millisecond, time.Millisecond, 200*time.Second), "over 2m0s fires up to 119901 fault windows, more than the 100000 a cell holds; want gap_min at least 2ms"},
	} {
		p := scenarios.NewPlan(c.cell, scenarios.Options{Backend: sim.New(nil)})
		if !errors.Is(p.Err, scenarios.ErrTooLarge) || !strings.Contains(p.Err.Error(), c.says) {
			t.Errorf("got %v\nwant one saying %q", p.Err, c.says)
		}
	}
	if p := scenarios.NewPlan(gaps(time.Millisecond, time.Millisecond, 20*time.Second), scenarios.Options{Backend: sim.New(nil)}); p.Err != nil {
		t.Errorf("gaps of 1 ms over 20 s: %v", p.Err)
	}
}

// TestMatrixRefusesSeedsThatWrap: a run whose repeats' seeds would wrap
// past the largest int64 (or pass 0, the default seed) makes every run a
// harness error saying so, instead of running seeds nobody asked for.
func TestMatrixRefusesSeedsThatWrap(t *testing.T) {
	for _, c := range []struct {
		seed   int64
		repeat int
		says   string
	}{
		{math.MaxInt64, 2, "seed 9223372036854775807 with 2 runs per cell: their seeds would pass the largest, 9223372036854775807; " +
			"want a seed of at most 9223372036854775806"},
		{-2, 3, "seed -2 with 3 runs per cell: their seeds -2..0 would pass 0"},
	} {
		out := scenarios.RunMatrix(context.Background(), []scenarios.Cell{cellOf(t, "baseline", "token")},
			scenarios.MatrixOptions{Options: scenarios.Options{Backend: process.Backend{}, Seed: c.seed}, Repeat: c.repeat, Parallel: 1})
		for _, r := range out {
			if r.Outcome != results.HarnessError || !strings.Contains(r.Error, c.says) {
				t.Errorf("seed %d x %d: %s, %q; want a harness error saying %q", c.seed, c.repeat, r.Outcome, r.Error, c.says)
			}
		}
	}
	for _, c := range []struct {
		seed   int64
		repeat int
	}{{math.MaxInt64, 1}, {math.MaxInt64 - 1, 2}, {-3, 3}, {1, 100_000}} {
		if err := scenarios.SeedsFor(c.seed, c.repeat); err != nil {
			t.Errorf("seed %d x %d: %v", c.seed, c.repeat, err)
		}
	}
}
