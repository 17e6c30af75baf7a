package scenarios_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/scenarios"
)

// TestYAMLRefusesNaNAndInfinities: a number field written as NaN or an
// infinity is an error at its line; NaN used to pass the floor's range
// check (no comparison with NaN holds) and run a cell with no floor.
func TestYAMLRefusesNaNAndInfinities(t *testing.T) {
	for _, v := range []string{".nan", ".NaN", ".inf", "-.inf", "+.Inf"} {
		body := "scenarios:\n  - name: x\n    expect: {token: safe}\n    max_indefinite: " + v + "\n"
		want := "f.yaml:4: scenarios: invalid scenario: max_indefinite " + v + " in scenario x: want a finite number"
		if _, err := scenarios.Load([]byte(body), "f.yaml"); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", v, err, want)
		}
	}
	// Too large for a float64: not a number at all.
	_, err := scenarios.Load([]byte("scenarios:\n  - name: x\n    expect: {token: safe}\n    max_indefinite: 1e999\n"), "f.yaml")
	if want := "f.yaml:4: scenarios: invalid scenario: want a number, got `1e999`"; err == nil || err.Error() != want {
		t.Errorf("1e999:\n got %v\nwant %s", err, want)
	}
	// A Go caller's scenario is checked the same way.
	nan := 0.0
	nan /= nan
	sc := scenarios.Scenario{Name: "x", Expect: map[string]scenarios.Expect{"token": scenarios.Safe.Expected()},
		Floor: scenarios.FloorOverride{MaxIndefinite: &nan}}
	if err := sc.Validate(); !errors.Is(err, scenarios.ErrInvalid) || !strings.Contains(err.Error(), "max_indefinite NaN") {
		t.Errorf("Validate of a NaN floor: %v", err)
	}
	// A string field may hold the same words.
	if _, err := scenarios.Load([]byte("scenarios:\n  - name: x\n    description: .nan\n    expect: {token: safe}\n"), "f.yaml"); err != nil {
		t.Errorf("description .nan: %v", err)
	}
}

// TestYAMLSecondDocumentIsRefused: a file is one YAML document; a second
// one is an error at its line, not dropped. A trailing "---" or "..." with
// nothing after it holds nothing to drop.
func TestYAMLSecondDocumentIsRefused(t *testing.T) {
	one := "scenarios:\n  - name: x\n    expect: {token: safe}\n"
	_, err := scenarios.Load([]byte(one+"---\nscenarios:\n  - name: y\n    expect: {token: safe}\n"), "f.yaml")
	if want := `f.yaml:4: scenarios: invalid scenario: a second YAML document (after "---")`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("second document:\n got %v\nwant %s...", err, want)
	}
	_, err = scenarios.Load([]byte(one+"---\nscenarios: [\n"), "f.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:") {
		t.Errorf("a broken second document: %v", err)
	}
	for _, body := range []string{one + "---\n", one + "...\n", "---\n" + one, one + "---\n# nothing more\n"} {
		if _, err := scenarios.Load([]byte(body), "f.yaml"); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestYAMLByteOrderMarkIsRead: a file saved with a UTF-8 byte order mark
// (as some Windows editors do) reads as without it, lines included.
func TestYAMLByteOrderMarkIsRead(t *testing.T) {
	bom := "\ufeff"
	f, err := scenarios.Load([]byte(bom+"scenarios:\n  - name: x\n    expect: {token: safe}\n"), "f.yaml")
	if err != nil || len(f.Scenarios) != 1 || f.Scenarios[0].Name != "x" {
		t.Fatalf("with a BOM: %v", err)
	}
	_, err = scenarios.Load([]byte(bom+"scenarios:\n  - name: x\n    tll: 1s\n    expect: {token: safe}\n"), "f.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:3: scenarios: unknown field tll") {
		t.Fatalf("an error after a BOM: %v", err)
	}
}

// TestYAMLSameScenarioInTwoFilesIsAnError: two files of one run defining
// one scenario is an error at its line in the second, naming the first;
// so is one file given twice. Overriding a built-in is not.
func TestYAMLSameScenarioInTwoFilesIsAnError(t *testing.T) {
	load := func(body, name string) *scenarios.File {
		f, err := scenarios.Load([]byte(body), name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := load("scenarios:\n  - name: baseline\n    expect: {token: safe}\n  - name: mine\n    expect: {token: safe}\n", "a.yaml")
	b := load("scenarios:\n  - name: other\n    expect: {token: safe}\n\n  - name: mine\n    expect: {token: unsafe}\n", "b.yaml")
	if err := a.Clash(nil); err != nil {
		t.Fatalf("a file overriding a built-in: %v", err)
	}
	want := `b.yaml:5: scenarios: invalid scenario "mine": defined again (first in a.yaml:4); a scenario comes from one file`
	if err := b.Clash([]*scenarios.File{a}); err == nil || err.Error() != want {
		t.Errorf("same scenario in two files:\n got %v\nwant %s", err, want)
	}
	again := load("scenarios:\n  - name: baseline\n    expect: {token: safe}\n  - name: mine\n    expect: {token: safe}\n", "a.yaml")
	if err := again.Clash([]*scenarios.File{a}); err == nil || err.Error() != "a.yaml:1: scenarios: invalid scenario: the file is given twice" {
		t.Errorf("one file twice: %v", err)
	}
}

// TestYAMLGapsBelowTheFloorAreAnError: a gap between faults below 1 ms
// is an error at the gap's line (a 1 ns gap fired faults as fast as the
// machine went: 385,416 windows in one cell).
func TestYAMLGapsBelowTheFloorAreAnError(t *testing.T) {
	sc := "scenarios:\n  - name: x\n    expect: {token: safe}\n    faults: [{kind: client-pause, pause: 1ns}]\n"
	for body, want := range map[string]string{
		sc + "    gap_min: 1ns\n    gap_max: 1ns\n":   `f.yaml:5: scenarios: invalid scenario "x": gap_min 1ns is below the shortest gap between faults, 1ms`,
		sc + "    gap_min: 1ms\n    gap_max: 999us\n": `f.yaml:6: scenarios: invalid scenario "x": gap_max 999µs is below the shortest gap between faults, 1ms`,
	} {
		if _, err := scenarios.Load([]byte(body), "f.yaml"); err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", body, err, want)
		}
	}
	if _, err := scenarios.Load([]byte(sc+"    gap_min: 1ms\n    gap_max: 1ms\n"), "f.yaml"); err != nil {
		t.Errorf("gaps of 1ms: %v", err)
	}
	long := "scenarios:\n  - name: x\n    expect: {token: safe}\n    duration: 721h\n"
	if _, err := scenarios.Load([]byte(long), "f.yaml"); err == nil || !strings.Contains(err.Error(), "more than the longest cell, 720h0m0s") {
		t.Errorf("a 721h cell: %v", err)
	}
	// A time stretched by the time scale (up to 600x) must not overflow.
	for field, says := range map[string]string{
		"    ttl: 2000000h\n": "ttl 2000000h0m0s is longer than the longest cell, 720h0m0s",
		"    faults: [{kind: clock-jump, jump: -2000000h}]\n": "fault 1's jump -2000000h0m0s is longer than the longest cell",
	} {
		body := "scenarios:\n  - name: x\n    expect: {token: safe}\n" + field
		if _, err := scenarios.Load([]byte(body), "f.yaml"); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v; want an error saying %q", field, err, says)
		}
	}
}
