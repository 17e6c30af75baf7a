package margins

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/internal/safefile"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Shrunk is the smallest schedule the search found that still breaks a
// lock at its boundary: fewest pods, shortest cell (the scenario has one
// fault already), with the command that replays it on real Redis.
type Shrunk struct {
	Seed     int64         `json:"seed"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration_ns"`
	// Scenario names the replay file's scenario; Replay is the command.
	Scenario string `json:"scenario"`
	Replay   string `json:"replay"`
}

// shrink reruns the first seed that broke lock at magnitude at (in the
// scenario's own time) with fewer pods and a shorter cell, keeping each
// step that still breaks it, and writes the smallest as a scenarios file
// under dir.
func shrink(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family, at time.Duration, scale float64, seed int64) (*Shrunk, error) {
	sc, err := f.scenario(at)
	if err != nil {
		return nil, err
	}
	sc = sc.WithDefaults()
	breaks := func(c scenarios.Scenario) bool {
		ran := scenarios.RunMatrix(ctx, []scenarios.Cell{{Scenario: c.Scaled(scale), Lock: lock,
			Expect: results.Expect{Safety: results.Either, Liveness: results.Either}}},
			scenarios.MatrixOptions{Options: wholeCell(scenarios.Options{Seed: seed, Backend: cfg.Backend,
				MaxDuration: c.Scaled(scale).Duration, OutDir: filepath.Join(cfg.OutDir, "shrink")}, c.Scaled(scale).Duration),
				Repeat: 1, SameSeed: true})
		return len(ran) == 1 && ran[0].SafetyVerdict == checker.Fail
	}
	best := sc
	for _, clients := range []int{2, 3, 4} {
		if clients >= best.Clients {
			break
		}
		c := best
		c.Clients = clients
		if breaks(c) {
			best = c
			break
		}
	}
	for _, frac := range []float64{0.25, 0.5} {
		c := best
		c.Duration = time.Duration(frac * float64(best.Duration))
		if c.Duration < best.FirstFault+at {
			continue // the fault must still fit
		}
		if breaks(c) {
			best = c
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := &Shrunk{Seed: seed, Clients: best.Clients, Duration: stretch(best.Duration, scale),
		Scenario: fmt.Sprintf("margin-%s-%s", f.Name, lock.Name)}
	path := replayFile(cfg)
	if err := appendReplay(path, out.Scenario, best, scale, lock.Name); err != nil {
		return out, err
	}
	out.Replay = fmt.Sprintf("lockchaos run --scenarios-file %s --scenario %s --lock %s --seed %d --backend process",
		path, out.Scenario, lock.Name, seed)
	return out, nil
}

// appendReplay adds one scenario, stretched to the search's TTL, to the
// replay file (a lockchaos scenarios file, created on first use).
func appendReplay(path, name string, sc scenarios.Scenario, scale float64, lock string) error {
	d := func(v time.Duration) string { return stretch(v, scale).String() }
	// The fault as it ran: its kind's own parameters, stretched.
	fault, err := yaml.Marshal(sc.Faults[0].Scaled(scale))
	if err != nil {
		return err
	}
	// Appended to, never through a link planted at path (safefile).
	fh, err := safefile.Append(path)
	if err != nil {
		return err
	}
	var b strings.Builder
	if st, err := fh.Stat(); err != nil || st.Size() == 0 {
		b.WriteString("# Schedules lockchaos margins found breaking a lock at its boundary, each shrunk\n" +
			"# (fewest pods, shortest cell); replay one on real Redis with the command margins printed.\n" +
			"scenarios:\n")
	}
	fmt.Fprintf(&b, "  - name: %s\n    description: %q\n    ttl: %s\n    duration: %s\n    clients: %d\n"+
		"    work_min: %s\n    work_max: %s\n    call_timeout: %s\n    first_fault: %s\n    gap_min: %s\n    gap_max: %s\n"+
		"    faults:\n      - %s\n    expect: {%s: unsafe}\n",
		name, sc.Description, d(sc.TTL), d(sc.Duration), sc.Clients, d(sc.WorkMin), d(sc.WorkMax), d(sc.CallTimeout),
		d(sc.FirstFault), d(sc.GapMin), d(sc.GapMax), strings.ReplaceAll(strings.TrimSpace(string(fault)), "\n", "\n        "), lock)
	if _, err := fh.WriteString(b.String()); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// replayFile is where a search writes the schedules it shrank.
func replayFile(cfg Config) string { return filepath.Join(filepath.Dir(cfg.OutDir), "found.yaml") }
