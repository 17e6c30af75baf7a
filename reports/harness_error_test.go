package reports_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

const driverBroke = "workload: client 0: lockimpl: lock broken: driver rb (pod 0) exited before its hello line (exit status 3)"

// brokenRun is a run with a met cell and a cell whose driver broke. The
// broken cell left a history that checks as a pass, and carries the
// verdict "pass" as summaries before this rule did (the runner now leaves
// it empty): no output may show it as a pass.
func brokenRun(t *testing.T, dir string) *reports.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "checker", "testdata", "pass.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cut-short.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Backend: "process", Seed: 3, Repeat: 1,
		Started: time.Unix(0, 0).UTC(), Command: "lockchaos run --lock-driver 'rb=ruby bad.rb' --lock rb,token", Cells: []*results.Cell{
			{Scenario: "baseline", Lock: "token", Expect: results.Safe, Verdict: checker.Pass, Outcome: results.Met,
				History: "cut-short.jsonl", Evidence: checker.Evidence{Enough: true}},
			{Scenario: "baseline", Lock: "rb", Expect: results.Either, Verdict: checker.Pass, Outcome: results.HarnessError,
				History: "cut-short.jsonl", Error: driverBroke, Rerun: "lockchaos run --scenario baseline --lock rb"},
		}}
	s.Tally()
	return s
}

func TestHarnessErrorIsNoPassInJUnit(t *testing.T) {
	dir := t.TempDir()
	path, err := reports.WriteJUnit(dir, brokenRun(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	_, tc, ok := strings.Cut(string(b), `name="baseline/rb"`)
	if !ok {
		t.Fatalf("no test case baseline/rb:\n%s", b)
	}
	tc, _, _ = strings.Cut(tc, "</testcase>")
	if !strings.Contains(tc, `<error message="`) || !strings.Contains(tc, `type="harness"`) {
		t.Errorf("the broken cell is not a harness error:\n%s", tc)
	}
	if strings.Contains(tc, "pass") || !strings.Contains(tc, "baseline/rb: - (expected either): error") {
		t.Errorf("the broken cell's details show a verdict:\n%s", tc)
	}
}

var errorCellRE = regexp.MustCompile(`(?s)<td class="cell error" data-outcome="error".*?</td>`)

func TestHarnessErrorIsNoPassInHTML(t *testing.T) {
	dir := t.TempDir()
	res, err := reports.WriteHTML(dir, brokenRun(t, dir), reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(res.Index)
	td := errorCellRE.FindString(string(index))
	if !strings.Contains(td, `<span class="v">-</span>`) || strings.Contains(td, "pass") {
		t.Errorf("the matrix shows the broken cell as %q, want verdict -", td)
	}
	if !strings.Contains(string(index), `<span class="v">pass</span>`) {
		t.Error("the met cell lost its pass: the test reads the wrong place")
	}
	var page string
	for _, p := range res.Pages {
		if strings.Contains(p, "rb") {
			b, _ := os.ReadFile(p)
			page = string(b)
		}
	}
	if !strings.Contains(page, `id="verdict">-</td>`) {
		t.Errorf("the broken cell's page shows a verdict:\n%s", page)
	}
	if !strings.Contains(page, "What the checkers say of what the broken cell left (no verdict)") ||
		strings.Contains(page, ">pass<") {
		t.Errorf("the broken cell's page shows a property passing:\n%s", page)
	}
}

// summary.json: the runner writes no verdict for a harness error, the
// schema refuses one, and reading a summary of an earlier version drops
// the one it carried.
func TestHarnessErrorIsNoPassInSummaryJSON(t *testing.T) {
	schema := summarySchema(t)
	dir := t.TempDir()
	s := brokenRun(t, dir)
	legacy, err := reports.WriteJSON(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(legacy)
	if err := validateJSON(schema, b); err == nil || !strings.Contains(err.Error(), "verdict") {
		t.Errorf("the schema takes a harness error with verdict pass (err %v)", err)
	}
	read, err := reports.ReadJSON(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if v := read.Cells[1].Verdict; v != "" {
		t.Errorf("read back, the harness error has verdict %q", v)
	}
	path, err := reports.WriteJSON(t.TempDir(), read)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if err := validateJSON(schema, b); err != nil {
		t.Errorf("summary.json with a harness error does not match its schema: %v", err)
	}
	if strings.Count(string(b), `"verdict": "pass"`) != 1 {
		t.Errorf("want one pass (the met cell's):\n%s", b)
	}
}

func summarySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f := filepath.Join("..", "docs", "schema", "summary.v2.json")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	const id = "https://github.com/lockchaos/lockchaos/docs/schema/summary.v2.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateJSON(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}
