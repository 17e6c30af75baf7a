package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/lockchaos/lockchaos/faults/sim"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// simBackend runs each cell part in a synctest bubble of t's.
func simBackend(t *testing.T) sim.Backend {
	return sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
}

// TestSimMatrix runs the default matrix on the simulated backend, two
// cells at a time: every cell it can model meets the catalog's
// expectation (the same expectations as on real Redis), and every cell it
// cannot is skipped with the reason, never run on a fake.
func TestSimMatrix(t *testing.T) {
	cells, err := scenarios.Select(scenarios.Catalog(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := scenarios.RunMatrix(context.Background(), cells, scenarios.MatrixOptions{
		Options: scenarios.Options{Seed: 1, Backend: simBackend(t)}, Parallel: 2})
	ran := 0
	for _, r := range res {
		switch {
		case r.Outcome == results.Skipped:
			if !strings.Contains(r.Error, "sim backend") && !strings.HasPrefix(r.Error, "not applicable") {
				t.Errorf("%s: skipped without saying why the simulation cannot run it: %q", r.Name(), r.Error)
			}
		case r.Outcome != results.Met:
			t.Errorf("%s: %s", r.Name(), r.Summary())
		default:
			ran++
			if r.TimeScale != 1 {
				t.Errorf("%s: time scale %v; virtual time needs none", r.Name(), r.TimeScale)
			}
		}
	}
	if ran < 25 {
		t.Errorf("only %d cells ran on the simulation; the default matrix has 28 it can model", ran)
	}
}
