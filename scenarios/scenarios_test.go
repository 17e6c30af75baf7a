package scenarios_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

func TestCatalogIsValidAndMatchesTheDesign(t *testing.T) {
	cat := scenarios.Catalog()
	for _, s := range cat {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	// DESIGN section 5, cell by cell.
	want := map[string]string{ // scenario: naive token token-watchdog redlock fenced
		"baseline":         "safe safe safe safe safe",
		"slow-holder":      "unsafe unsafe safe unsafe safe",
		"gc-pause":         "unsafe unsafe unsafe unsafe safe",
		"slow-reply":       "unsafe unsafe unsafe safe safe",
		"client-partition": "either either unsafe either safe",
		"failover":         "unsafe unsafe unsafe n/a either",
	}
	locks := []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameTokenWatchdog, lockimpl.NameRedlock, lockimpl.NameFenced}
	for name, row := range want {
		s, err := scenarios.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range strings.Fields(row) {
			// One word: the safety DESIGN names, with liveness live.
			if got := s.Expect[locks[i]].String(); got != e {
				t.Errorf("%s/%s: expectation %q, DESIGN says %q", name, locks[i], got, e)
			}
		}
	}
	for name, e := range map[string]scenarios.Expectation{"node-restart": scenarios.Unsafe, "node-restart-delayed": scenarios.Safe, "minority-partition": scenarios.Safe} {
		s, _ := scenarios.Get(name)
		// The PostgreSQL locks restart their one server in these rows too
		// (catalog_postgres.go); of the Redis locks, only Redlock runs.
		for l := range s.Expect {
			if spec, err := lockimpl.Lookup(l); err == nil && !spec.Service.IsRedis() {
				delete(s.Expect, l)
			}
		}
		if len(s.Expect) != 1 || s.Expect[lockimpl.NameRedlock].String() != string(e) {
			t.Errorf("%s: %v, want redlock %s only", name, s.Expect, e)
		}
	}
	if b, _ := scenarios.Get("baseline"); b.Expect[lockimpl.NameMutex].String() != "unsafe" {
		t.Error("mutex must be unsafe in baseline")
	}
}

func TestUnknownNamesListTheValidOnes(t *testing.T) {
	_, err := scenarios.Get("gc-pouse")
	if !errors.Is(err, scenarios.ErrUnknownScenario) || !strings.Contains(err.Error(), "gc-pause") {
		t.Fatalf("Get: %v", err)
	}
	_, err = scenarios.Select(scenarios.Catalog(), nil, []string{"spinlock"})
	if !errors.Is(err, lockimpl.ErrUnknownLock) || !strings.Contains(err.Error(), "token-watchdog") {
		t.Fatalf("Select: %v", err)
	}
	_, err = scenarios.Select(scenarios.Catalog(), []string{"node-restart"}, []string{"token"})
	if !errors.Is(err, scenarios.ErrInvalid) {
		t.Fatalf("empty selection: %v", err)
	}
}

func TestSelectAndShard(t *testing.T) {
	all, err := scenarios.Select(scenarios.Catalog(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 1; i <= 4; i++ {
		part, err := scenarios.Shard(all, i, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range part {
			seen[c.Name()]++
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("shards cover %d of %d cells", len(seen), len(all))
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s in %d shards", name, n)
		}
	}
	if _, err := scenarios.Shard(all, 5, 4); err == nil {
		t.Fatal("shard 5/4 accepted")
	}
	mutexEverywhere, _ := scenarios.Select(scenarios.Catalog(), []string{"gc-pause"}, []string{"mutex"})
	if len(mutexEverywhere) != 1 || mutexEverywhere[0].Expect.String() != "unsafe" {
		t.Fatalf("--lock mutex in gc-pause: %+v", mutexEverywhere)
	}
}

func TestYAMLScenarios(t *testing.T) {
	good := `scenarios:
  - name: long-pause
    description: a holder frozen for 3x the TTL
    ttl: 200ms
    duration: 1s
    faults:
      - kind: client-pause
        pause: 600ms
    expect:
      token: unsafe
      fenced: safe
  - name: baseline
    expect: {token: safe}
`
	file, err := scenarios.Load([]byte(good), "extra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	list := file.Scenarios
	if list[0].TTL != 200*time.Millisecond || list[0].Faults[0].Params != (faults.ClientPauseParams{Pause: 600 * time.Millisecond}) {
		t.Fatalf("parsed %+v", list[0])
	}
	merged := scenarios.Merge(scenarios.Catalog(), list)
	if len(merged) != len(scenarios.Catalog())+1 {
		t.Fatalf("merge: %d scenarios", len(merged))
	}
	for _, s := range merged {
		if s.Name == "baseline" && len(s.Expect) != 1 {
			t.Fatal("a YAML scenario did not replace the built-in of the same name")
		}
	}
	bad := map[string]string{
		"unknown field":    "scenarios:\n  - name: x\n    colour: red\n    expect: {token: safe}\n",
		"bad duration":     "scenarios:\n  - name: x\n    ttl: soon\n    expect: {token: safe}\n",
		"unknown lock":     "scenarios:\n  - name: x\n    expect: {token: safe}\n  - name: y\n    expect: {spinlock: safe}\n",
		"bad expectation":  "scenarios:\n  - name: x\n    expect: {token: maybe}\n",
		"unknown fault":    "scenarios:\n  - name: x\n    faults: [{kind: meteor}]\n    expect: {token: safe}\n",
		"not yaml":         "scenarios: [\n",
		"duplicate":        "scenarios:\n  - name: x\n    expect: {token: safe}\n  - name: x\n    expect: {token: safe}\n",
		"no scenarios key": "scenario: []\n",
	}
	wantLine := map[string]string{"unknown field": "bad.yaml:3:", "bad duration": "bad.yaml:3:", "unknown lock": "bad.yaml:4:",
		"bad expectation": "bad.yaml:3:", "unknown fault": "bad.yaml:2:", "duplicate": "bad.yaml:4:", "not yaml": "bad.yaml:", "no scenarios key": "bad.yaml:1:"}
	for name, body := range bad {
		_, err := scenarios.Load([]byte(body), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), wantLine[name]) {
			t.Errorf("%s: %v, want an error at %s", name, err, wantLine[name])
		}
	}
	_, err = scenarios.Load([]byte(bad["unknown lock"]), "bad.yaml")
	if !strings.Contains(err.Error(), "token-watchdog") {
		t.Errorf("unknown lock error does not list the valid ones: %v", err)
	}
}

// lock returns a registered lock's spec.
func lock(name string) lockimpl.Spec {
	s, err := lockimpl.Lookup(name)
	if err != nil {
		panic(err)
	}
	return s
}

func short(name string, d time.Duration) scenarios.Scenario {
	s, err := scenarios.Get(name)
	if err != nil {
		panic(err)
	}
	s.Duration = d
	return s
}

func TestBaselineCellMeetsAndWritesACheckableHistory(t *testing.T) {
	dir := t.TempDir()
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("baseline", 600*time.Millisecond), Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe.Expected()},
		scenarios.Options{Backend: process.Backend{}, Seed: 7, OutDir: dir})
	if res.Outcome != results.Met || res.Verdict != checker.Pass {
		t.Fatalf("%s", res.Summary())
	}
	want := filepath.Join(dir, "baseline", "token", "history.jsonl")
	if res.History != want {
		t.Fatalf("history at %q, want %q", res.History, want)
	}
	h, err := history.LoadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if h.Header.Scenario != "baseline" || h.Header.Lock != "token" || h.Header.Seed != 7 {
		t.Fatalf("header %+v", h.Header)
	}
	if !strings.Contains(res.Rerun, "--scenario baseline --lock token --seed 7") {
		t.Fatalf("rerun command %q", res.Rerun)
	}
}

func TestUnsafeCellIsDetected(t *testing.T) {
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("gc-pause", time.Second), Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe.Expected()},
		scenarios.Options{Backend: process.Backend{}, Seed: 3})
	if res.Outcome != results.Met || res.Violations == 0 || res.Faults == 0 {
		t.Fatalf("%s (fault windows %d)", res.Summary(), res.Faults)
	}
}

func TestFencedLockSurvivesPausesBecauseTheResourceChecksFences(t *testing.T) {
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("gc-pause", time.Second), Lock: lock(lockimpl.NameFenced), Expect: scenarios.Safe.Expected()},
		scenarios.Options{Backend: process.Backend{}, Seed: 3})
	if res.Outcome != results.Met {
		t.Fatalf("%s", res.Summary())
	}
	if res.Stats.StaleFence == 0 {
		t.Fatalf("no stale fence was rejected: the pause did not bite (%+v)", res.Stats)
	}
}

func TestNotApplicableCellIsSkipped(t *testing.T) {
	s, _ := scenarios.Get("failover")
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: s, Lock: lock(lockimpl.NameRedlock), Expect: scenarios.NotApplicable.Expected()}, scenarios.Options{Backend: process.Backend{}})
	if res.Outcome != results.Skipped || res.Failed() || !strings.Contains(res.Error, "not applicable") {
		t.Fatalf("%+v", res)
	}
}

func TestCancelledRunSkipsCellsThatHaveNotStarted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := scenarios.RunCell(ctx, scenarios.Cell{Scenario: short("baseline", time.Second), Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe.Expected()}, scenarios.Options{Backend: process.Backend{}})
	if res.Outcome != results.Skipped {
		t.Fatalf("%+v", res)
	}
}

func TestMissingRedisIsAHarnessError(t *testing.T) {
	t.Setenv("LOCKCHAOS_REDIS_SERVER", filepath.Join(t.TempDir(), "no-redis"))
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: short("baseline", time.Second), Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe.Expected()}, scenarios.Options{Backend: process.Backend{}})
	if res.Outcome != results.HarnessError || !strings.Contains(res.Error, "apt-get install redis-server") {
		t.Fatalf("%+v", res)
	}
}

func TestMain_noStrayOutput(t *testing.T) {
	// The package must not leave files in the working directory.
	if _, err := os.Stat("out"); err == nil {
		t.Fatal("tests wrote into ./out")
	}
}
