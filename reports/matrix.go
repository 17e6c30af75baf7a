package reports

import (
	"fmt"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// The index's matrix: a cell per scenario and lock, its colour, its
// verdict per group.

// outcomeClass is the matrix colour of a cell run.
func outcomeClass(c *results.Cell) string {
	switch c.Outcome {
	case results.Met:
		e := c.Expected()
		switch {
		case e.Safety == results.Unsafe || e.Liveness == results.Stuck:
			return "unsafe-detected" // the failure expected was found
		case e.Safety == results.Safe:
			return "safe-pass"
		}
		return "either"
	case results.Regression:
		return "regression"
	case results.Missed:
		return "missed"
	case results.Unknown:
		return "unknown"
	case results.Inconclusive:
		return "inconclusive"
	case results.HarnessError:
		return "error"
	case results.Interrupted:
		return "interrupted"
	}
	return "na"
}

// foldRuns shows one run as is, several as a detection rate; the worst
// outcome decides the colour and the link goes to the first run with it.
func foldRuns(runs []*results.Cell, links map[*results.Cell]string) matrixCell {
	worst := runs[0]
	rank := map[string]int{"regression": 7, "missed": 6, "error": 5, "unknown": 4, "inconclusive": 3, "interrupted": 2}
	failed := 0
	for _, r := range runs {
		if rank[outcomeClass(r)] > rank[outcomeClass(worst)] {
			worst = r
		}
		if v, _ := r.SafetyGroup(); v == checker.Fail && r.ShownVerdict() != results.NoVerdict {
			failed++
		}
	}
	title := fmt.Sprintf("expected %s; %s", worst.Expected(), worst.Outcome)
	if worst.Why != "" {
		title += ": " + worst.Why
	}
	mc := matrixCell{Present: true, Class: outcomeClass(worst), Outcome: string(worst.Outcome), Link: links[worst],
		Title: title, Liveness: "liveness: " + worst.LivenessText()}
	if len(runs) == 1 {
		mc.Verdict = safetyWord(worst)
		switch {
		case worst.Expect == results.NotApplicable:
			mc.Verdict, mc.Detail, mc.Liveness = "n/a", "", ""
		case safetyViolations(worst) > 0:
			mc.Detail = fmt.Sprintf("%d violation(s)", safetyViolations(worst))
		case worst.Error != "":
			mc.Detail = string(worst.Outcome)
		default:
			mc.Detail = "0 violations"
		}
		return mc
	}
	mc.Verdict = fmt.Sprintf("%d/%d failed", failed, len(runs))
	if worst.Expect == results.Unsafe {
		mc.Verdict = fmt.Sprintf("%d/%d detected", failed, len(runs))
	}
	mc.Detail = fmt.Sprintf("expected %s", worst.Expected().SafetyText())
	mc.Liveness = foldLiveness(runs)
	return mc
}

// foldLiveness is the liveness line of several runs: how many of those
// that judged liveness found the lock stuck, against what was expected.
func foldLiveness(runs []*results.Cell) string {
	judged, stuck := 0, 0
	for _, r := range runs {
		if r.LivenessVerdict != "" && r.ShownVerdict() != results.NoVerdict {
			judged++
			if r.LivenessVerdict == checker.Fail {
				stuck++
			}
		}
	}
	e := runs[0].Expected().Liveness
	if judged == 0 {
		return fmt.Sprintf("liveness: not judged (expected %s)", e)
	}
	return fmt.Sprintf("liveness: %d/%d stuck (expected %s)", stuck, judged, e)
}

// verdictWord is a cell's verdict as the matrix shows it: on a cell
// expected unsafe a violation is what was wanted, so it reads "detected",
// not a "fail" that looks like bad news at first sight.
func verdictWord(c *results.Cell) string {
	v := c.ShownVerdict() // "-" for a harness error: never a pass
	if c.Expect == results.Unsafe && v == string(checker.Fail) {
		return "detected"
	}
	return v
}

// safetyWord is verdictWord of the safety group alone: the matrix's
// first line, above its liveness line.
// safetyViolations are the decisive violations of the cell's safety
// properties: the count beside the safety verdict, which a liveness
// violation (shown on the liveness line) must not swell into "pass, 1
// violation(s)". A cell without its results (an older summary) has its
// total.
func safetyViolations(c *results.Cell) int {
	if len(c.Results) == 0 {
		return c.Violations
	}
	n := 0
	for _, r := range c.Results {
		if r.Decisive && r.Property.Group() != checker.GroupLiveness {
			n += r.ViolationCount
		}
	}
	return n
}

func safetyWord(c *results.Cell) string {
	v, _ := c.SafetyGroup()
	switch {
	case v == "" || c.ShownVerdict() == results.NoVerdict:
		return results.NoVerdict
	case c.Expect == results.Unsafe && v == checker.Fail:
		return "detected"
	}
	return string(v)
}
