package workload_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/faults/faultstest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
	"github.com/lockchaos/lockchaos/history"
)

// TestRecordCheckerFixtures re-records the real passing histories the
// checker's mutation tests start from. It runs only when asked:
//
//	LOCKCHAOS_UPDATE_FIXTURES=1 go test -run TestRecordCheckerFixtures ./workload/
func TestRecordCheckerFixtures(t *testing.T) {
	if os.Getenv("LOCKCHAOS_UPDATE_FIXTURES") == "" {
		t.Skip("set LOCKCHAOS_UPDATE_FIXTURES=1 to re-record checker/testdata/recorded-*.jsonl")
	}
	for _, f := range []struct {
		file, lock string
		cfg        workload.Config
	}{
		{"recorded-token.jsonl", lockimpl.NameToken, workload.Config{Clients: 4, Duration: 400 * time.Millisecond}},
		{"recorded-fenced-3keys.jsonl", lockimpl.NameFenced, workload.Config{Clients: 4, Duration: 400 * time.Millisecond,
			Keys: []string{"order:1", "order:2", "order:3"}, Fencing: workload.FenceReadsAndWrites}},
	} {
		c := faultstest.Cluster(t, faults.ClusterConfig{Clients: f.cfg.Clients})
		path := filepath.Join("..", "checker", "testdata", f.file)
		rec, err := history.NewRecorder(path, history.Header{Scenario: "baseline", Lock: f.lock, Seed: 1,
			Clients: f.cfg.Clients, Keys: f.cfg.Keys, Fencing: string(f.cfg.Fencing)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := workload.Run(context.Background(), f.cfg, redisFactory(t, c, f.lock, time.Second), rec, workload.Hooks{}); err != nil {
			t.Fatal(err)
		}
		h, err := rec.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rep := checker.Check(context.Background(), h, checker.Options{}); rep.Verdict != checker.Pass {
			t.Fatalf("%s: a fixture must pass, got %s", f.file, rep.Verdict)
		}
		t.Logf("%s: %d events", f.file, len(h.Events))
	}
}
