package main

import (
	"context"
	"fmt"
	"io"
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
func replayFindings(ctx context.Context, s runSettings, found []*results.Cell, stderr io.Writer) []results.Replay {
	byName := map[string]scenarios.Cell{}
	for _, c := range s.cells {
		byName[c.Name()] = c
	}
	var todo []*results.Cell
	seen := map[string]bool{}
	for _, r := range found {
		if r.Verdict != checker.Fail || seen[r.Name()] {
			continue
		}
		seen[r.Name()] = true
		todo = append(todo, r)
	}
	if len(todo) == 0 {
		fmt.Fprintf(stderr, "lockchaos: nothing to replay on %s: the simulation found no violation\n", s.replay.Name())
		return nil
	}
	// Always measured: a --time-scale 1 given for the simulation (where
	// it is the only valid value) says nothing about real Redis here.
	scale, nodeOp := 0.0, time.Duration(0)
	{
		cal, err := scenarios.Calibrate(ctx, s.replay)
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos run: replay on %s: %v\n", s.replay.Name(), err)
			return nil
		}
		scale, nodeOp = cal.Scale, cal.NodeOp
		fmt.Fprintf(stderr, "lockchaos: replaying %d finding(s) on %s (redis-server %s); machine now: %s\n", len(todo), s.replay.Name(), s.replayVersion, cal)
	}
	dir := filepath.Join(s.out, "replay-"+s.replay.Name())
	var out []results.Replay
	for _, sim := range todo {
		if ctx.Err() != nil {
			break
		}
		opts := scenarios.Options{Seed: sim.RunSeed, OutDir: dir, Duration: s.duration, Clients: s.clients, Budget: s.budget,
			Backend: s.replay, TimeScale: scale, NodeOpTime: nodeOp, MaxDuration: s.maxDuration, Floor: s.floor, PartLength: s.partLength, InParts: s.inParts,
			RerunFlags: rerunFlags(s.duration, s.clients, s.files) + " --backend " + s.replay.Name() + fmt.Sprintf(" --time-scale %.2f", scale)}
		r := scenarios.RunCell(ctx, byName[sim.Name()], opts)
		rp := results.Replay{Scenario: sim.Scenario, Lock: sim.Lock, RunSeed: sim.RunSeed, SimFirst: time.Duration(sim.Stats.FirstViolation),
			Backend: s.replay.Name(), Verdict: r.Verdict, Outcome: r.Outcome, Reproduced: r.Verdict == checker.Fail,
			Summary: r.Summary(), Rerun: r.Rerun}
		if rel, err := filepath.Rel(s.out, r.History); err == nil && r.History != "" {
			rp.History = rel
		}
		fmt.Fprintf(stderr, "replay on %s: %s\n", s.replay.Name(), rp.Summary)
		out = append(out, rp)
	}
	return out
}

// printReplays shows each replayed finding beside what real Redis did.
func printReplays(w io.Writer, rs []results.Replay) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nREPLAYED ON REAL REDIS (same cell, same seed)\n%-22s %-15s %-10s %-14s %-8s %-13s %s\n",
		"SCENARIO", "LOCK", "SEED", "SIM FIRST", "REAL", "OUTCOME", "REPRODUCED")
	n := 0
	for _, r := range rs {
		verdict := string(r.Verdict)
		if verdict == "" {
			verdict = "-"
		}
		yes := "no"
		if r.Reproduced {
			yes = "yes"
			n++
		}
		fmt.Fprintf(w, "%-22s %-15s %-10d %-14s %-8s %-13s %s\n", r.Scenario, r.Lock, r.RunSeed,
			fmt.Sprintf("%.3f s", r.SimFirst.Seconds()), verdict, r.Outcome, yes)
	}
	fmt.Fprintf(w, "%d of %d simulated finding(s) reproduced on %s\n", n, len(rs), rs[0].Backend)
}

// replayBackend is the real backend --replay-on names, or nil without it.
func replayBackend(name, image string) (backend.Backend, string, error) {
	if name == "" {
		return nil, "", nil
	}
	return chooseBackend(name, image, nil)
}
