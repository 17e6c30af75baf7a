package reports_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/reports/reportstest"
	"github.com/lockchaos/lockchaos/results"
)

// everyOutcome is a run of --repeat 2 with every outcome a cell can have:
// met, a regression with violations, a miss, a harness error, an unknown,
// an inconclusive and an interrupted cell, and n/a cells skipped.
func everyOutcome() *reports.Summary {
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: "v0.9.0-3-gabc", GoVersion: "go1.26.8",
		RedisVersion: "7.0.15", Backend: "process", Seed: 41, Repeat: 2, Started: time.Date(2026, 11, 30, 7, 4, 5, 0, time.UTC),
		Elapsed: 9 * time.Second, TimeScale: 1.25, Shard: "2/4",
		Command: `lockchaos run --repeat 2 --seed 41 --lock-driver "py=python3 d.py"`}
	violation := checker.Result{Property: "mutual-exclusion", Status: checker.Fail, ViolationCount: 7, Decisive: true}
	for range 7 {
		violation.Violations = append(violation.Violations, checker.Violation{Summary: "client 1 held order:1 while client 0 held it <&>"})
	}
	cell := func(scenario, lock string, seed int64, e results.Expectation, o results.Outcome) *results.Cell {
		return &results.Cell{Scenario: scenario, Lock: lock, RunSeed: seed, Expect: e, Outcome: o, Verdict: checker.Pass,
			Elapsed: 1234567 * time.Microsecond, Ran: time.Second, TimeScale: 1.25, History: scenario + "/" + lock + "/history.jsonl",
			Rerun: "lockchaos run --scenario " + scenario + " --lock " + lock}
	}
	regression := cell("slow-holder", "fenced", 41, results.Safe, results.Regression)
	regression.Verdict, regression.Violations, regression.Results = checker.Fail, 7, []checker.Result{violation}
	regression.Incidents = []checker.Incident{{Violations: 7, Cause: "a holder ran past its lease"}}
	harness := cell("baseline", "naive", 42, results.Safe, results.HarnessError)
	harness.Verdict, harness.Error = "", "redis-server would not start: \x01bad\x1b[0m log & <tail>"
	inconclusive := cell("gc-pause", "token", 42, results.Unsafe, results.Inconclusive)
	inconclusive.Evidence.Short = []string{"too few cycles (3 < 20)", "1 of 3 fault windows exercised"}
	skipped := func(seed int64) *results.Cell {
		c := cell("failover", "redlock", seed, results.NotApplicable, results.Skipped)
		c.Verdict, c.Error, c.Elapsed = "", "not applicable: redlock has no replica to promote", 0
		return c
	}
	s.Cells = []*results.Cell{
		cell("baseline", "token", 41, results.Safe, results.Met), cell("baseline", "token", 42, results.Safe, results.Met),
		regression, cell("slow-holder", "fenced", 42, results.Safe, results.Met),
		cell("gc-pause", "token", 41, results.Unsafe, results.Missed), inconclusive,
		harness, cell("baseline", "naive", 41, results.Safe, results.Unknown),
		cell("gc-pause", "fenced", 41, results.Safe, results.Interrupted),
		skipped(41), skipped(42),
	}
	s.Tally()
	return s
}

// The junit.xml a run writes validates against our schema,
// docs/schema/junit.xsd, with every outcome in it; and the schema is
// strict enough to reject what a reporter would misread.
func TestJUnitMatchesItsSchema(t *testing.T) {
	xmllint, schema := reportstest.XMLLint(t), reportstest.JUnitSchema(t)
	dir := t.TempDir()
	path, err := reports.WriteJUnit(dir, everyOutcome())
	if err != nil {
		t.Fatal(err)
	}
	if err := reportstest.Validate(xmllint, schema, path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	doc := string(b)
	for _, want := range []string{"<failure ", "<error ", "<skipped ", "[seed 42]", `type="inconclusive"`, `type="interrupted"`} {
		if !strings.Contains(doc, want) {
			t.Fatalf("the sample lacks %s, so the schema was not tried on it:\n%s", want, doc)
		}
	}
	for _, m := range []struct{ what, old, new string }{
		{"a case with both a failure and an error", "</failure>", `</failure><error message="m" type="t"></error>`},
		{"a non-numeric case time", `time="1.235"`, `time="1.2s"`},
		{"a negative suite time", `time="2.469"`, `time="-2.469"`},
		{"a timestamp that is no xs:dateTime", `timestamp="2026-11-30T07:04:05"`, `timestamp="2026-11-30 07:04:05"`},
		{"a non-numeric count", `skipped="2"`, `skipped="two"`},
		{"an unknown attribute", `<testsuite `, `<testsuite retries="1" `},
		{"an unknown element in a case", `</skipped>`, `</skipped><flaky message="m"></flaky>`},
		{"output inside a case", `</failure>`, `</failure><system-out>x</system-out>`},
		{"a case without classname", `classname="lockchaos.baseline" `, ``},
		{"a failure without a type", ` type="regression"`, ``},
		{"two suites with one id", `id="1"`, `id="0"`},
		{"properties after the cases", `<properties>`, `<testcase name="x" classname="y" time="0"></testcase><properties>`},
	} {
		if !strings.Contains(doc, m.old) {
			t.Fatalf("%s: the document has no %q to change", m.what, m.old)
		}
		bad := filepath.Join(dir, "mutated.xml")
		if err := os.WriteFile(bad, []byte(strings.Replace(doc, m.old, m.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		// Rejected by the schema, not for being malformed XML.
		if err := reportstest.Validate(xmllint, schema, bad); err == nil || !strings.Contains(err.Error(), "Schemas validity error") {
			t.Errorf("the schema accepts %s (%v)", m.what, err)
		}
	}
}
