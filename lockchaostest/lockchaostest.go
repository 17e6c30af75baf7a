// Package lockchaostest runs lockchaos scenarios from a user's go test:
//
//	func TestMyLockSurvivesPauses(t *testing.T) {
//		lockchaostest.Run(t, mylock.Spec, "gc-pause", lockchaostest.Safe)
//	}
//
// One word (Safe, Unsafe, Either) speaks of safety, and expects the lock
// live; an Expect speaks of both groups, and may name the only properties
// allowed to fail:
//
//	lockchaostest.Run(t, mylock.Spec, "pod-crash", lockchaostest.Expect{Safety: lockchaostest.Safe, Liveness: lockchaostest.Stuck})
//	lockchaostest.Run(t, mylock.Spec, "gc-pause", lockchaostest.Expect{MayFail: []checker.Property{checker.MutualExclusion}})
//
// A lock is a lockimpl.Spec: its traits (the nodes it needs, whether it
// hands out fences the resource must check, whether it renews) and a
// constructor that receives the pod's clients, already wired through the
// cell's proxies and fault hooks. The test skips where no redis-server is
// installed, saying how to get one or how to run simulated instead
// (Options{Backend: Sim(t)}); with LOCKCHAOS_REQUIRE_REDIS=1 it fails
// instead, so a CI job without Redis cannot go green on skips alone. It
// logs its seed (random unless LOCKCHAOS_SEED is set, so a failure replays
// exactly) and writes the cell's history and HTML page to a folder that is
// kept, and logged, when the test fails (always, with Options.OutDir or
// go test -artifacts). On real Redis it measures the machine once per test
// binary and stretches the cell's times as the CLI does (Options.TimeScale
// pins the factor); it warns when the leases the witness saw last
// otherwise than the lock declares, and skips a cell whose lock refuses
// its deployment (lockimpl.Unsupported). A simulated cell's lines say
// "simulated"; a cell the harness could not run (a constructor that fails,
// a Redis that would not start) fails the test with no verdict, whatever
// the expectation.
//
// One process-wide setting changes: go-redis's logger is silenced
// (redis.SetLogger), because go-redis has no per-client logger and a cell's
// injected faults make it print thousands of expected dial errors. Nothing
// else of the test process is touched: zerolog's global level (the
// embedded toxiproxy logs through zerolog) and the standard logger stay as
// they are. A test that wants go-redis's lines back calls redis.SetLogger
// after Run.
package lockchaostest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/verify"
)

// Expectations a test asserts: of safety (one word), of liveness (in an
// Expect).
const (
	Safe   = results.Safe   // must pass
	Unsafe = results.Unsafe // must be detected
	Either = results.Either // reported only
	Live   = results.Live   // must keep working: a stopped holder's lock is freed, pods acquire while a majority is up
	Stuck  = results.Stuck  // must be caught stuck
)

// Expect is a whole expectation: safety, liveness (default live) and the
// only properties allowed to fail (implying safety unsafe).
type Expect = results.Expect

// SeedEnv names the variable that fixes the seed of every Run.
const SeedEnv = "LOCKCHAOS_SEED"

// RequireRedisEnv names the variable that, set to 1 (or true), makes a
// missing redis-server fail the test instead of skipping it: set it in a CI
// job that must test on real Redis.
const RequireRedisEnv = "LOCKCHAOS_REQUIRE_REDIS"

// Options tune a Run; the zero value runs the scenario as the catalog has it.
type Options struct {
	// Duration overrides the scenario's.
	Duration time.Duration
	// Seed overrides LOCKCHAOS_SEED and the random default.
	Seed int64
	// Backend starts the Redis nodes. Default: local redis-server processes
	// (the test skips without one, or fails with LOCKCHAOS_REQUIRE_REDIS=1).
	// Sim(t) runs the cell simulated: miniredis in virtual time.
	Backend backend.Backend
	// TimeScale stretches every time of the scenario (TTL, work, gaps,
	// call timeouts, fault sizes) by one factor, as lockchaos run
	// --time-scale does. Default 0: measured once per test binary, as the
	// CLI measures once per run (scenarios.Calibrate: 1 on a quiet
	// machine, more on a loaded one, at most 6); 1 in virtual time.
	TimeScale float64
	// OutDir keeps every cell's history and HTML page under
	// OUT/SCENARIO/LOCK/, whether the test passes or fails. Default: a
	// temp folder kept only when the test fails; go test -artifacts keeps
	// it in the test's artifact folder (under -outputdir).
	OutDir string
}

// Run runs the named catalog scenario against lock and fails t unless the
// cell meets expect (one word: Safe, Unsafe, Either; or an Expect). It
// returns the cell's result for further assertions.
func Run(t testing.TB, lock lockimpl.Spec, scenario string, expect results.Expecter, opts ...Options) *results.Cell {
	t.Helper()
	sc, err := scenarios.Named(scenario)
	if err != nil {
		t.Fatal(err)
	}
	return RunScenario(t, lock, sc, expect, opts...)
}

// RunScenario is Run with a scenario of the caller's own (for example a
// catalog scenario with a longer pause).
func RunScenario(t testing.TB, lock lockimpl.Spec, sc scenarios.Scenario, expect results.Expecter, opts ...Options) *results.Cell {
	t.Helper()
	if err := expect.Expected().Validate(); err != nil {
		t.Fatalf("lockchaostest: %s/%s: %v", sc.Name, lock.Name, err)
	}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if err := (scenarios.Options{TimeScale: o.TimeScale}).Validate(); err != nil {
		t.Fatalf("lockchaostest: Options.TimeScale: %v", err)
	}
	if o.Backend == nil {
		needRedisServer(t)
		o.Backend = process.Backend{} // the default, chosen here once
	}
	seed := seedFor(t, o.Seed)
	on := timingFor(t, o)
	dir := outputDir(t, o)
	test := t.Name()
	res := scenarios.Run(context.Background(), sc, lock, expect, scenarios.Options{Seed: seed, OutDir: dir,
		Duration: o.Duration, Backend: o.Backend, TimeScale: on.Scale, NodeOpTime: on.NodeOp,
		Rerun: func(p *scenarios.Plan) string {
			return fmt.Sprintf("%s=%d go test -run '^%s$'", SeedEnv, p.RunSeed, regexp.QuoteMeta(test))
		}})
	history := res.History
	page := writePage(t, dir, res)
	res.History = history // writePage made it relative to dir, for the page's links
	if note := scenarios.LeaseNote(lock, res.Checked, res.TTL); note != "" {
		t.Logf("lockchaostest: warning: %s", note)
	}
	line := res.Summary()
	if res.Simulated {
		line = "simulated (backend " + res.Backend + ": miniredis in virtual time, not real Redis): " + line
	}
	switch {
	case res.Outcome == results.Skipped:
		t.Skipf("lockchaostest: %s", line)
	case res.Outcome == results.HarnessError:
		t.Errorf("lockchaostest: the cell could not run (a harness error: no verdict on the lock): %s\nrerun: %s\nreport: %s",
			line, res.Rerun, page)
	case res.Failed():
		t.Errorf("lockchaostest: %s\nrerun: %s\nreport: %s", line, res.Rerun, page)
	default:
		t.Logf("lockchaostest: %s", line)
	}
	return res
}

// needRedisServer skips t where no redis-server is found, saying what to
// do about it, or fails it when RequireRedisEnv asks for real Redis.
func needRedisServer(t testing.TB) {
	t.Helper()
	require := false
	if v := os.Getenv(RequireRedisEnv); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			t.Fatalf("lockchaostest: %s=%q is not 1 or 0 (true or false)", RequireRedisEnv, v)
		}
		require = b
	}
	if _, err := process.FindRedisServer(); err == nil {
		return
	}
	why := "no redis-server on PATH"
	if p := os.Getenv(process.RedisServerEnv); p != "" {
		why = fmt.Sprintf("%s=%q is not an executable redis-server", process.RedisServerEnv, p)
	}
	const todo = "install it (apt-get install redis-server on Debian/Ubuntu, brew install redis on macOS) or point " +
		process.RedisServerEnv + " at one; or pass lockchaostest.Options{Backend: lockchaostest.Sim(t)} " +
		"for a simulated run (miniredis in virtual time, no redis-server needed)"
	if require {
		t.Fatalf("lockchaostest: %s, and %s=1 makes that a failure: %s", why, RequireRedisEnv, todo)
	}
	t.Skipf("lockchaostest: skipped: %s: %s. Set %s=1 to fail instead of skipping (a CI job that must test on real Redis)",
		why, todo, RequireRedisEnv)
}

// seedFor picks the run's seed and logs how to replay it.
func seedFor(t testing.TB, seed int64) int64 {
	t.Helper()
	if seed == 0 {
		if v := os.Getenv(SeedEnv); v != "" {
			s, err := strconv.ParseInt(v, 10, 64)
			if err != nil || s <= 0 {
				t.Fatalf("lockchaostest: %s=%q is not a positive integer", SeedEnv, v)
			}
			seed = s
		} else {
			seed = time.Now().UnixNano()%1_000_000_000 + 1
		}
	}
	t.Logf("lockchaostest: seed %d (replay with %s=%d)", seed, SeedEnv, seed)
	return seed
}

// writePage writes the cell's HTML report and returns its path.
func writePage(t testing.TB, dir string, res *results.Cell) string {
	t.Helper()
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaostest", Seed: res.RunSeed, Repeat: 1,
		Started: time.Now(), Command: res.Rerun, Cells: []*results.Cell{res}, Backend: res.Backend, Simulated: res.Simulated}
	sum.Tally()
	reports.RelativeHistories(dir, sum)
	out, err := reports.WriteHTML(dir, sum, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Logf("lockchaostest: no HTML report: %v", err)
	}
	if err != nil || len(out.Pages) == 0 { // a skipped cell has no page
		return filepath.Join(dir, "index.html")
	}
	return out.Pages[0]
}

// Sim returns the simulated backend for Options.Backend: each part of the
// cell runs in a testing/synctest bubble of t's, on miniredis, in virtual
// time (no redis-server needed; a cell takes milliseconds). Its results
// are simulated, and say so; replay what matters on real Redis.
//
//	lockchaostest.Run(t, myLock, "gc-pause", lockchaostest.Unsafe, lockchaostest.Options{Backend: lockchaostest.Sim(t)})
func Sim(t *testing.T) backend.Backend {
	return sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
}
