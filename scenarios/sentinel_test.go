package scenarios_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// runSideBySide runs cells at once on the process backend with one seed,
// their results in the cells' order.
func runSideBySide(cells []scenarios.Cell, seed int64) []*results.Cell {
	res := make([]*results.Cell, len(cells))
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = scenarios.RunCell(context.Background(), c, scenarios.Options{Backend: process.Backend{}, Seed: seed})
		}()
	}
	wg.Wait()
	return res
}

func critique(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	f, err := scenarios.LoadFile("critiques.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Scenarios {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %s in critiques.yaml", name)
	return scenarios.Scenario{}
}

// Under real Sentinels: a primary killed right after a fresh acquisition
// loses the token lock's key and another pod wins on the promoted
// replica; the lock that waits for the replica (WAIT 1) keeps its key
// through the same failovers. Both cells must reach the dangerous moment.
func TestSentinelFailoverLosesAFreshKeyUnlessTheLockWaitsForTheReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("two Sentinel cells of about 20 s")
	}
	sc := critique(t, "sentinel-failover")
	cells := []scenarios.Cell{
		{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe.Expected()},
		{Scenario: sc, Lock: lock(lockimpl.NameTokenWait), Expect: scenarios.Safe.Expected()},
	}
	res := runSideBySide(cells, 11)
	for _, r := range res {
		t.Log(r.Summary())
		if r.Outcome != results.Met || r.Evidence.Exercised == 0 {
			t.Errorf("%s", r.Summary())
		}
	}
	if res[0].Verdict != checker.Fail || res[1].Verdict != checker.Pass {
		t.Errorf("verdicts: token %s (want fail), token-wait %s (want pass)", res[0].Verdict, res[1].Verdict)
	}
}
