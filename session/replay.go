package session

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// replayFindings reruns, on the replay backend (real Redis), every cell in
// which the simulation found a decisive violation (scenarios.Replay),
// after measuring the machine there.
func (s *session) replayFindings(ctx context.Context, found []*results.Cell) []results.Replay {
	todo := scenarios.FirstFailures(found)
	if len(todo) == 0 {
		fmt.Fprintf(s.Stderr, "lockchaos: nothing to replay on %s: the simulation found no violation\n", s.Replay.Name())
		return nil
	}
	// Always measured: a --time-scale 1 given for the simulation (where
	// it is the only valid value) says nothing about real Redis here.
	t, err := scenarios.MeasureTiming(ctx, s.Replay, 0)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted while measuring: the run says so
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "lockchaos run: replay on %s: %v\n", s.Replay.Name(), err)
		return nil
	}
	fmt.Fprintf(s.Stderr, "lockchaos: replaying %d finding(s) on %s (redis-server %s); machine now: %s\n",
		len(todo), s.Replay.Name(), s.ReplayVersion, t.Calibration)
	opts := s.CellOptions(s.Replay, t, nil)
	opts.OutDir = filepath.Join(s.Out, "replay-"+s.Replay.Name())
	return scenarios.Replay(ctx, s.Cells, todo, opts, s.Out, func(rp results.Replay) {
		fmt.Fprintf(s.Stderr, "replay on %s: %s\n", s.Replay.Name(), rp.Summary)
	})
}
