package scenarios_test

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// A sample of the Redis Cluster rows (make chaos-cluster runs them all):
// a primary cut from the cluster right after a fresh acquisition loses
// the token lock's key, and another pod wins on the promoted replica; the
// lock that waits for the replica keeps it; a slot moving to another
// shard under a held lock loses nothing. Every cell must reach its
// dangerous moment.
func TestClusterCells(t *testing.T) {
	if testing.Short() {
		t.Skip("three Redis Cluster cells of 5-12 s")
	}
	cells := []scenarios.Cell{
		cellOf(t, "cluster-split", lockimpl.NameToken),
		cellOf(t, "cluster-split", lockimpl.NameTokenWait),
		cellOf(t, "slot-migration", lockimpl.NameToken),
	}
	res := runSideBySide(cells, 37)
	for _, r := range res {
		t.Log(r.Summary())
		if r.Outcome != results.Met || r.Evidence.Exercised == 0 {
			t.Errorf("%s\nrerun: %s", r.Summary(), r.Rerun)
		}
	}
	if res[0].Verdict != checker.Fail || res[1].Verdict != checker.Pass || res[2].Verdict != checker.Pass {
		t.Errorf("verdicts: split/token %s (want fail), split/token-wait %s, slot-migration/token %s (want pass)",
			res[0].Verdict, res[1].Verdict, res[2].Verdict)
	}
}

// What cannot run on a cluster says why, in every output: Redlock (it
// needs independent servers), a lock that brings its own client (the
// driver protocol names no cluster seeds), the simulation (miniredis has
// no cluster mode).
func TestClusterCellsThatCannotRunSayWhy(t *testing.T) {
	for _, c := range []struct {
		lock    string
		backend backend.Backend
		says    string
	}{
		{lockimpl.NameRedlock, process.Backend{}, "not applicable: redlock needs 3 independent Redis servers"},
		{lockimpl.NameToken, sim.New(nil), "miniredis has no cluster mode"},
	} {
		sc := mustGet(t, "cluster-baseline")
		p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lock(c.lock), Expect: scenarios.Safe.Expected()},
			scenarios.Options{Backend: c.backend})
		if !strings.Contains(p.Skip, c.says) {
			t.Errorf("%s on %s: skip %q, want it to say %q", c.lock, c.backend.Name(), p.Skip, c.says)
		}
	}
}

func mustGet(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
