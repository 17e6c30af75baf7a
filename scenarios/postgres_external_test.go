package scenarios_test

import (
	"context"
	"testing"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// TestPostgresExternalCells runs PostgreSQL cells on a user's server
// (--postgres-url) as a role that is no superuser: the tuned timeouts,
// set per session there, free a paused holder's lock (gc-pause on
// pg-advisory-tuned is unsafe, as the catalog expects), a crashed pod's
// lock goes with its session (pod-crash on pg-row is safe and live); and
// nothing of the user's is touched, nor is anything of the harness's
// left.
func TestPostgresExternalCells(t *testing.T) {
	app, _, admin := backendtest.UserPostgres(t)
	before := backendtest.UserObjects(t, admin)
	t.Logf("the user's objects:\n%s", before)
	b, err := external.New(external.Config{PostgresURL: app})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ scenario, lock string }{
		{"gc-pause", "pg-advisory-tuned"},
		{"pod-crash", "pg-row"},
	} {
		cell := cellOf(t, c.scenario, c.lock)
		res := scenarios.RunCell(context.Background(), cell, scenarios.Options{Backend: b, Seed: 36, OutDir: t.TempDir()})
		if res.Outcome != results.Met {
			t.Errorf("%s\n(expected %s: %s)\nrerun: %s", res.Summary(), cell.Expect, cell.Expect.Why, res.Rerun)
		}
	}
	if after := backendtest.UserObjects(t, admin); after != before {
		t.Errorf("the user's objects changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if left := backendtest.Query(t, admin, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lockchaos%'"); left != "" {
		t.Errorf("schemas left behind: %s", left)
	}
}
