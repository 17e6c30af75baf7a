package results_test

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// TestExpectYAMLForms reads the three forms: one word (safety, liveness
// live), a mapping of groups, and the properties allowed to fail (which
// imply safety unsafe).
func TestExpectYAMLForms(t *testing.T) {
	var m map[string]results.Expect
	src := "token: safe\nno-ttl: {safety: safe, liveness: stuck}\nnaive: {unsafe: [mutual-exclusion, foreign-release]}\n" +
		"redlock: {safety: either, liveness: either}\nfenced: {unsafe: fence-order, liveness: stuck}\n"
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"token":   "safe",
		"no-ttl":  "safety safe, liveness stuck",
		"naive":   "safety unsafe [mutual-exclusion, foreign-release], liveness live",
		"redlock": "safety either, liveness either",
		"fenced":  "safety unsafe [fence-order], liveness stuck",
	}
	for lock, w := range want {
		if got := m[lock].String(); got != w {
			t.Errorf("%s: %q, want %q", lock, got, w)
		}
	}
	if m["token"].Liveness != results.Live || m["naive"].Safety != results.Unsafe {
		t.Errorf("defaults not filled: %+v %+v", m["token"], m["naive"])
	}
}

// TestExpectYAMLErrors: each mistake is an error at its line that says
// what would do.
func TestExpectYAMLErrors(t *testing.T) {
	cases := []struct {
		src  string
		line int
		want string
	}{
		{"x: stuck", 1, "liveness expectations go in {liveness: stuck}"},
		{"x: live", 1, "liveness expectations go in {liveness: live}"},
		{"x: sfe", 1, `"sfe" is not one of safe, unsafe, either, n/a (did you mean safe?)`},
		{"x:\n  safety: safe\n  livenes: stuck", 3, "unknown field livenes in an expectation (did you mean liveness?); valid: safety, liveness, unsafe"},
		{"x:\n  safety: safe\n  liveness: stuk", 3, `liveness "stuk" is not one of live, stuck, either (did you mean stuck?)`},
		{"x: {safety: safe, liveness: unsafe}", 1, "safe and unsafe speak of safety"},
		{"x: {liveness: stuck}", 1, "no safety expectation: say safety: safe, unsafe, either or n/a"},
		{"x:\n  unsafe:\n    - mutual-exclusion\n    - foreign-releas", 4, `"foreign-releas" is not a safety property (did you mean foreign-release?)`},
		{"x: {unsafe: [deadlock-free]}", 1, "deadlock-free is a liveness property: say liveness: stuck instead"},
		{"x: {safety: safe, unsafe: [mutual-exclusion]}", 1, "which means safety unsafe, not safe"},
		{"x: {unsafe: []}", 1, "names no property"},
		{"x: {safety: n/a, liveness: stuck}", 1, "an n/a cell does not run"},
		{"x: [safe]", 1, "want one word (safe, unsafe, either, n/a) or a mapping"},
	}
	for _, c := range cases {
		var m map[string]results.Expect
		err := yaml.Unmarshal([]byte(c.src), &m)
		var le *results.LineError
		if !errors.As(err, &le) || !errors.Is(err, results.ErrExpectation) {
			t.Errorf("%q: %v, want a LineError", c.src, err)
			continue
		}
		if le.Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got line %d: %v\nwant line %d: ...%s", c.src, le.Line, err, c.line, c.want)
		}
	}
}

// TestExpectValidateInGo: the same rules hold for an Expect built in Go,
// and a one-word Expectation is a whole expectation (liveness live).
func TestExpectValidateInGo(t *testing.T) {
	if err := (results.Expect{Safety: results.Stuck}).Validate(); err == nil || !strings.Contains(err.Error(), "{liveness: stuck}") {
		t.Errorf("safety stuck: %v", err)
	}
	if err := (results.Expect{Safety: results.Unsafe, MayFail: []checker.Property{"mutual-exclusoin"}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "did you mean mutual-exclusion?") {
		t.Errorf("a misspelt property: %v", err)
	}
	var e results.Expecter = results.Unsafe
	if got := e.Expected(); got.Safety != results.Unsafe || got.Liveness != results.Live || !got.Simple() || got.Validate() != nil {
		t.Errorf("Unsafe.Expected() = %+v", got)
	}
	e = results.Expect{Safety: results.Safe, Liveness: results.Stuck}
	if got := e.Expected(); got.Simple() || got.String() != "safety safe, liveness stuck" {
		t.Errorf("%+v", got)
	}
}

// TestSummaryShowsGroups: a cell that expects only what the one word says
// and judged nothing of liveness reads as before; any other shows each
// group with its expectation, and why.
func TestSummaryShowsGroups(t *testing.T) {
	plain := &results.Cell{Scenario: "gc-pause", Lock: "token", Verdict: fail, SafetyVerdict: fail}
	plain.SetExpect(results.Unsafe.Expected())
	plain.Decide()
	if got, want := plain.Summary(), "gc-pause/token: fail (expected unsafe): met"; got != want {
		t.Errorf("plain:\n got %s\nwant %s", got, want)
	}
	stuck := &results.Cell{Scenario: "pod-crash", Lock: "no-ttl", Verdict: fail, SafetyVerdict: pass, LivenessVerdict: fail,
		Evidence: short}
	stuck.SetExpect(results.Expect{Safety: results.Safe, Liveness: results.Stuck})
	stuck.Decide()
	want := "pod-crash/no-ttl: safety pass (safe), liveness fail (stuck): met: safety not judged: too few cycles: 15 completed"
	if got := stuck.Summary(); got != want {
		t.Errorf("stuck:\n got %s\nwant %s", got, want)
	}
	live := &results.Cell{Scenario: "gc-pause", Lock: "naive", Verdict: fail, SafetyVerdict: fail, Evidence: enough,
		FailedProperties: []checker.Property{checker.MutualExclusion, checker.ForeignRelease}}
	live.SetExpect(results.Expect{MayFail: []checker.Property{checker.MutualExclusion}})
	live.Decide()
	want = "gc-pause/naive: safety fail (unsafe [mutual-exclusion]), liveness - (live, not judged): regression: " +
		"foreign-release failed, not among the properties expected to fail [mutual-exclusion]"
	if got := live.Summary(); got != want {
		t.Errorf("may fail:\n got %s\nwant %s", got, want)
	}
	if live.SafetyOutcome != results.Regression || live.LivenessOutcome != "" {
		t.Errorf("group outcomes %q/%q", live.SafetyOutcome, live.LivenessOutcome)
	}
}

// TestAggregatesCountGroups counts each group's failures and met runs, so
// a table can say "safety 3/3 met, liveness 3/3 stuck".
func TestAggregatesCountGroups(t *testing.T) {
	var cells []*results.Cell
	for i := range 3 {
		c := &results.Cell{Scenario: "pod-crash", Lock: "no-ttl", Verdict: fail, SafetyVerdict: pass, LivenessVerdict: fail,
			Evidence: enough, RunSeed: int64(i)}
		c.SetExpect(results.Expect{Safety: results.Safe, Liveness: results.Stuck})
		c.Decide()
		cells = append(cells, c)
	}
	broken := &results.Cell{Scenario: "pod-crash", Lock: "no-ttl", Outcome: results.HarnessError, LivenessVerdict: fail}
	a := results.Aggregates(append(cells, broken))[0]
	if a.Runs != 4 || a.Met != 3 || a.SafetyMet != 3 || a.SafetyFailed != 0 || a.LivenessFailed != 3 || a.LivenessMet != 3 ||
		a.LivenessJudged != 3 || a.Liveness != results.Stuck || a.Expected().String() != "safety safe, liveness stuck" {
		t.Errorf("%+v", a)
	}
}
