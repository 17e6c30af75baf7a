package margins

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// first is the family's first rung, in TTLs: 0 for a family that breaks
// below its boundary (the mildest fault first), else From (default 0.5).
func (f Family) first() float64 {
	switch {
	case f.Below:
		return 0
	case f.From == 0:
		return 0.5
	}
	return f.From
}

// ladder is the coarse scan's rungs, in TTLs, from from up to capTTL.
func ladder(from, capTTL float64) []float64 {
	var out []float64
	for _, r := range []float64{0, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 1.25, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 100} {
		if r >= from && r < capTTL {
			out = append(out, r)
		}
	}
	return append(out, capTTL)
}

func stretch(d time.Duration, scale float64) time.Duration {
	return time.Duration(math.Round(float64(d) * scale))
}

// runProbe runs one magnitude (in the scenario's own time) on seeds
// seeds.
func runProbe(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family, at time.Duration, scale float64,
	on backend.Backend, seeds int) (Probe, error) {
	sc, err := f.scenario(at)
	if err != nil {
		return Probe{}, err
	}
	unscaled := sc.TTL
	// The scenario at the TTL asked for, same shape (the run itself
	// stretches nothing in virtual time; on real Redis, its calibration
	// stretches further for a loaded machine, in TTLs the same).
	sc = sc.WithDefaults().Scaled(scale)
	cell := scenarios.Cell{Scenario: sc, Lock: lock, Expect: results.Expect{Safety: results.Either, Liveness: results.Either}}
	_, virtual := backend.Virtual(on)
	ran := runSeeds(ctx, cell, scenarios.MatrixOptions{
		// A probe below the boundary never reaches its dangerous moment:
		// it ends at its planned length instead of running on for a floor
		// a search does not need.
		Options: wholeCell(scenarios.Options{Seed: cfg.Seed, Backend: on, TimeScale: cfg.TimeScale, NodeOpTime: cfg.NodeOpTime,
			MaxDuration: sc.Duration, OutDir: filepath.Join(cfg.OutDir, on.Name())}, sc.Duration),
		Parallel: cfg.Parallel, Repeat: seeds, DropMetHistories: virtual})
	p := Probe{Lock: lock.Name, Family: f.Name, Magnitude: stretch(at, scale), InTTL: float64(at) / float64(unscaled),
		Seed: -1, Backend: on.Name()}
	for _, r := range ran {
		p.Runs++
		switch {
		case r.Outcome == results.Skipped:
			p.Skipped++
			p.Skip = r.Error
		case r.Outcome == results.HarnessError:
			p.Errors++
		case r.SafetyVerdict == checker.Fail:
			p.Broke++
			if p.Seed < 0 || r.RunSeed < p.Seed {
				p.Seed = r.RunSeed
			}
		case r.Outcome == results.Inconclusive:
			p.Inconclusive++
		}
	}
	if p.Errors == p.Runs && p.Runs > 0 {
		return p, fmt.Errorf("margins: %s/%s at %v: every run was a harness error (%s)", f.Name, lock.Name, p.Magnitude,
			ran[0].Error)
	}
	return p, ctx.Err()
}

// wholeCell lets a probe's cell of duration d run as one part to its end
// at any TTL the search takes: a simulated cell longer than
// scenarios.DefaultPartLength otherwise runs in parts, each timed out as
// the first (fenced's slow-reply probe at a 10 s TTL: "cell timed out
// after 3m0s"), and a cell's minute of slack past its end is few TTLs at
// a long TTL.
func wholeCell(o scenarios.Options, d time.Duration) scenarios.Options {
	o.PartLength = max(d, scenarios.DefaultPartLength)
	o.CellTimeout = 2*d + time.Minute
	return o
}
