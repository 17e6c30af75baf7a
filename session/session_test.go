package session

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

// A run where every cell was skipped tested nothing: it exits 4
// (inconclusive) and says so, never 0 (a simulated run of failover, which
// the simulation cannot model, was all skipped and exited 0).
func TestRunWhereEveryCellWasSkippedIsInconclusive(t *testing.T) {
	for _, c := range []struct {
		s    *reports.Summary
		want int
		says string
	}{
		{summaryOf(results.Skipped, results.Skipped), reports.ExitInconclusive, "inconclusive: every cell was skipped (2), nothing was tested"},
		{summaryOf(results.Skipped, results.Met), reports.ExitOK, ""},
		{summaryOf(results.Skipped, results.Regression), reports.ExitViolation, ""},
	} {
		var stderr strings.Builder
		if got := exit(&stderr, nil, c.s, nil); got != c.want || !strings.Contains(stderr.String(), c.says) || (c.says == "") != (stderr.Len() == 0) {
			t.Errorf("%v: exit %d, want %d; said %q", c.s.Totals, got, c.want, stderr.String())
		}
	}
}

// A run interrupted before calibration measured anything claims no time
// scale ("time scale 1.00" was printed): the table says calibration did
// not finish. A --time-scale given is still the one it ran at.
func TestInterruptedCalibrationClaimsNoTimeScale(t *testing.T) {
	if got := interruptedTiming(2.5); got.Scale != 2.5 {
		t.Errorf("--time-scale 2.5 interrupted: scale %v", got.Scale)
	}
	tm := interruptedTiming(0)
	sum := &reports.Summary{Seed: 1, Backend: "process", TimeScale: tm.Scale, Calibration: tm.Calibration}
	sum.Tally()
	var out strings.Builder
	reports.WriteText(&out, sum, false)
	if strings.Contains(out.String(), "time scale 1.00") ||
		!strings.Contains(out.String(), "time scale not measured: the run was interrupted before calibration finished") {
		t.Errorf("interrupted during calibration:\n%s", out.String())
	}
}

// summaryOf is a summary of cells with these outcomes, tallied.
func summaryOf(outcomes ...results.Outcome) *reports.Summary {
	s := &reports.Summary{}
	for _, o := range outcomes {
		s.Cells = append(s.Cells, &results.Cell{Outcome: o})
	}
	s.Tally()
	return s
}
