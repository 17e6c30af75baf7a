package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
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

// TestSimPlan: on the simulated backend a plan is never stretched, and a
// cell that needs replication or a driver process is skipped with the
// reason (planning starts nothing, so no bubble is needed).
func TestSimPlan(t *testing.T) {
	b := sim.New(nil)
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	driver := token
	driver.Name, driver.OutOfProcess = "py-token", true
	for _, tc := range []struct {
		scenario string
		lock     lockimpl.Spec
		skip     string
	}{
		{"gc-pause", token, ""},
		{"failover", token, "cannot model replication"},
		{"gc-pause", driver, "process of its own"},
	} {
		sc, err := scenarios.Get(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: tc.lock, Expect: scenarios.Unsafe.Expected()},
			scenarios.Options{Backend: b, TimeScale: 3, NodeOpTime: time.Second})
		if tc.skip == "" && p.Skip != "" || !strings.Contains(p.Skip, tc.skip) {
			t.Errorf("%s/%s: skip %q, want %q", tc.scenario, tc.lock.Name, p.Skip, tc.skip)
		}
		if p.TimeScale != 1 || !p.Simulated() {
			t.Errorf("%s/%s: time scale %v, simulated %v; want 1, true", tc.scenario, tc.lock.Name, p.TimeScale, p.Simulated())
		}
	}
}
