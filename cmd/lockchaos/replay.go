package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/lockchaos/lockchaos/backend"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// replayFindings reruns, on the replay backend (real Redis), every cell in
// which the simulation found a decisive violation: the same cell with the
// same run seed, so the same fault schedule (the same faults, in the same
// order, at the same scheduled times when the machine's time scale is 1).
// One seed per cell, the first that failed: a thousand-seed sweep that
// finds the same bug a hundred times replays it once. The replays run one
// at a time, so none starves another's timing.
func (s *session) replayFindings(ctx context.Context, found []*results.Cell) []results.Replay {
	todo := firstFailures(found)
	if len(todo) == 0 {
		fmt.Fprintf(s.stderr, "lockchaos: nothing to replay on %s: the simulation found no violation\n", s.replay.Name())
		return nil
	}
	// Always measured: a --time-scale 1 given for the simulation (where
	// it is the only valid value) says nothing about real Redis here.
	t, err := measureTiming(ctx, s.replay, 0)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted while measuring: the run says so
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "lockchaos run: replay on %s: %v\n", s.replay.Name(), err)
		return nil
	}
	fmt.Fprintf(s.stderr, "lockchaos: replaying %d finding(s) on %s (redis-server %s); machine now: %s\n",
		len(todo), s.replay.Name(), s.replayVersion, t.calibration)
	byName := map[string]scenarios.Cell{}
	for _, c := range s.cells {
		byName[c.Name()] = c
	}
	opts := s.cfg.cellOptions(target{be: s.replay, timing: t, named: s.replay.Name()}, nil)
	opts.OutDir = filepath.Join(s.cfg.out, "replay-"+s.replay.Name())
	var out []results.Replay
	for _, sim := range todo {
		if ctx.Err() != nil {
			break
		}
		opts.Seed = sim.RunSeed
		rp := s.replayed(sim, scenarios.RunCell(ctx, byName[sim.Name()], opts))
		fmt.Fprintf(s.stderr, "replay on %s: %s\n", s.replay.Name(), rp.Summary)
		out = append(out, rp)
	}
	return out
}

// firstFailures is the first run of each cell whose verdict is a fail.
func firstFailures(found []*results.Cell) []*results.Cell {
	var todo []*results.Cell
	seen := map[string]bool{}
	for _, r := range found {
		if r.Verdict != checker.Fail || seen[r.Name()] {
			continue
		}
		seen[r.Name()] = true
		todo = append(todo, r)
	}
	return todo
}

// replayed is what the replay r of the simulated finding sim found.
func (s *session) replayed(sim, r *results.Cell) results.Replay {
	rp := results.Replay{Scenario: sim.Scenario, Lock: sim.Lock, RunSeed: sim.RunSeed, SimFirst: time.Duration(sim.Stats.FirstViolation),
		Backend: s.replay.Name(), Verdict: r.Verdict, Outcome: r.Outcome, Reproduced: r.Verdict == checker.Fail,
		Summary: r.Summary(), Rerun: r.Rerun}
	if rel, err := filepath.Rel(s.cfg.out, r.History); err == nil && r.History != "" {
		rp.History = rel
	}
	return rp
}

// replayBackend is the real backend --replay-on names, or nil without it.
func replayBackend(name, image string) (backend.Backend, string, error) {
	if name == "" {
		return nil, "", nil
	}
	return chooseBackend(name, image, nil)
}
