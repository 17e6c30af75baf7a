package scenarios_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// TestYAMLExpectForms: a scenario's expect takes one word (safety; the
// cell expected live), a mapping of both groups, or the only properties
// allowed to fail, which imply safety unsafe; a lock's expect the same.
func TestYAMLExpectForms(t *testing.T) {
	body := `scenarios:
  - name: i25-forms
    expect:
      token: safe
      naive: {unsafe: [mutual-exclusion, foreign-release]}
      fenced:
        safety: safe
        liveness: stuck
locks:
  - name: i25-forms-lock
    command: "true"
    expect: {baseline: safe, gc-pause: {safety: unsafe, liveness: either}}
`
	f, err := scenarios.Load([]byte(body), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp := f.Scenarios[0].Expect
	if e := exp["token"]; e.Safety != scenarios.Safe || e.Liveness != scenarios.Live || len(e.MayFail) != 0 {
		t.Errorf("token: safe read as %+v", e)
	}
	if e := exp["naive"]; e.Safety != scenarios.Unsafe || e.Liveness != scenarios.Live ||
		len(e.MayFail) != 2 || e.MayFail[1] != checker.ForeignRelease {
		t.Errorf("naive: {unsafe: [...]} read as %+v", e)
	}
	if e := exp["fenced"]; e.Safety != scenarios.Safe || e.Liveness != scenarios.Stuck {
		t.Errorf("fenced: {safety: safe, liveness: stuck} read as %+v", e)
	}
	if err := f.Register(); err != nil {
		t.Fatal(err)
	}
	list, err := f.Apply(scenarios.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	cells, err := scenarios.Select(list, []string{"baseline", "gc-pause"}, []string{"i25-forms-lock"})
	if err != nil || len(cells) != 2 {
		t.Fatalf("%v: %v", cells, err)
	}
	if got := cells[1].Expect.String(); got != "safety unsafe, liveness either" {
		t.Errorf("the lock's gc-pause expectation: %s", got)
	}
}

// TestYAMLExpectErrorsHaveTheirLine: every mistake in an expectation is an
// error at its line, naming the cell, with what was most likely meant.
func TestYAMLExpectErrorsHaveTheirLine(t *testing.T) {
	sc := func(exp string) string { return "scenarios:\n  - name: x\n    expect:\n" + exp }
	for body, want := range map[string]string{
		sc("      token: safe\n      no-ttl: stuck\n"): `f.yaml:5: scenarios: invalid scenario: expect no-ttl in scenario x: invalid expectation: ` +
			`"stuck" is a liveness expectation, and one word speaks of safety: liveness expectations go in {liveness: stuck}`,
		sc("      token:\n        safety: safe\n        livenes: stuck\n"): "f.yaml:6: scenarios: unknown field livenes in expect token " +
			"in scenario x (did you mean liveness?); valid: safety, liveness, unsafe",
		sc("      token: {safety: safe, liveness: stuk}\n"): `f.yaml:4: scenarios: invalid scenario: expect token in scenario x: ` +
			`invalid expectation: liveness "stuk" is not one of live, stuck, either (did you mean stuck?)`,
		sc("      naive:\n        unsafe: [mutual-exclusion, foreign-relase]\n"): `f.yaml:5: scenarios: invalid scenario: expect naive ` +
			`in scenario x: invalid expectation: unsafe: "foreign-relase" is not a safety property (did you mean foreign-release?)`,
		sc("      token: maybe\n"): `f.yaml:4: scenarios: invalid scenario: expect token in scenario x: invalid expectation: ` +
			`safety "maybe" is not one of safe, unsafe, either, n/a`,
		"locks:\n  - name: rb\n    command: \"true\"\n    expect:\n      baseline: {safety: safe, liveness: unsafe}\n": "f.yaml:5: " +
			`scenarios: invalid scenario: expect baseline of lock rb: invalid expectation: liveness "unsafe": safe and unsafe speak of safety`,
		"locks:\n  - name: rb\n    command: \"true\"\n    expect:\n      baseline: {safeti: safe}\n": "f.yaml:5: scenarios: unknown field " +
			"safeti in expect baseline of lock rb (did you mean safety?)",
	} {
		_, err := scenarios.Load([]byte(body), "f.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s...", body, err, want)
		}
		if err != nil && !errors.Is(err, scenarios.ErrInvalid) && !errors.Is(err, scenarios.ErrUnknownField) {
			t.Errorf("%q: %v wraps neither ErrInvalid nor ErrUnknownField", body, err)
		}
	}
}

// TestCatalogLivenessFollowsTheLocksDesign: every built-in cell is
// expected live but where a lock's design leaves a stopped holder's key
// taken: no-ttl (no expiry) and long-ttl (ten TTLs) wherever a holder
// crashes, hangs or is cut off, and token-watchdog when its worker hangs
// while its process (and its renewals) lives on; etcd's locks with a
// member silently cut from the pods are either (measured). No cell limits which
// safety properties may fail.
func TestCatalogLivenessFollowsTheLocksDesign(t *testing.T) {
	stops := map[string]bool{"client-partition": true, "pod-crash": true, "pod-crash-restart": true, "abandoned-lease": true}
	for _, s := range scenarios.Catalog() {
		for lock, e := range s.Expect {
			want := scenarios.Live
			if stops[s.Name] && (lock == "no-ttl" || lock == "long-ttl") || s.Name == "abandoned-lease" && lock == "token-watchdog" {
				want = scenarios.Stuck
			}
			// A PostgreSQL lock with the server's defaults: nothing ends a
			// hung or silently cut-off holder's session.
			if spec, err := lockimpl.Lookup(lock); err == nil && !spec.Service.IsRedis() && spec.Settings == "" &&
				(s.Name == "abandoned-lease" || s.Name == "client-partition-long") {
				want = scenarios.Stuck
			}
			// A member silently cut from the pods (etcd's Go client finds it
			// dead only by gRPC's keepalive, 10 s at least) and the leader's
			// death under load: measured, so either (catalog_etcd.go).
			if s.Name == "etcd-member-cut" || s.Name == "etcd-leader-kill" {
				want = scenarios.Either
			}
			if e.Liveness != want || len(e.MayFail) != 0 || !e.Safety.Valid() {
				t.Errorf("%s/%s: %+v, want safety in one word and liveness %s", s.Name, lock, e, want)
			}
		}
	}
}

// TestPlanRefusesAnInvalidExpectation: an expectation built in Go that
// cannot be held to makes the plan an error, never a cell gated on
// nothing.
func TestPlanRefusesAnInvalidExpectation(t *testing.T) {
	sc, _ := scenarios.Get("baseline")
	p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lock("token"), Expect: scenarios.Expect{Safety: scenarios.Stuck}},
		scenarios.Options{Backend: process.Backend{}})
	if !errors.Is(p.Err, scenarios.ErrInvalid) || !strings.Contains(p.Err.Error(), "{liveness: stuck}") {
		t.Errorf("plan error %v", p.Err)
	}
	p = scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lock("token"), Expect: scenarios.Expect{Safety: scenarios.Safe}},
		scenarios.Options{Backend: process.Backend{}})
	if p.Err != nil || p.Expect.Liveness != scenarios.Live {
		t.Errorf("safe: %v, liveness %q (want live by default)", p.Err, p.Expect.Liveness)
	}
}

// TestDocsYAMLLoads: every scenarios file the README and docs/ show (a
// ```yaml block of scenarios: or locks:) loads as it is written,
// expectations in every form included.
func TestDocsYAMLLoads(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range append([]string{filepath.Join("..", "README.md")}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks := regexp.MustCompile("(?s)```yaml\n((?:scenarios|locks):.*?)```").FindAllStringSubmatch(string(b), -1)
		for i, m := range blocks {
			n++
			if _, err := scenarios.Load([]byte(m[1]), fmt.Sprintf("%s block %d", doc, i+1)); err != nil {
				t.Errorf("%v\n%s", err, m[1])
			}
		}
	}
	if n < 3 {
		t.Fatalf("the docs show %d scenarios files; want the README's, a scenario file's and a driver lock's", n)
	}
}
