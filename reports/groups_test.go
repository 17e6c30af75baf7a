package reports_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

// groupRun is a run whose cells expect and show something of liveness:
// a lock caught stuck after a crash (too few cycles left for safety), a
// live lock found stuck, a lock expected stuck that recovered, and a cell
// whose second bug hid behind the first.
func groupRun() *reports.Summary {
	cell := func(sc, lock string, e results.Expect, safety, liveness checker.Status, failed ...checker.Property) *results.Cell {
		c := &results.Cell{Scenario: sc, Lock: lock, Verdict: results.Worse(safety, liveness), SafetyVerdict: safety,
			LivenessVerdict: liveness, FailedProperties: failed, Evidence: checker.Evidence{Enough: true}, Incidents: nil}
		c.SetExpect(e)
		c.Decide()
		return c
	}
	stuck := results.Expect{Safety: results.Safe, Liveness: results.Stuck}
	crashed := cell("pod-crash", "no-ttl", stuck, checker.Pass, checker.Fail, checker.DeadlockFree)
	crashed.Evidence = checker.Evidence{Short: []string{"too few cycles: 4 completed"}}
	crashed.Decide()
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Backend: "process", Seed: 4, Repeat: 1,
		Started: time.Unix(0, 0).UTC(), Command: "lockchaos run --scenario pod-crash", Cells: []*results.Cell{
			crashed,
			cell("pod-crash", "token", results.Safe.Expected(), checker.Pass, checker.Fail, checker.DeadlockFree),
			cell("pod-crash", "long-ttl", stuck, checker.Pass, checker.Pass),
			cell("gc-pause", "naive", results.Expect{MayFail: []checker.Property{checker.MutualExclusion}}, checker.Fail, "",
				checker.MutualExclusion, checker.ForeignRelease),
			cell("gc-pause", "token", results.Unsafe.Expected(), checker.Fail, "", checker.MutualExclusion),
		}}
	s.Tally()
	return s
}

func TestGroupOutcomesOfTheRun(t *testing.T) {
	want := []results.Outcome{results.Met, results.Regression, results.Missed, results.Regression, results.Met}
	for i, c := range groupRun().Cells {
		if c.Outcome != want[i] {
			t.Errorf("%s: %s (%s), want %s", c.Name(), c.Outcome, c.Summary(), want[i])
		}
	}
}

// TestJUnitNamesTheGroupThatMissed: a failure says which group did not do
// what was expected of it.
func TestJUnitNamesTheGroupThatMissed(t *testing.T) {
	dir := t.TempDir()
	path, err := reports.WriteJUnit(dir, groupRun())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{
		`message="liveness expected live, but the lock was stuck (deadlock-free failed)" type="regression"`,
		`message="liveness expected stuck, but the lock kept working: the harness missed a known deadlock" type="missed"`,
		`message="safety expected unsafe [mutual-exclusion]: 0 incident(s), 0 violation(s): foreign-release failed, ` +
			`not among the properties expected to fail [mutual-exclusion]" type="regression"`,
		"pod-crash/no-ttl: safety pass (safe), liveness fail (stuck): met: safety not judged: too few cycles: 4 completed",
		"gc-pause/token: fail (expected unsafe): met",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("junit.xml lacks %s:\n%s", want, b)
		}
	}
}

// TestHTMLShowsLiveness: every matrix cell has its liveness line, and the
// every-run table and the cell page show each group with its expectation.
func TestHTMLShowsLiveness(t *testing.T) {
	dir := t.TempDir()
	s := groupRun()
	s.Repeat = 2 // the every-run table
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{AllPages: true, Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(res.Index)
	for _, want := range []string{
		`<span class="n l">liveness: fail (stuck)</span>`,
		`<span class="n l">liveness: - (live, not judged)</span>`,
		`title="expected safety safe, liveness stuck; met: safety not judged: too few cycles: 4 completed"`,
		`<th>safety (expected)</th><th>liveness (expected)</th>`,
		`<td>pass (safe)</td><td>fail (live)</td><td>regression</td>`,
	} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	var page string
	for _, p := range res.Pages {
		if strings.Contains(p, "no-ttl") {
			b, _ := os.ReadFile(p)
			page = string(b)
		}
	}
	if !strings.Contains(page, `id="groups">safety pass (safe); liveness fail (stuck)<`) {
		t.Errorf("the cell page lacks its groups:\n%s", page)
	}
}

// TestMarkdownHasALivenessColumn: a scenario where liveness was judged or
// expected gets a liveness column beside its safety one; one without
// keeps its single column.
func TestMarkdownHasALivenessColumn(t *testing.T) {
	md := reports.Markdown(groupRun())
	for _, want := range []string{
		"| lock | pod-crash | pod-crash: liveness | gc-pause |\n|---|---|---|---|\n",
		"| `no-ttl` | safe, fails 0/1 (1 inconclusive), met 0/1 | **stuck**, stuck 1/1 |",
		"| `token` | safe, fails 0/1 | live, stuck 1/1, met 0/1 | **unsafe**, fails 1/1 |",
		"| `long-ttl` | safe, fails 0/1 | **stuck**, stuck 0/1, met 0/1 | – |",
		"| `naive` | – | – | **unsafe [mutual-exclusion]**, fails 1/1, met 0/1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

// TestFormat1SummaryStillReads: a summary.json of format 1 (every
// property a safety one) reads as cells of safety alone, expected live
// and not judged of liveness, with per-group aggregates; a format this
// lockchaos does not know is refused.
func TestFormat1SummaryStillReads(t *testing.T) {
	dir := t.TempDir()
	old := `{"format": 1, "tool": "lockchaos", "version": "v0.9", "go_version": "go1.24", "backend": "process", "seed": 3,
  "repeat": 1, "started": "2026-01-01T00:00:00Z", "elapsed_ns": 1, "command": "lockchaos run", "totals": {"met": 1, "regression": 1},
  "cells": [
    {"scenario": "gc-pause", "lock": "token", "expectation": "unsafe", "verdict": "fail", "outcome": "met", "violations": 2,
     "run_seed": 3, "cell_seed": 5, "evidence": {"enough": true}, "fault_windows": 3, "rerun": "", "elapsed_ns": 1, "stats": {}},
    {"scenario": "baseline", "lock": "fenced", "expectation": "safe", "verdict": "fail", "outcome": "regression", "violations": 1,
     "run_seed": 3, "cell_seed": 6, "evidence": {"enough": true}, "fault_windows": 0, "rerun": "", "elapsed_ns": 1, "stats": {}}
  ],
  "aggregates": [{"scenario": "gc-pause", "lock": "token", "expectation": "unsafe", "runs": 1, "failed": 1, "met": 1,
    "decisive": 1, "inconclusive": 0, "unknown": 0, "errors": 0, "median_first_violation_ns": 0}]}`
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := reports.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	if s.Format != reports.FormatVersion || c.SafetyVerdict != checker.Fail || c.SafetyOutcome != results.Met ||
		c.Liveness != results.Live || c.LivenessVerdict != "" || c.LivenessOutcome != "" {
		t.Errorf("format 1 cell read as %+v", c)
	}
	if got := c.Summary(); got != "gc-pause/token: fail (expected unsafe): met, 0 incident(s) (2 violation(s)), first at 0.000 s" {
		t.Errorf("summary %q", got)
	}
	if len(s.Aggregates) != 2 || s.Aggregates[0].SafetyMet != 1 || s.Aggregates[1].SafetyFailed != 1 {
		t.Errorf("aggregates not counted per group: %+v", s.Aggregates)
	}
	// Written again, it is a valid format 2 summary.
	out, err := reports.WriteJSON(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if err := validateJSON(summarySchema(t), b); err != nil {
		t.Errorf("rewritten: %v", err)
	}
	var f struct{ Format int }
	if err := json.Unmarshal(b, &f); err != nil || f.Format != 2 {
		t.Errorf("rewritten as format %d (%v)", f.Format, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(old, `"format": 1`, `"format": 3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.ReadJSON(path); err == nil || !strings.Contains(err.Error(), "format 3, this lockchaos reads formats 1 to 2") {
		t.Errorf("format 3: %v", err)
	}
}

// TestSummaryV2MatchesItsSchema: a run with every group field set is
// valid format 2.
func TestSummaryV2MatchesItsSchema(t *testing.T) {
	out, err := reports.WriteJSON(t.TempDir(), groupRun())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if err := validateJSON(summarySchema(t), b); err != nil {
		t.Errorf("%v", err)
	}
	for _, want := range []string{`"liveness_expectation": "stuck"`, `"may_fail": [`, `"liveness_verdict": "fail"`,
		`"safety_outcome": "inconclusive"`, `"liveness_outcome": "met"`, `"why": "foreign-release failed`, `"liveness_failed": 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary.json lacks %s", want)
		}
	}
}

// TestMatrixCountsSafetyViolationsBesideTheSafetyVerdict: a cell whose
// one violation is its liveness shows "pass, 0 violations" beside its
// safety verdict and the failure on its liveness line, never "pass, 1
// violation(s)".
func TestMatrixCountsSafetyViolationsBesideTheSafetyVerdict(t *testing.T) {
	c := &results.Cell{Scenario: "pod-crash", Lock: "no-ttl", Verdict: checker.Fail, SafetyVerdict: checker.Pass,
		LivenessVerdict: checker.Fail, FailedProperties: []checker.Property{checker.DeadlockFree},
		Evidence: checker.Evidence{Enough: true}, Violations: 1, Results: []checker.Result{
			{Property: checker.MutualExclusion, Status: checker.Pass, Decisive: true},
			{Property: checker.DeadlockFree, Status: checker.Fail, Decisive: true, Judged: 1, ViolationCount: 1}}}
	c.SetExpect(results.Expect{Safety: results.Safe, Liveness: results.Stuck})
	c.Decide()
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Backend: "process", Seed: 4, Repeat: 1,
		Started: time.Unix(0, 0).UTC(), Command: "lockchaos run --scenario pod-crash", Cells: []*results.Cell{c}}
	res, err := reports.WriteHTML(t.TempDir(), s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(res.Index)
	want := `<span class="v">pass</span><br><span class="n">0 violations</span><br><span class="n l">liveness: fail (stuck)</span>`
	if !strings.Contains(string(index), want) {
		t.Errorf("index.html lacks %s", want)
	}
}
