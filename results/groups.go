package results

import "github.com/lockchaos/lockchaos/checker"

// A cell's expectation and verdicts per property group.

// Expected is the cell's whole expectation.
func (r *Cell) Expected() Expect {
	return Expect{Safety: r.Expect, Liveness: r.Liveness, MayFail: r.MayFail}.Expected()
}

// SetExpect records e (its defaults filled) as the cell's expectation.
func (r *Cell) SetExpect(e Expect) {
	e = e.Expected()
	r.Expect, r.Liveness, r.MayFail = e.Safety, e.Liveness, e.MayFail
}

// Verdicts are the cell's group verdicts and failed properties.
func (r *Cell) Verdicts() Verdicts {
	return Verdicts{Safety: r.SafetyVerdict, Liveness: r.LivenessVerdict, Failed: r.FailedProperties}
}

// AddVerdicts folds one part's verdicts into the cell's.
func (r *Cell) AddVerdicts(v Verdicts) {
	v = r.Verdicts().Add(v)
	r.SafetyVerdict, r.LivenessVerdict, r.FailedProperties = v.Safety, v.Liveness, v.Failed
}

// Decide compares the cell's verdicts and evidence with its expectation
// (Expect.Compare) and records each group's outcome, the cell's and why.
func (r *Cell) Decide() {
	c := r.Expected().Compare(r.Verdicts(), r.Evidence)
	r.SafetyOutcome, r.LivenessOutcome, r.Outcome, r.Why = c.Safety, c.Liveness, c.Outcome, c.Why
}

// Grouped says the cell's outputs must show each group on its own: it
// expects more than the one-word form says, or liveness judged something.
// A cell that does not reads as it did before liveness was checked.
func (r *Cell) Grouped() bool { return !r.Expected().Simple() || r.LivenessVerdict != "" }

// SafetyText is the safety verdict with its expectation, as the table
// shows it: "fail (unsafe)", "pass (safe)", "- (safe)" without a verdict.
func (r *Cell) SafetyText() string {
	v, _ := r.SafetyGroup()
	return r.groupVerdict(v) + " (" + r.Expected().SafetyText() + ")"
}

// SafetyGroup is the safety group's verdict and outcome; a cell built
// with a verdict and no group verdicts (as before groups were) is all
// safety.
func (r *Cell) SafetyGroup() (checker.Status, Outcome) {
	if r.SafetyVerdict == "" && r.LivenessVerdict == "" && r.SafetyOutcome == "" {
		switch r.Outcome {
		case Met, Regression, Missed, Unknown, Inconclusive:
			return r.Verdict, r.Outcome
		}
		return r.Verdict, ""
	}
	return r.SafetyVerdict, r.SafetyOutcome
}

// LivenessText is the liveness verdict with its expectation: "pass
// (live)", "fail (stuck)", "- (live, not judged)" for a cell that ran and
// judged nothing of liveness.
func (r *Cell) LivenessText() string {
	e := string(r.Expected().Liveness)
	if r.LivenessVerdict == "" && r.ran() {
		return NoVerdict + " (" + e + ", not judged)"
	}
	return r.groupVerdict(r.LivenessVerdict) + " (" + e + ")"
}

// groupVerdict is a group's verdict as shown: NoVerdict where the cell
// has none (ShownVerdict).
func (r *Cell) groupVerdict(v checker.Status) string {
	if v == "" || r.ShownVerdict() == NoVerdict {
		return NoVerdict
	}
	return string(v)
}

// ran says the cell ran and was checked (its verdicts mean something).
func (r *Cell) ran() bool {
	return r.ShownVerdict() != NoVerdict
}
