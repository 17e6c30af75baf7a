// Package lockchaostest runs lockchaos scenarios from a user's go test:
//
//	func TestMyLockSurvivesPauses(t *testing.T) {
//		lockchaostest.Run(t, mylock.Spec, "gc-pause", lockchaostest.Safe)
//	}
//
// A lock is a lockimpl.Spec: its traits (the nodes it needs, whether it
// hands out fences the resource must check, whether it renews) and a
// constructor that receives the pod's clients, already wired through the
// cell's proxies and fault hooks. The test skips (never fails) where no
// redis-server is installed, saying how to get one; logs its seed (random
// unless LOCKCHAOS_SEED is set, so a failure replays exactly); and writes
// the cell's history and HTML page to a folder that is kept, and logged,
// when the test fails.
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
)

// Expectations a test asserts.
const (
	Safe   = results.Safe   // must pass
	Unsafe = results.Unsafe // must be detected
	Either = results.Either // reported only
)

// SeedEnv names the variable that fixes the seed of every Run.
const SeedEnv = "LOCKCHAOS_SEED"

// Options tune a Run; the zero value runs the scenario as the catalog has it.
type Options struct {
	// Duration overrides the scenario's.
	Duration time.Duration
	// Seed overrides LOCKCHAOS_SEED and the random default.
	Seed int64
	// Backend starts the Redis nodes. Default: local redis-server processes
	// (the test skips without one).
	Backend backend.Backend
}

// Run runs the named catalog scenario against lock and fails t unless the
// cell meets expect. It returns the cell's result for further assertions.
func Run(t testing.TB, lock lockimpl.Spec, scenario string, expect results.Expectation, opts ...Options) *results.Cell {
	t.Helper()
	sc, err := scenarios.Get(scenario)
	if err != nil {
		t.Fatal(err)
	}
	return RunScenario(t, lock, sc, expect, opts...)
}

// RunScenario is Run with a scenario of the caller's own (for example a
// catalog scenario with a longer pause).
func RunScenario(t testing.TB, lock lockimpl.Spec, sc scenarios.Scenario, expect results.Expectation, opts ...Options) *results.Cell {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Backend == nil {
		if _, err := process.FindRedisServer(); err != nil {
			t.Skipf("lockchaostest: %v", err)
		}
	}
	seed := seedFor(t, o.Seed)
	dir := keptOnFailure(t)
	test := t.Name()
	res := scenarios.Run(context.Background(), sc, lock, expect, scenarios.Options{Seed: seed, OutDir: dir,
		Duration: o.Duration, Backend: o.Backend,
		Rerun: func(p *scenarios.Plan) string {
			return fmt.Sprintf("%s=%d go test -run '^%s$'", SeedEnv, p.RunSeed, regexp.QuoteMeta(test))
		}})
	page := writePage(t, dir, res)
	switch {
	case res.Outcome == results.Skipped:
		t.Skipf("lockchaostest: %s", res.Summary())
	case res.Failed():
		t.Errorf("lockchaostest: %s\nrerun: %s\nreport: %s", res.Summary(), res.Rerun, page)
	default:
		t.Logf("lockchaostest: %s", res.Summary())
	}
	return res
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

// keptOnFailure makes the cell's output folder: removed after a passing
// test, kept (and logged) after a failing one.
func keptOnFailure(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lockchaostest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lockchaostest: history and report kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// writePage writes the cell's HTML report and returns its path.
func writePage(t testing.TB, dir string, res *results.Cell) string {
	t.Helper()
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaostest", Seed: res.RunSeed, Repeat: 1,
		Started: time.Now(), Command: res.Rerun, Cells: []*results.Cell{res}, Backend: res.Backend, Simulated: res.Simulated}
	sum.Tally()
	reports.RelativeHistories(dir, sum)
	out, err := reports.WriteHTML(dir, sum, reports.HTMLOptions{})
	if err != nil || len(out.Pages) == 0 {
		t.Logf("lockchaostest: no HTML report: %v", err)
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
