package margins

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/scenarios"
)

// What a margins search shows as it goes and at its end, for the CLI and
// any other caller that prints one.

// String is the probe's line as it finishes: how many of its runs broke,
// or why it was skipped.
func (p Probe) String() string {
	if p.Runs > 0 && p.Skipped == p.Runs {
		return fmt.Sprintf("%s/%s on %s: skipped (%s)", p.Family, p.Lock, p.Backend, p.Skip)
	}
	// "0 of 4 broke" of 4 inconclusive runs is no hold: say so.
	undecided := ""
	if n := p.Runs - p.Decisive(); n > 0 {
		undecided = fmt.Sprintf(" (%d not decisive: %d inconclusive)", n, p.Inconclusive)
	}
	return fmt.Sprintf("%s/%s at %.2fx TTL on %s: %d of %d broke%s", p.Family, p.Lock, p.InTTL, p.Backend,
		p.Broke, p.Runs, undecided)
}

// WriteText writes the table, the sentence per lock and the command that
// replays each boundary's smallest breaking schedule (the one found.yaml
// holds) on real Redis.
func (r *Report) WriteText(w io.Writer) {
	r.WriteTable(w)
	fmt.Fprintln(w)
	for _, s := range r.Sentences() {
		fmt.Fprintln(w, s)
	}
	if replays := r.Replays(); len(replays) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Replay a boundary's smallest breaking schedule (found.yaml) on real Redis:")
		for _, line := range replays {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// FamilyNames are the families' names, in Families' order.
func FamilyNames() []string {
	names := make([]string, len(Families))
	for i, f := range Families {
		names[i] = f.Name
	}
	return names
}

// Calibrate stretches the runs on real Redis for the machine's load, as
// `lockchaos run` does: a loaded machine's boundaries are then read at
// the same TTL multiples as a quiet one's. The real backend is the
// search's or, when that is the simulation, the confirming one (none:
// nothing to measure). It returns that backend and what the measurement
// said, if anything.
func Calibrate(ctx context.Context, cfg *Config, given float64) (on backend.Backend, calibration string, err error) {
	on = cfg.Backend
	if _, virtual := backend.Virtual(on); virtual {
		on = cfg.Confirm
	}
	if on == nil {
		return nil, "", nil
	}
	t, err := scenarios.MeasureTiming(ctx, on, given)
	if err != nil {
		return on, "", err
	}
	cfg.TimeScale, cfg.NodeOpTime = t.Scale, t.NodeOp
	return on, t.Calibration, nil
}

// RunLines rewrites each boundary's replay command (printed, and in
// margins.json) as a `lockchaos run` line a shell runs as pasted: every
// word quoted, the scenario files and driver locks of the search passed
// on (run knows a driver lock only from them) with found.yaml under out,
// on the real backend named on.
func RunLines(found []Margin, files []string, out string, lockDrivers []string, on string) {
	for i := range found {
		s := found[i].Shrunk
		if s == nil || s.Replay == "" {
			continue // no schedule in found.yaml: nothing to replay
		}
		s.Replay = scenarios.RunLine(append(slices.Clip(files), filepath.Join(out, "found.yaml")), s.Scenario, found[i].Lock,
			lockDrivers, s.Seed, on)
	}
}
