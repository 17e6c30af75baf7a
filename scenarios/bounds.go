package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Bounds on what one cell may ask for. Each one turns a value that would
// make a cell eat the machine (a gap of 1 ns fired 385,416 fault windows
// and wrote a 157 MB summary; a part length of 1 ns made two billion parts
// and ran out of memory) into an error before anything starts.
const (
	// MinGap is the shortest pause between two faults (gap_min and
	// gap_max): at most one fault starts per millisecond of a cell.
	MinGap = time.Millisecond
	// MaxFaultWindows bounds the fault windows one part of a cell may open
	// (one history): its length over gap_min, plus the first.
	MaxFaultWindows = 100_000
	// MinPartLength is the shortest Options.PartLength (each part starts
	// its own pods, schedule and history, a TTL's pause between parts).
	MinPartLength = 100 * time.Millisecond
	// MaxParts bounds the parts a cell is split into (30 days in parts of
	// 30 s).
	MaxParts = 100_000
	// MaxCellDuration bounds a cell's duration (and Options.MaxDuration,
	// and every other time of a scenario): 30 days, far past any soak, and
	// far enough from time.Duration's limit that nothing derived from it
	// (five times it, stretched by a time scale) overflows.
	MaxCellDuration = 30 * 24 * time.Hour
)

// checkGaps says what is wrong with a scenario's fault gaps, as given
// (zero: the default): a gap below MinGap fires faults as fast as the
// machine goes.
func (s Scenario) checkGaps() error {
	for _, g := range []struct {
		field string
		v     time.Duration
	}{{"gap_min", s.GapMin}, {"gap_max", s.GapMax}} {
		if g.v != 0 && g.v < MinGap {
			return fmt.Errorf("%s %v is below the shortest gap between faults, %v", g.field, g.v, MinGap)
		}
	}
	return nil
}

// checkLengths says which of a scenario's times (its faults' included)
// is longer than the longest cell: none means anything there, and
// stretched by a time scale it would overflow.
func (s Scenario) checkLengths() error {
	times := map[string]time.Duration{"ttl": s.TTL, "work_min": s.WorkMin, "work_max": s.WorkMax, "call_timeout": s.CallTimeout,
		"first_fault": s.FirstFault, "gap_min": s.GapMin, "gap_max": s.GapMax, "recover_within": s.RecoverWithin,
		"node_timeout": s.NodeTimeout}
	for i, f := range s.Faults {
		for name, d := range f.Durations() {
			times[fmt.Sprintf("fault %d's %s", i+1, name)] = d
		}
	}
	for _, name := range slices.Sorted(maps.Keys(times)) {
		if d := times[name]; d > MaxCellDuration || d < -MaxCellDuration {
			return fmt.Errorf("%s %v is longer than the longest cell, %v", name, d, MaxCellDuration)
		}
	}
	return nil
}

// mostWindows is the most fault windows a part of d opens: one at
// FirstFault, then one per GapMin at most (a fault may take no time). A
// gap of 0 counts as 1 ns.
func mostWindows(sc Scenario, d time.Duration) int64 {
	if len(sc.Faults) == 0 || d < sc.FirstFault {
		return 0
	}
	return 1 + int64(d-sc.FirstFault)/int64(max(sc.GapMin, 1))
}

// checkParts says why a cell cannot be cut into parts: more than
// MaxParts of them. It runs before the parts are made.
func checkParts(p *Plan, opts Options) error {
	length := partLength(opts)
	if n := partCount(p.Scenario.Duration, length); n > MaxParts {
		return fmt.Errorf("%w: %s: a part length of %v cuts its %v into %d parts, more than %d; "+
			"want a part length of at least %v", ErrTooLarge, p.Name(), length, p.Scenario.Duration, n, MaxParts,
			max(MinPartLength, (p.Scenario.Duration+MaxParts-1)/MaxParts))
	}
	return nil
}

// checkFaultWindows says why a planned cell must not run: a part of it
// could open more than MaxFaultWindows fault windows. The first part is
// the longest (the others are as long, or the rest).
func checkFaultWindows(p *Plan) error {
	longest := p.Parts[0].MaxDuration
	if n := mostWindows(p.Scenario, longest); n > MaxFaultWindows {
		want := time.Duration(math.Ceil(float64(longest-p.Scenario.FirstFault) / float64(MaxFaultWindows-1)))
		return fmt.Errorf("%w: %s: gap_min %v over %v fires up to %d fault windows, more than the %d a cell holds; "+
			"want gap_min at least %v (or a shorter cell)", ErrTooLarge, p.Name(), p.Scenario.GapMin, longest, n, MaxFaultWindows,
			want.Round(time.Millisecond)+time.Millisecond)
	}
	return nil
}

// partLength is opts' part length, or the default.
func partLength(opts Options) time.Duration {
	if opts.PartLength <= 0 {
		return DefaultPartLength
	}
	return opts.PartLength
}

// partCount is how many parts of length a cell of d makes when it runs in
// parts.
func partCount(d, length time.Duration) int64 {
	if d <= length {
		return 1
	}
	return int64((d + length - 1) / length)
}

// SeedsFor says whether a run of repeat runs per cell from seed can
// derive every run's seed (seed, seed+1, ..., seed+repeat-1) without
// wrapping past the largest int64, or passing 0, which means "the
// default seed" and would run seed 1's schedule again.
func SeedsFor(seed int64, repeat int) error {
	last := int64(max(repeat, 1) - 1)
	switch {
	case seed > math.MaxInt64-last:
		return fmt.Errorf("%w %d with %d runs per cell: their seeds would pass the largest, %d; want a seed of at most %d",
			ErrInvalidSeed, seed, last+1, int64(math.MaxInt64), int64(math.MaxInt64)-last)
	case seed < 0 && seed+last >= 0:
		return fmt.Errorf("%w %d with %d runs per cell: their seeds %d..%d would pass 0 (the default seed, 1, again); "+
			"want a positive seed, or a negative one of at most %d", ErrInvalidSeed, seed, last+1, seed, seed+last, -1-last)
	}
	return nil
}
