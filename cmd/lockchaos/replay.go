package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// replayFindings reruns, on the replay backend (real Redis), every cell in
// which the simulation found a decisive violation (scenarios.Replay),
// after measuring the machine there.
func (s *session) replayFindings(ctx context.Context, found []*results.Cell) []results.Replay {
	todo := scenarios.FirstFailures(found)
	if len(todo) == 0 {
		fmt.Fprintf(s.stderr, "lockchaos: nothing to replay on %s: the simulation found no violation\n", s.replay.Name())
		return nil
	}
	// Always measured: a --time-scale 1 given for the simulation (where
	// it is the only valid value) says nothing about real Redis here.
	t, err := scenarios.MeasureTiming(ctx, s.replay, 0)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted while measuring: the run says so
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "lockchaos run: replay on %s: %v\n", s.replay.Name(), err)
		return nil
	}
	fmt.Fprintf(s.stderr, "lockchaos: replaying %d finding(s) on %s (redis-server %s); machine now: %s\n",
		len(todo), s.replay.Name(), s.replayVersion, t.Calibration)
	opts := s.cfg.cellOptions(target{be: s.replay, Timing: t, named: s.replay.Name()}, nil)
	opts.OutDir = filepath.Join(s.cfg.out, "replay-"+s.replay.Name())
	return scenarios.Replay(ctx, s.cells, todo, opts, s.cfg.out, func(rp results.Replay) {
		fmt.Fprintf(s.stderr, "replay on %s: %s\n", s.replay.Name(), rp.Summary)
	})
}

// replayBackend is the real backend --replay-on names, or nil without it.
func replayBackend(name, image string) (backend.Backend, string, error) {
	if name == "" {
		return nil, "", nil
	}
	return chooseBackend(name, image, nil)
}
