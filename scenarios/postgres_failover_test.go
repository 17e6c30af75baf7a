package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// TestPostgresFailoverPlan: a PostgreSQL lock under failover runs on a
// primary and a streaming standby; under Sentinel (which watches Redis
// only) it is skipped with the reason.
func TestPostgresFailoverPlan(t *testing.T) {
	if _, err := postgres.Find(); err != nil {
		t.Skip(err)
	}
	p := scenarios.NewPlan(cellOf(t, "standby-promotion", "pg-advisory"), scenarios.Options{Backend: process.Backend{}, Seed: 5})
	if p.Topology != deployment.PrimaryReplica || p.Nodes != 2 || p.Skip != "" {
		t.Errorf("failover/pg-advisory: topology %s x%d, skip %q; want %s x2", p.Topology, p.Nodes, p.Skip, deployment.PrimaryReplica)
	}
	sentinel := scenarios.Scenario{Name: "under-sentinel", Faults: []faults.Spec{{Kind: "sentinel-failover"}}}
	p = scenarios.NewPlan(scenarios.Cell{Scenario: sentinel, Lock: lock("pg-advisory"), Expect: scenarios.Either.Expected()},
		scenarios.Options{Backend: process.Backend{}, Seed: 5})
	if !strings.Contains(p.Skip, "Sentinel watches Redis servers only") {
		t.Errorf("under-sentinel/pg-advisory: skip %q; want the Sentinel reason", p.Skip)
	}
}

// TestPostgresFailoverCell runs failover/pg-row on a real primary and
// standby: the lock and the resource's last writes are lost with the
// primary, as the catalog expects, and the fault probed the promoted
// standby (a probe event naming the lock's key, found not held).
func TestPostgresFailoverCell(t *testing.T) {
	if _, err := postgres.Find(); err != nil {
		t.Skip(err)
	}
	cell := cellOf(t, "standby-promotion", "pg-row")
	res := scenarios.RunCell(context.Background(), cell, scenarios.Options{Backend: process.Backend{}, Seed: 36, OutDir: t.TempDir()})
	if res.Outcome != results.Met {
		t.Fatalf("%s\n(expected %s: %s)\nrerun: %s", res.Summary(), cell.Expect, cell.Expect.Why, res.Rerun)
	}
	h, err := history.LoadFile(res.History)
	if err != nil {
		t.Fatal(err)
	}
	probed := false
	for _, e := range h.Events {
		if e.Kind == history.Probe && e.Key != "" && !e.Probed().Exists {
			probed = true
		}
	}
	if !probed {
		t.Errorf("no probe found the promoted standby without the lock")
	}
}
