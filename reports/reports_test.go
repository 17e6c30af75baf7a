package reports_test

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

func sample() *reports.Summary {
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Seed: 9, Repeat: 1, Started: time.Unix(0, 0).UTC(), Elapsed: time.Second,
		Cells: []*results.Cell{
			{Scenario: "baseline", Lock: "token", Expect: results.Safe, Verdict: "pass", Outcome: results.Met},
			{Scenario: "gc-pause", Lock: "token", Expect: results.Unsafe, Verdict: "pass", Outcome: results.Missed, Rerun: "lockchaos run --scenario gc-pause --lock token --seed 9"},
			{Scenario: "slow-holder", Lock: "fenced", Expect: results.Safe, Verdict: "fail", Outcome: results.Regression, Violations: 2},
			{Scenario: "failover", Lock: "redlock", Expect: results.NotApplicable, Outcome: results.Skipped, Error: "not applicable"},
			{Scenario: "baseline", Lock: "naive", Expect: results.Safe, Outcome: results.HarnessError, Error: "redis-server <would not> start & died"},
		}}
	s.Tally()
	return s
}

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path, err := reports.WriteJSON(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	got, err := reports.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seed != 9 || len(got.Cells) != 5 || got.Totals["met"] != 1 || got.Totals["missed"] != 1 || len(got.Aggregates) != 5 {
		t.Fatalf("%+v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"format": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.ReadJSON(filepath.Join(dir, "bad.json")); !errors.Is(err, reports.ErrMalformed) {
		t.Fatalf("format 99: %v", err)
	}
}

func TestJUnitCountsAndEscapes(t *testing.T) {
	path, err := reports.WriteJUnit(t.TempDir(), sample())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc struct {
		Suites []struct {
			Tests, Failures, Errors, Skipped int `xml:",attr"`
		} `xml:"testsuite"`
	}
	// Attribute names are lower case in the file.
	text := strings.NewReplacer(`tests=`, `Tests=`, `failures=`, `Failures=`, `errors=`, `Errors=`, `skipped=`, `Skipped=`).Replace(string(b))
	if err := xml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	s := doc.Suites[0]
	if s.Tests != 5 || s.Failures != 2 || s.Errors != 1 || s.Skipped != 1 {
		t.Fatalf("%+v\n%s", s, b)
	}
	if !strings.Contains(string(b), "&lt;would not&gt; start &amp; died") {
		t.Fatalf("error text not escaped:\n%s", b)
	}
	if !strings.Contains(string(b), "the harness missed a known bug") {
		t.Fatal("a miss is not explained")
	}
}
