package reports_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
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

// A summary whose cell has "outcome": null (or none, or a word lockchaos
// never writes) is refused with the file, the cell and the field, not
// read as a cell that ran with an empty outcome; one saved with a UTF-8
// byte order mark reads as without it.
func TestSummaryOutcomeNullIsRefusedAndABOMIsRead(t *testing.T) {
	dir := t.TempDir()
	path, err := reports.WriteJSON(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const first = `"outcome": "met"`
	for _, c := range []struct{ outcome, says string }{
		{`"outcome": null`, `cells[0] (baseline/token): "outcome" is null or missing (want one of met, regression,`},
		{`"outcome": ""`, `cells[0] (baseline/token): "outcome" is null or missing`},
		{`"outcome": "passed"`, `cells[0] (baseline/token): "outcome" is "passed", not an outcome (want one of met,`},
		{`"outcome": "met", "safety_outcome": "bogus"`, `cells[0] (baseline/token): "safety_outcome" is "bogus", not an outcome`},
	} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(strings.Replace(string(good), first, c.outcome, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := reports.ReadJSON(bad)
		if !errors.Is(err, reports.ErrMalformed) || !strings.Contains(err.Error(), bad+": "+c.says) {
			t.Errorf("%s: %v, want %q", c.outcome, err, c.says)
		}
	}
	for _, c := range []struct{ from, to, says string }{
		{"\n  \"cells\": [", "\n  \"cells\": [null, ", "cells[0] is null"},
		{"\n  \"cells\": [", "\n  \"replays\": [{\"scenario\": \"gc-pause\", \"lock\": \"token\", \"outcome\": null}],\n  \"cells\": [",
			`replays[0] (gc-pause/token): "outcome" is null or missing`},
	} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(strings.Replace(string(good), c.from, c.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := reports.ReadJSON(bad); !errors.Is(err, reports.ErrMalformed) || !strings.Contains(err.Error(), bad+": "+c.says) {
			t.Errorf("%s: %v, want %q", c.to, err, c.says)
		}
	}
	bom := filepath.Join(dir, "bom.json")
	if err := os.WriteFile(bom, append([]byte("\uFEFF"), good...), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := reports.ReadJSON(bom); err != nil || len(s.Cells) != 5 {
		t.Errorf("a summary with a byte order mark: %v", err)
	}
}

// TestSummaryWrittenCellByCellIsWhatMarshalIndentWrites: the summary is
// streamed a cell at a time (a sweep's is hundreds of megabytes), and must
// still be the very bytes json.MarshalIndent gives, whether cells is
// followed by aggregates or is the last field, and with no cells at all.
func TestSummaryWrittenCellByCellIsWhatMarshalIndentWrites(t *testing.T) {
	full := sample()
	full.Cells[2].Results = []checker.Result{{Property: "mutual-exclusion", Status: checker.Fail, ViolationCount: 1,
		Violations: []checker.Violation{{Property: "mutual-exclusion", Key: "k<&>", Clients: []int{1, 2}, Summary: "a \"quoted\" \u2028 line"}}}}
	noAggregates := sample()
	noAggregates.Aggregates = nil
	empty := sample()
	empty.Cells, empty.Aggregates = []*results.Cell{}, nil
	nilCells := sample()
	nilCells.Cells = nil
	for name, s := range map[string]*reports.Summary{"full": full, "cells last": noAggregates, "no cells": empty, "nil cells": nilCells} {
		path, err := reports.WriteJSON(t.TempDir(), s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := os.ReadFile(path)
		want, _ := json.MarshalIndent(s, "", "  ")
		want = append(want, '\n')
		if name == "nil cells" {
			// An empty array, not null: readers range over it.
			want = []byte(strings.Replace(string(want), `"cells": null`, `"cells": []`, 1))
		}
		if string(got) != string(want) {
			t.Errorf("%s: streamed summary differs from MarshalIndent's\ngot:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

func TestJUnitCountsAndEscapes(t *testing.T) {
	sum := sample()
	sum.Backend, sum.Version = "process", "v1.2.3"
	sum.Cells = append(sum.Cells, &results.Cell{Scenario: "gc-pause", Lock: "fenced", Expect: results.Safe, Outcome: results.Interrupted, Verdict: "pass"})
	sum.Tally()
	path, err := reports.WriteJUnit(t.TempDir(), sum)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc struct {
		Suites []struct {
			Name                             string  `xml:"name,attr"`
			Package                          string  `xml:"package,attr"`
			ID                               *int    `xml:"id,attr"`
			Hostname                         string  `xml:"hostname,attr"`
			SystemOut                        *string `xml:"system-out"`
			SystemErr                        *string `xml:"system-err"`
			Timestamp                        string  `xml:"timestamp,attr"`
			Tests, Failures, Errors, Skipped int     `xml:",attr"`
			Props                            []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string    `xml:"name,attr"`
				SystemOut string    `xml:"system-out"`
				Failure   *struct{} `xml:"failure"`
				Error     *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	// Attribute names are lower case in the file.
	text := strings.NewReplacer(`tests=`, `Tests=`, `failures=`, `Failures=`, `errors=`, `Errors=`, `skipped=`, `Skipped=`).Replace(string(b))
	if err := xml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	// A suite per scenario, in order of first appearance.
	var names []string
	total := struct{ tests, failures, errors, skipped int }{}
	for i, s := range doc.Suites {
		names = append(names, s.Name)
		// What the Ant JUnit schema requires of a suite in <testsuites>.
		if s.Package == "" || s.ID == nil || *s.ID != i || s.Hostname == "" || s.SystemOut == nil || s.SystemErr == nil {
			t.Errorf("suite %s lacks package, id %d, hostname, system-out or system-err: %+v", s.Name, i, s)
		}
		total.tests += s.Tests
		total.failures += s.Failures
		total.errors += s.Errors
		total.skipped += s.Skipped
		if s.Timestamp != "1970-01-01T00:00:00" {
			t.Errorf("suite %s timestamp %q", s.Name, s.Timestamp)
		}
		props := map[string]string{}
		for _, p := range s.Props {
			props[p.Name] = p.Value
		}
		if props["seed"] != "9" || props["backend"] != "process" || props["lockchaos.version"] != "v1.2.3" {
			t.Errorf("suite %s properties %v", s.Name, props)
		}
		for _, c := range s.Cases {
			if !strings.HasPrefix(c.Name, strings.TrimPrefix(s.Name, "lockchaos/")+"/") {
				t.Errorf("case %q is not named scenario/lock in suite %s", c.Name, s.Name)
			}
			if (c.Failure != nil || c.Error != nil) && c.SystemOut != "" {
				t.Errorf("case %s repeats its details in system-out", c.Name)
			}
			if c.Name == "gc-pause/fenced" && (c.Error == nil || c.Error.Type != "interrupted") {
				t.Errorf("an interrupted cell is not an error: %+v", c)
			}
		}
	}
	if strings.Join(names, ",") != "lockchaos/baseline,lockchaos/gc-pause,lockchaos/slow-holder,lockchaos/failover" {
		t.Fatalf("suites %v", names)
	}
	if total.tests != 6 || total.failures != 2 || total.errors != 2 || total.skipped != 1 {
		t.Fatalf("%+v\n%s", total, b)
	}
	if !strings.Contains(string(b), "&lt;would not&gt; start &amp; died") {
		t.Fatalf("error text not escaped:\n%s", b)
	}
	if !strings.Contains(string(b), "the harness missed a known bug") {
		t.Fatal("a miss is not explained")
	}
}

// TestSimulatedNeverPassesForReal: a merge with one simulated shard says
// simulated, keeps every replay, and JUnit files simulated cells under
// their own package with a SIMULATED line.
func TestSimulatedNeverPassesForReal(t *testing.T) {
	onReal := sample()
	sim := sample()
	sim.Backend, sim.Simulated = "sim", true
	sim.Replays = []results.Replay{{Scenario: "gc-pause", Lock: "token", RunSeed: 9, Backend: "process", Reproduced: true}}
	for _, c := range sim.Cells {
		c.Backend, c.Simulated = "sim", true
	}
	m := reports.Merge(t.TempDir(), []*reports.Summary{onReal, sim}, []string{"a", "b"})
	if !m.Simulated || len(m.Replays) != 1 {
		t.Errorf("merged: simulated %v, %d replays; want true, 1", m.Simulated, len(m.Replays))
	}
	dir := t.TempDir()
	path, err := reports.WriteJUnit(dir, sim)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`package="lockchaos.sim"`, `classname="lockchaos.sim.gc-pause"`, "(sim)", "SIMULATED on backend sim"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("junit.xml lacks %q", want)
		}
	}
}

// No report of a run interrupted before calibration finished says it ran
// at time scale 1.00: each says the scale was not measured. (JUnit has
// nothing to say: no cell ran.)
func TestUnmeasuredTimeScaleIsSaidSo(t *testing.T) {
	dir := t.TempDir()
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Seed: 9, Repeat: 1, Backend: "process",
		Started: time.Unix(0, 0).UTC(), Calibration: reports.CalibrationInterrupted, Interrupted: true}
	s.Tally()
	html, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(html.Index)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "1.00") || !strings.Contains(string(b), "not measured") {
		t.Errorf("index.html claims a time scale:\n%s", b)
	}
	if md := reports.Markdown(s); strings.Contains(md, "time scale 1.00") || !strings.Contains(md, "time scale not measured") {
		t.Errorf("markdown claims a time scale:\n%s", md)
	}
}
