package scenarios

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/results"
)

// Replay of simulated findings on real Redis: the same cell with the same
// run seed, so the same fault schedule (the same faults, in the same
// order, at the same scheduled times when the machine's time scale is 1).

// FirstFailures is the first run of each cell whose verdict is a fail:
// one seed per cell, so a thousand-seed sweep that finds the same bug a
// hundred times replays it once.
func FirstFailures(found []*results.Cell) []*results.Cell {
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

// Replay reruns each finding of todo (FirstFailures) with opts on
// opts.Backend, its cell looked up in cells by name, with the finding's
// run seed. The replays run one at a time, so none starves another's
// timing; an interrupt (ctx) ends them. A replay's history is named
// relative to base (the run's output directory); done, if set, hears of
// each replay as it ends.
func Replay(ctx context.Context, cells []Cell, todo []*results.Cell, opts Options, base string,
	done func(results.Replay)) []results.Replay {
	byName := map[string]Cell{}
	for _, c := range cells {
		byName[c.Name()] = c
	}
	var out []results.Replay
	for _, sim := range todo {
		if ctx.Err() != nil {
			break
		}
		opts.Seed = sim.RunSeed
		r := RunCell(ctx, byName[sim.Name()], opts)
		rp := results.Replay{Scenario: sim.Scenario, Lock: sim.Lock, RunSeed: sim.RunSeed,
			SimFirst: time.Duration(sim.Stats.FirstViolation), Backend: opts.Backend.Name(), Verdict: r.Verdict,
			Outcome: r.Outcome, Reproduced: r.Verdict == checker.Fail, Summary: r.Summary(), Rerun: r.Rerun}
		if rel, err := filepath.Rel(base, r.History); err == nil && r.History != "" {
			rp.History = rel
		}
		if done != nil {
			done(rp)
		}
		out = append(out, rp)
	}
	return out
}

// RunLine is the `lockchaos run` line that runs scenario on lock at seed
// on backend, the scenario files and driver locks it needs passed on
// (run knows a driver lock only from them), every word quoted for a
// shell, so it runs as pasted.
func RunLine(files []string, scenario, lock string, drivers []string, seed int64, backend string) string {
	args := []string{"lockchaos", "run"}
	for _, f := range files {
		args = append(args, "--scenarios-file", f)
	}
	args = append(args, "--scenario", scenario, "--lock", lock)
	for _, d := range drivers {
		args = append(args, "--lock-driver", d)
	}
	return shellword.Join(append(args, "--seed", strconv.FormatInt(seed, 10), "--backend", backend))
}
