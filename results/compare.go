package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockchaos/lockchaos/checker"
)

// Outcome compares a cell's verdicts with its expectation.
type Outcome string

// Outcomes.
const (
	Met          Outcome = "met"          // safe and passed, unsafe and detected, live and recovered, stuck and caught, or either
	Regression   Outcome = "regression"   // a safe (or live) group failed, or a property not allowed to fail did
	Missed       Outcome = "missed"       // an unsafe (or stuck) group passed: the harness missed a known bug
	Unknown      Outcome = "unknown"      // the checker could not decide
	Inconclusive Outcome = "inconclusive" // a pass below the evidence floor: the danger never (or too rarely) happened
	HarnessError Outcome = "error"        // the cell could not run: no verdict (see ShownVerdict)
	Skipped      Outcome = "skipped"      // not applicable, or interrupted before it ran
	Interrupted  Outcome = "interrupted"  // Ctrl-C or SIGTERM mid-cell: partial history, checked
)

// Outcomes are every outcome, in the order of the constants.
func Outcomes() []Outcome {
	return []Outcome{Met, Regression, Missed, Unknown, Inconclusive, HarnessError, Skipped, Interrupted}
}

// Valid says o is one of Outcomes.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes(), o) }

// Compare turns one group's verdict into an outcome for an expectation
// (safe or live: must pass; unsafe or stuck: must fail; either). A
// decisive violation always counts; a pass counts only with enough
// evidence.
func Compare(e Expectation, v checker.Status, ev checker.Evidence) Outcome {
	failing := e == Unsafe || e == Stuck
	switch {
	case v == checker.Unknown:
		return Unknown
	case v == checker.Pass && !ev.Enough:
		return Inconclusive
	case e == Either:
		return Met
	case !failing && v == checker.Pass, failing && v == checker.Fail:
		return Met
	case !failing:
		return Regression
	}
	return Missed
}

// Verdicts are what a cell's checks said, per group, over every part it
// ran.
type Verdicts struct {
	// Safety and Liveness are checker.GroupVerdict's; "" when the group
	// judged nothing.
	Safety, Liveness checker.Status
	// Failed are the properties that failed decisively, each once.
	Failed []checker.Property
}

// VerdictsOf reads one report's results.
func VerdictsOf(rs []checker.Result) Verdicts {
	v := Verdicts{Safety: checker.GroupVerdict(rs, checker.GroupSafety), Liveness: checker.GroupVerdict(rs, checker.GroupLiveness)}
	for _, r := range rs {
		if r.Decisive && r.Status == checker.Fail && !slices.Contains(v.Failed, r.Property) {
			v.Failed = append(v.Failed, r.Property)
		}
	}
	return v
}

// Add is the verdicts of two parts of one cell: the worse per group (fail
// over unknown over pass over none), every failed property once.
func (v Verdicts) Add(o Verdicts) Verdicts {
	v.Safety, v.Liveness = Worse(v.Safety, o.Safety), Worse(v.Liveness, o.Liveness)
	for _, p := range o.Failed {
		if !slices.Contains(v.Failed, p) {
			v.Failed = append(v.Failed, p)
		}
	}
	return v
}

// Worse combines verdicts: fail over unknown over pass ("" is none).
func Worse(a, b checker.Status) checker.Status {
	rank := map[checker.Status]int{"": 0, checker.Pass: 1, checker.Unknown: 2, checker.Fail: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Comparison is a cell's verdicts held against its expectation: each
// group's outcome, the cell's, and why where the words alone do not say.
type Comparison struct {
	Safety Outcome
	// Liveness is "" when no liveness property judged anything and none
	// was needed (expected live or either): not judged.
	Liveness Outcome
	Outcome  Outcome
	// Why names a property that failed without being allowed to, or the
	// group not judged in a cell met on the other alone.
	Why string
}

// Compare holds a cell's verdicts to e, each group on its own, then the
// cell: a regression if a group regressed, else missed if one missed, else
// unknown if one is unknown. An inconclusive group makes the cell
// inconclusive unless the other group showed the failure it was expected
// to show (a lock that deadlocked after its first crash leaves too little
// evidence for safety, and the deadlock is the finding). A liveness group
// that judged nothing does not count when live was expected; it is
// inconclusive when stuck was: nothing showed the lock stuck.
func (e Expect) Compare(v Verdicts, ev checker.Evidence) Comparison {
	e = e.Expected()
	c := Comparison{}
	var whys []string
	c.Safety, c.Why = e.safety(v, ev)
	if c.Why != "" {
		whys = append(whys, c.Why)
	}
	switch {
	case v.Liveness == "" && e.Liveness == Stuck:
		c.Liveness = Inconclusive
	case v.Liveness != "":
		c.Liveness = Compare(e.Liveness, v.Liveness, ev)
	}
	both := []Outcome{c.Safety, c.Liveness}
	switch {
	case slices.Contains(both, Regression):
		c.Outcome = Regression
	case slices.Contains(both, Missed):
		c.Outcome = Missed
	case slices.Contains(both, Unknown):
		c.Outcome = Unknown
	case c.Safety == Inconclusive && c.Liveness == Inconclusive:
		c.Outcome = Inconclusive
	case c.Safety == Inconclusive && c.Liveness == Met && e.Liveness == Stuck && v.Liveness == checker.Fail:
		c.Outcome = Met
		whys = append(whys, "safety not judged: "+shortOf(ev))
	case c.Liveness == Inconclusive && c.Safety == Met && e.Safety == Unsafe && v.Safety == checker.Fail:
		c.Outcome = Met
		whys = append(whys, livenessWhy(v, ev))
	case c.Safety == Inconclusive || c.Liveness == Inconclusive:
		c.Outcome = Inconclusive
	default:
		c.Outcome = Met
	}
	if c.Liveness == Inconclusive && v.Liveness == "" && c.Outcome == Inconclusive {
		whys = append(whys, livenessWhy(v, ev))
	}
	c.Why = strings.Join(whys, "; ")
	return c
}

// livenessWhy says why the liveness group has no verdict that counts.
func livenessWhy(v Verdicts, ev checker.Evidence) string {
	if v.Liveness == "" {
		return "liveness not judged: nothing showed the lock stuck (no holder stopped while others kept trying)"
	}
	return "liveness not judged: " + shortOf(ev)
}

// safety is the safety group's outcome, with why when a property failed
// that e does not allow to.
func (e Expect) safety(v Verdicts, ev checker.Evidence) (Outcome, string) {
	if len(e.MayFail) > 0 {
		var other []checker.Property
		for _, p := range v.Failed {
			if p.Group() == checker.GroupSafety && !e.mayFail(p) {
				other = append(other, p)
			}
		}
		if len(other) > 0 {
			return Regression, fmt.Sprintf("%s failed, not among the properties expected to fail [%s]",
				propertyList(other), propertyList(e.MayFail))
		}
	}
	if v.Safety == "" {
		return Inconclusive, ""
	}
	return Compare(e.Safety, v.Safety, ev), ""
}

// mayFail says whether e allows p to fail: p is listed, or p is the
// resource's check and mutual exclusion is listed (a lost update is what
// two holders at once do to an unfenced resource: the one bug shows in
// both properties).
func (e Expect) mayFail(p checker.Property) bool {
	return slices.Contains(e.MayFail, p) ||
		p == checker.ResourceLinearizable && slices.Contains(e.MayFail, checker.MutualExclusion)
}

func shortOf(ev checker.Evidence) string {
	if len(ev.Short) == 0 {
		return "below the evidence floor"
	}
	return strings.Join(ev.Short, "; ")
}

// Settled reports whether checks of a running cell's history so far (v)
// already decide it, so it may end early: a failure of a group that must
// pass, or of a property not allowed to fail (a regression, which later
// events cannot undo), or a failure in every group that expects one; a
// failure of a reported-only liveness group does not end a cell whose
// safety must pass. A
// cell that singles out the properties allowed to fail runs to its end
// unless it regressed: its other safety properties are held to safe, which
// only the whole run can show.
func (e Expect) Settled(v Verdicts) bool {
	e = e.Expected()
	if e.Compare(v, checker.Evidence{Enough: true}).Outcome == Regression {
		return true
	}
	switch {
	case len(e.MayFail) > 0, v.Safety != checker.Fail && v.Liveness != checker.Fail:
		return false
	case e.Safety == Unsafe && v.Safety != checker.Fail, e.Liveness == Stuck && v.Liveness != checker.Fail:
		return false
	case e.Liveness == Either && v.Safety != checker.Fail:
		// Only the reported liveness failed: safety (safe, or either)
		// must still show its pass, which a cell ended now (too few
		// cycles, too few fault windows) cannot.
		return false
	}
	return true
}
