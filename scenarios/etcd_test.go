package scenarios_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service"
)

// A sample of the etcd rows (make chaos-etcd runs them all), on three
// real etcd members: a holder paused past its session lease breaks
// etcd's Mutex, and the revision it locked at, checked by the resource,
// fences the same pause; the leader killed under a holder loses nothing.
// Every cell must reach its dangerous moment, and the witness must have
// seen the lease's end on the members (observed, not assumed).
func TestEtcdCells(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Under -race, beside every other package's tests, three cells of
		// three members each starved (CI: 51% of etcd-fenced's acquires
		// timed out; a leader kill saw no new leader in 10 s, or a member
		// not back in 20 s). make test runs them without -race, alone.
		t.Skip("three etcd cells need their real timing: go test -run TestEtcdCells ./scenarios (no -short, no -race)")
	}
	// The same time scale as lockchaos run.
	on, err := scenarios.MeasureTiming(context.Background(), process.Backend{}, 0, service.Etcd)
	if err != nil {
		t.Fatal(err)
	}
	cells := []scenarios.Cell{
		cellOf(t, "etcd-gc-pause", lockimpl.NameEtcdMutex),
		cellOf(t, "etcd-gc-pause", lockimpl.NameEtcdFenced),
		cellOf(t, "etcd-leader-kill", lockimpl.NameEtcdLease),
	}
	// One window that reached its moment is this test's floor (the
	// gate's is two): on a loaded runner a leader kill's cell may see
	// only one.
	one := 1
	res := make([]*results.Cell, len(cells))
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Go(func() {
			res[i] = scenarios.RunCell(context.Background(), c, scenarios.Options{Backend: process.Backend{}, Seed: 38,
				TimeScale: on.Scale, NodeOpTime: on.NodeOp, Floor: scenarios.FloorOverride{MinExercised: &one}})
		})
	}
	wg.Wait()
	for _, r := range res {
		t.Log(r.Summary())
		if r.Outcome != results.Met || r.Evidence.Exercised == 0 {
			t.Errorf("%s\nrerun: %s", r.Summary(), r.Rerun)
		}
	}
	// The leader's kill loses nothing: its safety passes. Its liveness is
	// either in the catalog (under load the key stayed free past the
	// bound: catalog_etcd.go's leaderDeath), so the test asks no more.
	if res[0].Verdict != checker.Fail || res[1].Verdict != checker.Pass || res[2].SafetyVerdict != checker.Pass {
		t.Errorf("verdicts: gc-pause/etcd-mutex %s (want fail), gc-pause/etcd-fenced %s, leader-kill/etcd-lease safety %s (want pass)",
			res[0].Verdict, res[1].Verdict, res[2].SafetyVerdict)
	}
	if e := res[0].Evidence; e.Observed == 0 {
		t.Errorf("gc-pause/etcd-mutex: %d lease end(s) observed, %d assumed: the witness must see the lease end", e.Observed, e.Assumed)
	}
}

// What cannot run on etcd says why: a Redis topology's fault, the
// simulation.
func TestEtcdCellsThatCannotRunSayWhy(t *testing.T) {
	for _, c := range []struct {
		scenario string
		backend  backend.Backend
		says     string
	}{
		{"failover", process.Backend{}, "not applicable: failover fails over Redis"},
		{"etcd-baseline", sim.New(nil), "cannot run in virtual time"},
	} {
		p := scenarios.NewPlan(scenarios.Cell{Scenario: mustGet(t, c.scenario), Lock: lock(lockimpl.NameEtcdMutex), Expect: scenarios.Safe.Expected()},
			scenarios.Options{Backend: c.backend})
		if !strings.Contains(p.Skip, c.says) {
			t.Errorf("%s on %s: skip %q, want it to say %q", c.scenario, c.backend.Name(), p.Skip, c.says)
		}
	}
}
