package lockchaostest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

// TestOrderLock runs the example's test: the adapter on real Redis where
// there is a redis-server, and on the simulated backend everywhere.
func TestOrderLock(t *testing.T) { testOrderLock(t) }

// helperEnv picks what TestHelper runs: the tests below run this test
// binary again with it set, to read what go test prints of a Run.
const helperEnv = "LOCKCHAOSTEST_HELPER"

// brokenLock's constructor fails: the cell cannot run.
var brokenLock = lockimpl.Spec{Name: "broken", Nodes: 1, New: func(lockimpl.Env) (lockimpl.Locker, error) {
	return nil, errors.New("orders: config service unreachable")
}}

func TestHelper(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("run in a subprocess by the tests that read its output")
	case "redis":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe)
	case "sim":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe, lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	case "whole":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Expect{Safety: lockchaostest.Safe, Liveness: lockchaostest.Live},
			lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	case "stuck-word":
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Stuck, lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	case "broken":
		lockchaostest.Run(t, brokenLock, "baseline", lockchaostest.Either, lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)})
	default:
		thirdPartyHelper(t, os.Getenv(helperEnv))
	}
}

// runHelper runs TestHelper's case in a subprocess with env added, and
// returns what go test -v printed and whether it passed.
func runHelper(t *testing.T, which string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelper$", "-test.v", "-test.count=1")
	// Not inherited: the parent's CI may require Redis.
	// TMPDIR: the folder a failing Run keeps goes away with the test.
	cmd.Env = append(os.Environ(), helperEnv+"="+which, lockchaostest.RequireRedisEnv+"=", "TMPDIR="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v\n%s", which, err, out)
	}
	return string(out), err == nil
}

func mustSay(t *testing.T, out string, says ...string) {
	t.Helper()
	for _, s := range says {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// Without redis-server the test skips, saying how to install one, how to
// run simulated instead, and how to make a missing one fail a CI job; it
// names no backend lockchaostest gives no way to pick.
func TestNoRedisServerSkipsSayingWhatToDo(t *testing.T) {
	const missing = lockchaostestNoSuchFile
	out, ok := runHelper(t, "redis", "LOCKCHAOS_REDIS_SERVER="+missing)
	if !ok || !strings.Contains(out, "--- SKIP: TestHelper") {
		t.Fatalf("want a skip:\n%s", out)
	}
	mustSay(t, out, `LOCKCHAOS_REDIS_SERVER="`+missing+`" is not an executable redis-server`,
		"apt-get install redis-server", "lockchaostest.Options{Backend: lockchaostest.Sim(t)}", "LOCKCHAOS_REQUIRE_REDIS=1")
	if strings.Contains(out, "docker") {
		t.Errorf("the skip names a docker backend:\n%s", out)
	}
}

// LOCKCHAOS_REQUIRE_REDIS=1 makes a missing redis-server a failure, so a
// CI job without Redis cannot go green on skips alone; a value it cannot
// read fails too, naming the valid ones.
func TestRequireRedisFailsWithoutOne(t *testing.T) {
	out, ok := runHelper(t, "redis", "LOCKCHAOS_REDIS_SERVER="+lockchaostestNoSuchFile, "LOCKCHAOS_REQUIRE_REDIS=1")
	if ok || !strings.Contains(out, "--- FAIL: TestHelper") {
		t.Fatalf("want a failure:\n%s", out)
	}
	mustSay(t, out, "LOCKCHAOS_REQUIRE_REDIS=1 makes that a failure", "apt-get install redis-server", "lockchaostest.Sim(t)")
	out, ok = runHelper(t, "redis", "LOCKCHAOS_REDIS_SERVER="+lockchaostestNoSuchFile, "LOCKCHAOS_REQUIRE_REDIS=yes")
	if ok {
		t.Fatalf("LOCKCHAOS_REQUIRE_REDIS=yes passed:\n%s", out)
	}
	mustSay(t, out, `LOCKCHAOS_REQUIRE_REDIS="yes" is not 1 or 0`)
}

// A simulated run's lines say it was simulated.
func TestSimulatedRunSaysSo(t *testing.T) {
	out, ok := runHelper(t, "sim")
	if !ok {
		t.Fatalf("simulated baseline failed:\n%s", out)
	}
	mustSay(t, out, "lockchaostest: simulated (backend sim: miniredis in virtual time, not real Redis): baseline/orderlock: pass")
}

// A lock whose constructor fails is a harness error: the test fails (even
// for Either, which gates nothing) and nothing it prints says pass.
func TestBrokenLockFailsWithNoVerdict(t *testing.T) {
	out, ok := runHelper(t, "broken")
	if ok || !strings.Contains(out, "--- FAIL: TestHelper") {
		t.Fatalf("want a failure:\n%s", out)
	}
	mustSay(t, out, "the cell could not run (a harness error: no verdict on the lock)",
		"baseline/broken: - (expected either): error: ", "orders: config service unreachable")
	if strings.Contains(out, "pass") {
		t.Errorf("a broken cell says pass:\n%s", out)
	}
}

// Run takes a whole expectation as well as one word; a liveness word
// where safety is meant fails the test, saying where it goes.
func TestRunTakesAWholeExpectation(t *testing.T) {
	out, ok := runHelper(t, "whole")
	if !ok {
		t.Fatalf("baseline, safe and live, failed:\n%s", out)
	}
	mustSay(t, out, "baseline/orderlock: pass (expected safe): met")
	out, ok = runHelper(t, "stuck-word")
	if ok {
		t.Fatalf("safety stuck passed:\n%s", out)
	}
	mustSay(t, out, "lockchaostest: baseline/orderlock: invalid expectation", "liveness expectations go in {liveness: stuck}")
}

const lockchaostestNoSuchFile = "/nonexistent/lockchaostest/redis-server"
