package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

// savedResults writes dir/summary.json over two of the checker's saved
// histories, copied into dir, and a third cell whose history is missing.
func savedResults(t *testing.T, dir string) {
	t.Helper()
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Backend: "process", Seed: 1, Repeat: 1,
		Started: time.Unix(0, 0).UTC(), Command: "lockchaos run --seed 1"}
	for _, c := range []struct{ scenario, file string }{{"baseline", "pass.jsonl"}, {"slow-holder", "lost-update.jsonl"}, {"gc-pause", ""}} {
		rel := filepath.Join(c.scenario, "history.jsonl")
		if c.file != "" {
			b, err := os.ReadFile(testdata(c.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, c.scenario), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s.Cells = append(s.Cells, &results.Cell{Scenario: c.scenario, Lock: "token", Expect: results.Either, Outcome: results.Met, History: rel})
	}
	s.Tally()
	if _, err := reports.WriteJSON(dir, s); err != nil {
		t.Fatal(err)
	}
}

// A cell page whose history could not be read is an input error (exit
// 2, as check's): the report names the history and why, and still
// writes every page (it exited 0 and only the page said so).
func TestReportWithAnUnreadableHistoryExits2(t *testing.T) {
	dir := t.TempDir()
	savedResults(t, dir)
	for _, args := range [][]string{{"report", dir}, {"report", "--all-pages", dir}} {
		code, stdout, stderr := runCLI(args...)
		missing := filepath.Join(dir, "gc-pause", "history.jsonl")
		if code != exitUsage || !strings.Contains(stdout, "3 cell page(s)") ||
			!strings.Contains(stderr, "gc-pause--token.html: the history "+missing+" could not be read: ") ||
			!strings.Contains(stderr, "no such file or directory") || !strings.Contains(stderr, "1 of 3 cell page(s) built without their history") {
			t.Errorf("%q: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		if strings.Contains(stderr, "baseline--token") || strings.Contains(stderr, "slow-holder--token") {
			t.Errorf("%q: a readable history was named:\n%s", args, stderr)
		}
	}
}
