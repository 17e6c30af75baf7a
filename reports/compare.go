package reports

import (
	"fmt"
	"io"

	"github.com/lockchaos/lockchaos/results"
)

// finding is what a run found in one cell, over its repeats, with how
// often liveness was found stuck where it was judged.
func finding(a results.Aggregate) string {
	if a.LivenessJudged > 0 {
		return safetyFinding(a) + fmt.Sprintf(", stuck %d/%d", a.LivenessFailed, a.LivenessJudged)
	}
	return safetyFinding(a)
}

func safetyFinding(a results.Aggregate) string {
	switch {
	case a.Failed > 0:
		return fmt.Sprintf("fail %d/%d", a.Failed, a.Runs)
	case a.Decisive > 0 && a.Decisive == a.Runs:
		return fmt.Sprintf("pass %d/%d", a.Decisive, a.Runs)
	case a.Decisive > 0:
		return fmt.Sprintf("pass %d/%d decisive", a.Decisive, a.Runs)
	case a.Runs == 0:
		return "-"
	}
	return "not decided"
}

// kind is the part of a finding two runs must share to agree: whether
// some run failed (safety), passed decisively, or neither, and whether
// liveness was found stuck, live, or not judged.
func kind(a results.Aggregate, present bool) string {
	live := ""
	switch {
	case a.LivenessFailed > 0:
		live = ", stuck"
	case a.LivenessJudged > 0:
		live = ", live"
	}
	switch {
	case !present:
		return "absent"
	case a.SafetyFailed > 0:
		return "fail" + live
	case a.Decisive > 0:
		return "pass" + live
	}
	return "none" + live
}

// aggregatesRun is a run's aggregates by cell name, of the cells that ran.
func aggregatesRun(s *Summary) map[string]results.Aggregate {
	m := map[string]results.Aggregate{}
	var ran []*results.Cell
	for _, c := range s.Cells {
		if c.Outcome != results.Skipped {
			ran = append(ran, c)
		}
	}
	for _, g := range results.Aggregates(ran) {
		m[results.CellName(g.Scenario, g.Lock)] = g
	}
	return m
}

// Compare writes two runs' outcomes side by side, cell by cell, in the
// order the cells were planned (a's, then b's cells that a lacks), and
// returns how many cells that ran on both differ. A cell agrees when both
// runs found the same thing: a violation in some run, a pass in every
// decisive run, or nothing decisive (skipped, inconclusive).
func Compare(w io.Writer, a, b *Summary) (differ int) {
	label := backendText
	am, bm := aggregatesRun(a), aggregatesRun(b)
	status := func(s *Summary, m map[string]results.Aggregate, name string) string {
		if g, ok := m[name]; ok {
			return finding(g)
		}
		for _, c := range s.Cells {
			if c.Name() == name {
				return "skipped"
			}
		}
		return "not in this run"
	}
	fmt.Fprintf(w, "%-22s %-15s %-14s %-24s %-24s %s\n", "SCENARIO", "LOCK", "EXPECT", trim(label(a), 24), trim(label(b), 24), "")
	seen := map[string]bool{}
	for _, s := range []*Summary{a, b} {
		for _, c := range s.Cells {
			name := c.Name()
			if seen[name] {
				continue
			}
			seen[name] = true
			ga, inA := am[name]
			gb, inB := bm[name]
			note := ""
			switch ka, kb := kind(ga, inA), kind(gb, inB); {
			case !inA && !inB:
				note = "ran on neither"
			case !inA || !inB:
				note = "ran on one side only"
			case ka != kb:
				note = "DIFFERS"
				differ++
			default:
				note = "agrees"
			}
			e := c.Expected()
			fmt.Fprintf(w, "%-22s %-15s %-14s %-24s %-24s %s\n", c.Scenario, c.Lock, string(e.Safety)+"/"+string(e.Liveness),
				status(a, am, name), status(b, bm, name), note)
		}
	}
	fmt.Fprintf(w, "\n%d cell(s) differ\n", differ)
	return differ
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
