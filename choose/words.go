package choose

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/results"
)

// The words every output shows a table's cells in, one spelling each.

// Text is the safety cell: "unsafe k/n" (k of n runs found a safety
// violation), "safe 0/n" (none did, and the lock's design says none can),
// "allowed 0/n" (none did, but the design allows one, or nothing says: a
// user's lock), or "undecided"; with liveness where a run found the lock
// stuck, undecided runs, and "!" where a run disagreed with the lock's
// expectation (the gate).
func (c *Cell) Text() string {
	var s string
	switch {
	case c == nil:
		return "-"
	case c.Runs == 0:
		s = "undecided"
	case c.Unsafe > 0:
		s = fmt.Sprintf("unsafe %d/%d", c.Unsafe, c.Runs)
	case c.Expect != results.Safe:
		// None seen, but the design allows one (or nothing says: a
		// user's lock): not "safe".
		s = fmt.Sprintf("allowed 0/%d", c.Runs)
	default:
		s = fmt.Sprintf("safe 0/%d", c.Runs)
	}
	if c.Stuck > 0 {
		s += fmt.Sprintf(", stuck %d/%d", c.Stuck, c.LivenessRuns)
	}
	if c.Undecided > 0 && c.Runs > 0 {
		s += fmt.Sprintf(" +%d undecided", c.Undecided)
	}
	if c.Disagree {
		s += " !"
	}
	return s
}

// Text is a recovery: "1.0 TTL (310 ms), max 1.3 (400 ms)", or stuck.
func (rc Recovery) Text() string {
	if rc.N == 0 {
		return "-"
	}
	var parts []string
	if rc.Stuck > 0 {
		parts = append(parts, fmt.Sprintf("stuck %d/%d", rc.Stuck, rc.N))
	}
	if rc.NeverFreed > 0 {
		parts = append(parts, fmt.Sprintf("never freed %d/%d", rc.NeverFreed, rc.N))
	}
	if len(rc.All) > 0 {
		parts = append(parts, fmt.Sprintf("%.1f TTL (%s), max %.1f (%s)", rc.MedianTTL, ms(rc.Median), rc.MaxTTL, ms(rc.Max)))
	}
	return strings.Join(parts, "; ")
}

// Text is the tolerance of a minority down.
func (m Tolerance) Text() string {
	if !m.Applicable {
		return "n/a (" + m.Why + ")"
	}
	s := fmt.Sprintf("live %d/%d", m.Live, m.Runs)
	if m.Stuck > 0 {
		s = fmt.Sprintf("stuck %d/%d", m.Stuck, m.Runs)
	}
	if u := m.Runs - m.Live - m.Stuck; u > 0 {
		s += fmt.Sprintf(" (%d undecided)", u)
	}
	return s + fmt.Sprintf(", key free at most %.0f%% of the time", 100*m.FreeWhileTrying)
}

// Text is a margin: the smallest breaking magnitude in TTLs.
func (m *Margin) Text() string {
	switch {
	case m == nil:
		return "-"
	case strings.HasPrefix(m.Note, "n/a"):
		return "n/a"
	case !m.Broke:
		return fmt.Sprintf("held to %.0f TTL", m.CapTTL)
	case m.BreaksBelow:
		return fmt.Sprintf("breaks below %.2f TTL", m.AtTTL)
	}
	s := fmt.Sprintf("%.2f TTL", m.AtTTL)
	if !m.Agrees {
		s += " (off theory)"
	}
	return s
}

// CycleText is the uncontended cycle at p50 and p99 beside the floor.
func (c *Cost) CycleText() string {
	switch {
	case c == nil:
		return "-"
	case c.FloorP50 == 0:
		return "not measured: " + c.Error
	}
	return fmt.Sprintf("%s / %s = %.1fx / %.1fx %s", ms(c.CycleP50), ms(c.CycleP99), c.RatioP50, c.RatioP99, c.FloorOp)
}

// FloorText is the floor at p50 and p99.
func (c *Cost) FloorText() string {
	if c == nil || c.FloorP50 == 0 {
		return "-"
	}
	return fmt.Sprintf("%s %s / %s", c.FloorOp, ms(c.FloorP50), ms(c.FloorP99))
}

// ContendedText is the contended throughput and its share of the ceiling.
func (c *Cost) ContendedText() string {
	if c == nil || c.Contended == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/s (%.0f%%)", c.Contended, 100*c.Share)
}

// settingsNote names the server settings a row's lock relies on, if any.
func (r *Row) settingsNote() string {
	if r.Needs.Settings == "" {
		return ""
	}
	return " (server settings: " + r.Needs.Settings + ")"
}
