package reports_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

func tableSummary() *reports.Summary {
	cell := func(sc, lock string, e results.Expectation, v checker.Status, o results.Outcome) *results.Cell {
		return &results.Cell{Scenario: sc, Lock: lock, LockTraits: "1 node", Expect: e, Verdict: v, Outcome: o}
	}
	s := &reports.Summary{Backend: "process", Seed: 7, Repeat: 2, Command: "lockchaos run --repeat 2", Cells: []*results.Cell{
		cell("baseline", "redis-py", results.Safe, checker.Pass, results.Met),
		cell("baseline", "redis-py", results.Safe, checker.Pass, results.Met),
		cell("gc-pause", "redis-py", results.Unsafe, checker.Fail, results.Met),
		cell("gc-pause", "redis-py", results.Unsafe, checker.Pass, results.Inconclusive),
		cell("baseline", "rueidislock", results.Safe, checker.Pass, results.Met),
		cell("baseline", "rueidislock", results.Safe, checker.Pass, results.Met),
	}}
	s.Tally()
	return s
}

func TestMarkdownTableHasARowPerLockAndACountPerCell(t *testing.T) {
	md := reports.Markdown(tableSummary())
	for _, want := range []string{
		"| lock | baseline | gc-pause |",
		"| `redis-py` (1 node) | safe, fails 0/2 | **unsafe**, fails 1/2 (1 inconclusive), met 1/2 |",
		"| `rueidislock` (1 node) | safe, fails 0/2 | – |",
		"`lockchaos run --repeat 2`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdownGoesBetweenTheMarkersOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	doc := "# Title\n\nbefore\n" + reports.TableStart + "\nold table\n" + reports.TableEnd + "\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteMarkdownInto(path, "NEW\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Title\n\nbefore\n" + reports.TableStart + "\nNEW\n" + reports.TableEnd + "\nafter\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteMarkdownInto(path, "NEW\n"); !errors.Is(err, reports.ErrNoMarkers) {
		t.Fatalf("err = %v, want ErrNoMarkers", err)
	}
}

// TestMarkdownNeverCountsAHarnessErrorAsAPass: "fails 0/1" of a cell whose
// one run broke would read as a pass; a run the harness could not complete
// is counted as an error and left out of the runs that could fail.
func TestMarkdownNeverCountsAHarnessErrorAsAPass(t *testing.T) {
	cell := func(lock string, e results.Expectation, v checker.Status, o results.Outcome) *results.Cell {
		return &results.Cell{Scenario: "baseline", Lock: lock, Expect: e, Verdict: v, Outcome: o}
	}
	s := &reports.Summary{Backend: "process", Seed: 7, Repeat: 3, Command: "lockchaos run", Cells: []*results.Cell{
		cell("rb", results.Either, "", results.HarnessError),
		cell("rb", results.Either, checker.Pass, results.HarnessError), // as summaries of earlier versions had it
		cell("rb", results.Either, "", results.HarnessError),
		cell("py", results.Safe, checker.Pass, results.Met),
		cell("py", results.Safe, "", results.HarnessError),
		cell("py", results.Safe, checker.Pass, results.Met),
	}}
	s.Tally()
	md := reports.Markdown(s)
	for _, want := range []string{
		"| `rb` | no verdict (3 errors) |",
		"| `py` | safe, fails 0/2 (1 errors), met 2/3 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}
