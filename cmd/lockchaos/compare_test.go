package main

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

// TestCompareSideBySide: cells agree when both runs found the same thing,
// differ otherwise (exit 1), and a cell skipped on one side is said so,
// never counted as agreeing or differing.
func TestCompareSideBySide(t *testing.T) {
	cell := func(sc, lock string, v checker.Status, o results.Outcome) *results.Cell {
		return &results.Cell{Scenario: sc, Lock: lock, Expect: results.Unsafe, Verdict: v, Outcome: o}
	}
	sim := &reports.Summary{Backend: "sim", Simulated: true, Cells: []*results.Cell{
		cell("gc-pause", "token", checker.Fail, results.Met),
		cell("slow-reply", "token", checker.Fail, results.Met),
		cell("failover", "token", "", results.Skipped)}}
	proc := &reports.Summary{Backend: "process", Cells: []*results.Cell{
		cell("gc-pause", "token", checker.Fail, results.Met),
		cell("slow-reply", "token", checker.Pass, results.Missed),
		cell("failover", "token", checker.Fail, results.Met)}}
	var out strings.Builder
	if code := reports.Compare(&out, sim, proc); code != 1 {
		t.Errorf("%d differ, want 1", code)
	}
	lines := strings.Split(out.String(), "\n")
	for i, want := range []string{"sim (simulated)", "gc-pause.*fail 1/1.*fail 1/1.*agrees", "slow-reply.*fail 1/1.*pass 1/1.*DIFFERS",
		"failover.*skipped.*fail 1/1.*ran on one side only"} {
		if !matches(lines[i], want) {
			t.Errorf("line %d %q does not match %q", i, lines[i], want)
		}
	}
	out.Reset()
	if code := reports.Compare(&out, sim, sim); code != 0 {
		t.Errorf("a run compared with itself: %d differ\n%s", code, out.String())
	}
}

func matches(line, pattern string) bool {
	for _, part := range strings.Split(pattern, ".*") {
		i := strings.Index(line, part)
		if i < 0 {
			return false
		}
		line = line[i+len(part):]
	}
	return true
}
