package choose

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// holderSide are the families that strike only the holder (its timing,
// its link, its life): a lock broken by these alone keeps exclusion while
// every holder is prompt and alive, which is an efficiency lock's
// bargain; one broken by a server fault is not even that.
var holderSide = map[string]bool{string(faults.FamilySlowHolder): true, string(faults.FamilyPause): true,
	string(faults.FamilyLateReply): true, string(faults.FamilyHolderCut): true, string(faults.FamilyHolderCrash): true,
	string(faults.FamilyHolderHang): true}

// sentence says when to use the row's lock and what it costs, from its
// figures, its expectations and its traits alone: the same rule for every
// row, so a user's lock reads like a built-in one.
func sentence(row *Row, spec lockimpl.Spec) string {
	var broke, serverBroke, allowed []string
	families, runs := 0, 0
	for _, c := range row.Safety {
		families++
		runs += c.Runs
		switch {
		case c.Unsafe > 0:
			broke = append(broke, fmt.Sprintf("%s (%d/%d)", c.Family, c.Unsafe, c.Runs))
			if !holderSide[c.Family] {
				serverBroke = append(serverBroke, c.Family)
			}
		case c.Expect != results.Safe && c.Runs > 0:
			allowed = append(allowed, c.Family)
		}
	}
	var s []string
	switch {
	case spec.Nodes == 0:
		s = append(s, "No exclusion across processes at all: a teaching row, never a lock between pods")
	case row.Verdict == VerdictSafe:
		s = append(s, fmt.Sprintf("Kept mutual exclusion in every run (%d famil%s, %d runs), as its design says it must",
			families, plural(families, "y", "ies"), runs)+useWhenSafe(row))
	case row.Verdict == VerdictUndecided && len(broke) == 0:
		s = append(s, "No violation found, but some family decided nothing (too little evidence): no verdict")
	case len(broke) == 0 && row.User:
		s = append(s, fmt.Sprintf("No violation in %d runs of %d famil%s, but nothing says what it must do (no "+
			"expectations: give them in a scenarios file), so the runs alone cannot show it safe", runs, families,
			plural(families, "y", "ies")))
	case len(broke) == 0:
		s = append(s, fmt.Sprintf("No violation in %d runs, but its design allows one under %s: not for billing "+
			"unless those faults cannot happen to you", runs, strings.Join(allowed, ", ")))
	case len(serverBroke) == 0:
		s = append(s, fmt.Sprintf("Unsafe under %s: for efficiency only (a duplicate run must be harmless), kept "+
			"while every holder is prompt", join(broke)))
	default:
		s = append(s, fmt.Sprintf("Unsafe under %s, a server fault among them (%s): only where a duplicate is "+
			"harmless", join(broke), strings.Join(serverBroke, ", ")))
	}
	if l := livenessWords(row); l != "" {
		s = append(s, l)
	}
	if c := costWords(row.Cost); c != "" {
		s = append(s, c)
	}
	return strings.Join(s, ". ") + "."
}

// useWhenSafe is what a safe lock asks of the resource.
func useWhenSafe(row *Row) string {
	switch row.Needs.Resource {
	case "checks a fence":
		return ": fit for billing, if the resource checks the lock's fence on every write"
	case "in the lock's transaction":
		return ": fit for billing when the resource lives in the lock's database, written in its transaction"
	}
	return ": fit for billing against the faults in this table"
}

// livenessWords says whether a stopped holder's key comes free, and how
// soon.
func livenessWords(row *Row) string {
	var stuck []string
	for _, c := range row.Safety {
		if c.Stuck > 0 {
			stuck = append(stuck, fmt.Sprintf("%s (%d/%d)", c.Family, c.Stuck, c.LivenessRuns))
		}
	}
	if len(stuck) > 0 {
		return "Stuck: a key stayed taken past its bound under " + join(stuck)
	}
	if c := row.Liveness.Crash; len(c.All) > 0 {
		return fmt.Sprintf("A crashed holder's key came free in %.1f TTL (median; at most %.1f)", c.MedianTTL, c.MaxTTL)
	}
	return ""
}

// costWords is the cost beside the floor.
func costWords(c *Cost) string {
	if c == nil || c.Error != "" || c.FloorP50 == 0 {
		return ""
	}
	s := fmt.Sprintf("A cycle costs %.1fx a bare %s (%s at p50)", c.RatioP50, c.FloorOp, ms(c.CycleP50))
	if c.Contended > 0 {
		s += fmt.Sprintf("; 8 pods on one key: %.0f cycles/s, %.0f%% of what 2 ms sections allow", c.Contended, 100*c.Share)
	}
	return s
}

func join(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
