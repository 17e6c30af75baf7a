package lockchaostest_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// What a Go user plugging in a third-party library trips on (issue 34):
// histories of passing cells, the critiques, the time scale, a lease of
// the library's own, a topology the library refuses.

// thirdPartyHelper runs TestHelper's cases for these tests.
func thirdPartyHelper(t *testing.T, which string) {
	switch which {
	case "pass-sim":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe, lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	case "whole-second":
		// TimeScale 1: a measured 1.2 would make the TTL 1.2 s and the lease 2 s.
		lockchaostest.Run(t, wholeSecondLock, "baseline", lockchaostest.Safe, lockchaostest.Options{Seed: 7, Duration: time.Second, TimeScale: 1})
	case "whole-second-scaled":
		testWholeSecondScaled(t)
	case "bad-scale":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe, lockchaostest.Options{TimeScale: 0.05})
	case "refuses":
		lockchaostest.Run(t, replicaShyLock, "failover", lockchaostest.Unsafe, lockchaostest.Options{Seed: 7})
	}
}

// wholeSecondLock is orderlock with a lease in whole seconds, as Dapr's
// ExpiryInSeconds: the catalog's 300 ms TTL becomes a 1 s lease.
var wholeSecondLock = lockimpl.Spec{Name: "whole-second", Nodes: 1, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
	return locker{c: &Client{rdb: env.Clients[0]}, ttl: (env.TTL + time.Second - 1).Truncate(time.Second)}, nil
}}

// testWholeSecondScaled is the Scaled recipe of docs/go.md.
//
// docs:begin scaled
func testWholeSecondScaled(t *testing.T) {
	sc, err := scenarios.Named("gc-pause")
	if err != nil {
		t.Fatal(err)
	}
	// The catalog's TTL is 300 ms; the lock's lease is a whole second.
	// Scaled stretches every time of the scenario by one factor (the TTL,
	// the pause, the work, the gaps), so the scenario keeps its shape at
	// the lock's own lease: a pause of 1.5 s past a 1 s lease.
	sc = sc.Scaled(float64(time.Second) / float64(sc.TTL))
	// TimeScale 1: a lease counted in whole seconds cannot stretch with
	// the machine's load as a TTL does (a measured 1.2 would make the TTL
	// 1.2 s and the lease 2 s).
	lockchaostest.RunScenario(t, wholeSecondLock, sc, lockchaostest.Unsafe,
		lockchaostest.Options{Duration: 4 * time.Second, TimeScale: 1})
}

// docs:end scaled

// docs:begin refuses
// replicaShyLock refuses a node with replicas, as Dapr's Redis lock does
// at Init, in the lock's own words: the cell is skipped with the reason.
var replicaShyLock = lockimpl.Spec{Name: "replica-shy", Nodes: 1, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
	info, err := env.Clients[0].Info(context.Background(), "replication").Result()
	if err != nil {
		return nil, err
	}
	if m := regexp.MustCompile(`connected_slaves:(\d+)`).FindStringSubmatch(info); len(m) > 1 && m[1] != "0" {
		return nil, lockimpl.Unsupported("the lock refuses a Redis node with replicas (it has %s)", m[1])
	}
	return locker{c: &Client{rdb: env.Clients[0]}, ttl: env.TTL}, nil
}}

// docs:end refuses

func needRedis(t *testing.T) {
	t.Helper()
	if _, err := process.FindRedisServer(); err != nil {
		t.Skip("needs redis-server:", err)
	}
}

// A passing cell's history is kept where the user asks: Options.OutDir
// (Run's result names it, absolute), or go test -artifacts (under
// -outputdir); otherwise it goes with the passing test.
func TestPassingHistoriesKept(t *testing.T) {
	dir := t.TempDir()
	var hist string
	t.Run("outdir", func(t *testing.T) {
		res := lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe,
			lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t), OutDir: dir})
		hist = res.History
	})
	if !filepath.IsAbs(hist) || !strings.HasPrefix(hist, dir) {
		t.Fatalf("Cell.History = %q, want an absolute path under %s", hist, dir)
	}
	if _, err := os.Stat(hist); err != nil {
		t.Errorf("the passing cell's history is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Errorf("the passing cell's report is gone: %v", err)
	}

	out := t.TempDir()
	got, ok := runHelperArgs(t, "pass-sim", []string{"-test.artifacts", "-test.outputdir=" + out})
	if !ok {
		t.Fatalf("baseline failed:\n%s", got)
	}
	var kept []string
	_ = filepath.WalkDir(filepath.Join(out, "_artifacts"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, filepath.Join("baseline", "orderlock", "history.jsonl")) {
			kept = append(kept, path)
		}
		return nil
	})
	if len(kept) != 1 {
		t.Errorf("go test -artifacts kept %v, want one baseline/orderlock/history.jsonl under %s:\n%s", kept, out, got)
	}
	mustSay(t, got, "lockchaostest: history and report kept in "+out)
}

// Without either, a passing cell's folder goes with the test.
func TestPassingHistoriesGoByDefault(t *testing.T) {
	tmp := t.TempDir()
	got, ok := runHelperArgs(t, "pass-sim", nil, "TMPDIR="+tmp)
	if !ok {
		t.Fatalf("baseline failed:\n%s", got)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "lockchaostest-*")); len(left) > 0 {
		t.Errorf("a passing cell left %v", left)
	}
}

// The critiques are reachable by name, as the catalog's scenarios are.
func TestRunNamesACritique(t *testing.T) {
	res := lockchaostest.Run(t, orderLock, "replies-lost", lockchaostest.Unsafe,
		lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	if res.Scenario != "replies-lost" {
		t.Errorf("ran %s", res.Scenario)
	}
}

// On real Redis a Run measures the machine once, as the CLI does, and
// says so; a given TimeScale is used as it is; a bad one fails, saying
// what is valid.
func TestRunMeasuresTheTimeScale(t *testing.T) {
	needRedis(t)
	got, ok := runHelper(t, "redis")
	if !ok {
		t.Fatalf("baseline failed:\n%s", got)
	}
	mustSay(t, got, "time scale ", "measured once for this test binary; Options{TimeScale: ")
	mustSay(t, got, "baseline/orderlock: pass")
	got, ok = runHelper(t, "bad-scale")
	if ok {
		t.Fatalf("TimeScale 0.05 passed:\n%s", got)
	}
	mustSay(t, got, "lockchaostest: Options.TimeScale: scenarios: invalid scenario: time-scale 0.05: want 0 (measure) or a factor in 0.1..100")
}

// A lock whose lease is its own (a whole second where the cell's TTL is
// 300 ms) is told so: the witness saw it on the server.
func TestLeaseOfItsOwnIsSaid(t *testing.T) {
	needRedis(t)
	got, _ := runHelper(t, "whole-second")
	// The witness reads a key's deadline a round trip after the write.
	if !regexp.MustCompile(`lockchaostest: warning: whole-second's leases lasted (99\d ms|1\.00\d s) on the server .*, not 300 ms`).MatchString(got) {
		t.Errorf("no warning of a 1 s lease at a 300 ms TTL:\n%s", got)
	}
	mustSay(t, got, "Scaled")
	got, ok := runHelper(t, "redis")
	if !ok || strings.Contains(got, "warning:") {
		t.Errorf("orderlock, whose lease is the TTL, warned (or failed):\n%s", got)
	}
	// Scaled to the lock's lease, the scenario fits it: no warning, and
	// the pause past the lease is caught.
	got, ok = runHelper(t, "whole-second-scaled")
	if !ok || strings.Contains(got, "warning:") {
		t.Errorf("gc-pause scaled to a 1 s lease warned or missed the violation:\n%s", got)
	}
	mustSay(t, got, "gc-pause/whole-second: fail (expected unsafe): met")
}

// A lock that refuses the cell's deployment is skipped with its reason,
// not failed as a harness error.
func TestLockRefusingATopologyIsSkipped(t *testing.T) {
	needRedis(t)
	got, ok := runHelper(t, "refuses")
	if !ok || !strings.Contains(got, "--- SKIP: TestHelper") {
		t.Fatalf("want a skip:\n%s", got)
	}
	mustSay(t, got, "failover/replica-shy: - (expected unsafe): skipped: not supported by replica-shy on a primary-replica deployment: "+
		"the lock refuses a Redis node with replicas (it has 1)")
}

// runHelperArgs is runHelper with go test flags of its own.
func runHelperArgs(t *testing.T, which string, args []string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelper$", "-test.v", "-test.count=1"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+which, lockchaostest.RequireRedisEnv+"=", "TMPDIR="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v\n%s", which, err, out)
	}
	return string(out), err == nil
}
