package scenarios

import (
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// What a long sweep keeps of each run. Past KeepInMemory runs, the HTML
// pages re-read each history from its file instead of keeping it.
const (
	KeepInMemory = 200
	// SweepViolations is how many violations per property each run of a
	// sweep past KeepInMemory keeps for summary.json and JUnit
	// (violation_count keeps the total; a page re-checks the history and
	// lists them all).
	SweepViolations = 3
)

// ForgetDetail drops what a run of a sweep need not keep: its events and
// porcupine's visualization data (~300 KB a run), which its page re-checks
// from the history file (measured: 3400 simulated runs peaked at 2.3-2.5 GB
// RSS keeping them), and all but SweepViolations of its violations per
// property, which were most of summary.json (145 of 220 MB for 29,000
// runs). The counts stay.
func ForgetDetail(r *results.Cell) {
	r.Checked, r.Report = nil, nil
	for i := range r.Results {
		r.Results[i].Model, r.Results[i].Info = nil, nil
		if v := r.Results[i].Violations; len(v) > SweepViolations {
			r.Results[i].Violations = append([]checker.Violation(nil), v[:SweepViolations]...)
		}
	}
}
