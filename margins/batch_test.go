package margins

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

func simBackend(t *testing.T) sim.Backend {
	return sim.New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
}

// A batch runs in rounds: every seed once, each its own history, and an
// interrupt stops it between rounds (a probe of a million seeds handed
// out every run after SIGTERM).
func TestBatchRunsInRoundsAndStops(t *testing.T) {
	defer func(n int) { seedRound = n }(seedRound)
	seedRound = 2
	sc, err := scenarios.Get("baseline")
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 2 * sc.TTL
	cell := scenarios.Cell{Scenario: sc, Lock: spec(t, "token"), Expect: results.Expect{Safety: results.Either, Liveness: results.Either}}
	mo := scenarios.MatrixOptions{Options: scenarios.Options{Seed: 5, Backend: simBackend(t), OutDir: t.TempDir()},
		Parallel: 1, Repeat: 5}
	ran := runSeeds(context.Background(), cell, mo)
	seen, histories := map[int64]bool{}, map[string]bool{}
	for _, r := range ran {
		seen[r.RunSeed] = true
		histories[filepath.Base(r.History)] = true
	}
	if len(ran) != 5 || len(seen) != 5 || !seen[5] || !seen[9] || len(histories) != 5 {
		t.Errorf("5 seeds from 5 in rounds of 2: %d runs, seeds %v, histories %v", len(ran), seen, histories)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mo.Progress = func(*results.Cell, int, int) { cancel() }
	mo.OutDir = t.TempDir()
	if ran := runSeeds(ctx, cell, mo); len(ran) != 2 {
		t.Errorf("interrupted in the first round: %d runs, want that round's 2", len(ran))
	}
}

// A probe's cell runs whole at a long TTL: fenced's slow-reply at 10x a
// 10 s TTL (the cap) is a cell of minutes in virtual time, which the
// simulation split into parts ("cell timed out after 3m0s"), and whose
// minute of slack past its end was too short at 7.5x ("timed out after
// 9m26s").
func TestLongCellRunsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("a long simulated cell")
	}
	f, err := FamilyNamed("slow-reply")
	if err != nil {
		t.Fatal(err)
	}
	base, err := f.scenario(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	scale := float64(10*time.Second) / float64(base.TTL)
	at := 10 * base.TTL
	cfg := Config{Seed: 1, Parallel: 1, OutDir: t.TempDir()}
	p, err := runProbe(context.Background(), cfg, spec(t, "fenced"), f, at, scale, simBackend(t), 1)
	if err != nil || p.Errors > 0 || p.Runs != 1 {
		t.Fatalf("%+v: %v", p, err)
	}
}

// NaN and the infinities are no resolution, cap or time scale (a NaN
// resolution bisected forever).
func TestConfigRefusesNaNAndInf(t *testing.T) {
	for _, c := range []Config{
		{Resolution: math.NaN()}, {Resolution: math.Inf(1)}, {Cap: math.NaN()}, {Cap: math.Inf(1)},
		{TimeScale: math.NaN()}, {TimeScale: math.Inf(1)}, {TimeScale: -1},
	} {
		c.Locks, c.Backend = []lockimpl.Spec{spec(t, "token")}, simBackend(t)
		if err := c.Validate(); err == nil {
			t.Errorf("resolution %v, cap %v, time scale %v: valid", c.Resolution, c.Cap, c.TimeScale)
		}
	}
}

// A resolution finer than the magnitudes' 0.1 ms grid ends its bisection
// (the bracket stopped narrowing and the search probed one magnitude
// forever); the command line refuses it, the library ends it.
func TestTinyResolutionEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("a search")
	}
	pause, err := FamilyNamed("pause")
	if err != nil {
		t.Fatal(err)
	}
	// A bound on a hang, not a speed target: the search takes seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ms, err := Search(ctx, Config{Locks: []lockimpl.Spec{spec(t, "token")}, Families: []Family{pause}, Seeds: 1, Seed: 7,
		Resolution: 1e-9, Backend: simBackend(t), OutDir: filepath.Join(t.TempDir(), "probes")})
	if err != nil || len(ms) != 1 || !ms[0].Broke || ms[0].At-ms[0].Held > time.Millisecond/10 {
		t.Fatalf("%v: %+v", err, ms)
	}
}
