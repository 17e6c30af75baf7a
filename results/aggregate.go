package results

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockchaos/lockchaos/checker"
)

// Aggregate summarises the repeats of one cell.
type Aggregate struct {
	Scenario string      `json:"scenario"`
	Lock     string      `json:"lock"`
	Expect   Expectation `json:"expectation"`
	// Liveness and MayFail complete the expectation (as on Cell).
	Liveness Expectation        `json:"liveness_expectation,omitempty"`
	MayFail  []checker.Property `json:"may_fail,omitempty"`
	Runs     int                `json:"runs"`
	Failed   int                `json:"failed"`  // runs whose verdict was fail
	Unknown  int                `json:"unknown"` // runs the checker could not decide
	Errors   int                `json:"errors"`  // runs the harness could not complete
	Met      int                `json:"met"`
	// Per group: SafetyFailed and LivenessFailed count the runs whose
	// group verdict was fail (a liveness fail is a stuck lock),
	// SafetyMet and LivenessMet those whose group met its expectation,
	// SafetyInconclusive those whose safety was inconclusive (in a cell
	// met on liveness too), LivenessJudged those with any liveness
	// verdict at all.
	SafetyFailed       int `json:"safety_failed"`
	SafetyMet          int `json:"safety_met"`
	SafetyInconclusive int `json:"safety_inconclusive"`
	LivenessFailed     int `json:"liveness_failed"`
	LivenessMet        int `json:"liveness_met"`
	LivenessJudged     int `json:"liveness_judged"`
	// Decisive runs had a verdict that counts: a violation, or a pass above
	// the evidence floor. Inconclusive runs did not, and are not in Decisive.
	Decisive     int `json:"decisive"`
	Inconclusive int `json:"inconclusive"`
	// MedianFirstViolation over the failing runs, or -1.
	MedianFirstViolation time.Duration `json:"median_first_violation_ns"`
	// When runs share a seed (run --same-seed): SameSeedRuns is how many
	// ran (not skipped) with the first run's seed, SameVerdict how many of
	// them gave the most common verdict, and SameEvidence how many gave the
	// most common verdict and evidence counts together (fault windows,
	// exercised moments, cycles, decisive violations). Zero otherwise.
	SameSeedRuns int `json:"same_seed_runs,omitempty"`
	SameVerdict  int `json:"same_verdict,omitempty"`
	SameEvidence int `json:"same_evidence,omitempty"`
}

// Aggregates groups results by cell, in order.
func Aggregates(cells []*Cell) []Aggregate {
	var out []Aggregate
	idx := map[string]int{}
	firsts := map[string][]int64{}
	for _, r := range cells {
		k := r.Name()
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Aggregate{Scenario: r.Scenario, Lock: r.Lock, Expect: r.Expect, Liveness: r.Liveness,
				MayFail: r.MayFail, MedianFirstViolation: -1})
		}
		a := &out[i]
		a.Runs++
		a.addGroups(r)
		switch {
		case r.Outcome == HarnessError:
			a.Errors++
		case r.Verdict == checker.Fail:
			a.Failed++
			a.Decisive++
			firsts[k] = append(firsts[k], r.Stats.FirstViolation)
		case r.Verdict == checker.Unknown:
			a.Unknown++
		case r.Outcome == Inconclusive:
			a.Inconclusive++
		case r.Verdict == checker.Pass:
			a.Decisive++
		}
		if r.Outcome == Met {
			a.Met++
		}
	}
	for k, fs := range firsts {
		sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
		out[idx[k]].MedianFirstViolation = time.Duration(fs[len(fs)/2])
	}
	sameSeed(cells, idx, out)
	return out
}

// addGroups counts one run's group verdicts and outcomes.
func (a *Aggregate) addGroups(r *Cell) {
	if r.Outcome == HarnessError {
		return // no verdict (ShownVerdict)
	}
	count := func(n *int, ok bool) {
		if ok {
			*n++
		}
	}
	sv, so := r.SafetyGroup()
	count(&a.SafetyFailed, sv == checker.Fail)
	count(&a.SafetyMet, so == Met)
	count(&a.SafetyInconclusive, so == Inconclusive)
	count(&a.LivenessFailed, r.LivenessVerdict == checker.Fail)
	count(&a.LivenessMet, r.LivenessOutcome == Met)
	count(&a.LivenessJudged, r.LivenessVerdict != "")
}

// Expected is the cells' expectation, whole.
func (a *Aggregate) Expected() Expect {
	return Expect{Safety: a.Expect, Liveness: a.Liveness, MayFail: a.MayFail}.Expected()
}

// sameSeed fills the agreement counts of cells whose runs share a seed.
func sameSeed(cells []*Cell, idx map[string]int, out []Aggregate) {
	type fingerprint struct {
		verdict                              checker.Status
		fired, exercised, cycles, violations int
	}
	seeds := map[string]int64{}
	verdicts := map[string]map[checker.Status]int{}
	prints := map[string]map[fingerprint]int{}
	runs := map[string]int{}
	for _, r := range cells {
		k := r.Name()
		if r.Outcome == Skipped {
			continue
		}
		if s, ok := seeds[k]; !ok {
			seeds[k] = r.RunSeed
			verdicts[k], prints[k] = map[checker.Status]int{}, map[fingerprint]int{}
		} else if s != r.RunSeed {
			continue
		}
		runs[k]++
		verdicts[k][r.Verdict]++
		prints[k][fingerprint{r.Verdict, r.Evidence.Fired, r.Evidence.Exercised, r.Evidence.Cycles, r.Violations}]++
	}
	for k, n := range runs {
		if n < 2 {
			continue
		}
		a := &out[idx[k]]
		a.SameSeedRuns = n
		for _, c := range verdicts[k] {
			a.SameVerdict = max(a.SameVerdict, c)
		}
		for _, c := range prints[k] {
			a.SameEvidence = max(a.SameEvidence, c)
		}
	}
}

// GroupsText is each group's tally for people: "safety: 3/3 met,
// liveness: 3/3 met, 3/3 stuck" (met of the runs that ran, stuck of those
// that judged liveness at all), or "liveness: not judged".
func (a *Aggregate) GroupsText() string {
	ran := a.Runs - a.Errors
	s := fmt.Sprintf("safety: %d/%d met", a.SafetyMet, ran)
	if a.LivenessJudged == 0 {
		return s + ", liveness: not judged"
	}
	return s + fmt.Sprintf(", liveness: %d/%d met, %d/%d stuck", a.LivenessMet, ran, a.LivenessFailed, a.LivenessJudged)
}
