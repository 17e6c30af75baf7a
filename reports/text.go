package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/results"
)

// The matrix run prints on stdout when not streaming JSON.

// WriteText writes the run's table for a terminal: a row per cell run in
// the summary's order (the order the cells were planned), its outcome in
// colour when colour is on; with repeats, a row per cell and how often
// each seed reproduced; the totals, the rerun line of every failed cell,
// and the replays of simulated findings on real Redis.
func WriteText(w io.Writer, s *Summary, colour bool) {
	if s.Simulated {
		fmt.Fprintf(w, "\nSIMULATED: backend %s, miniredis in virtual time; these are not results from real Redis "+
			"(replay a finding on real Redis with --backend process)\n", s.Backend)
	}
	writeRuns(w, s, colour)
	if s.Repeat > 1 {
		fmt.Fprintf(w, "\n%-22s %-15s %-14s %-14s %-12s %-22s %s\n",
			"SCENARIO", "LOCK", "EXPECT", "DETECTED", "INCONCLUSIVE", "MEDIAN FIRST VIOLATION", "PER GROUP")
		for _, a := range s.Aggregates {
			med := "-"
			if a.MedianFirstViolation >= 0 {
				med = a.MedianFirstViolation.Round(time.Millisecond).String()
			}
			e := a.Expected()
			fmt.Fprintf(w, "%-22s %-15s %-14s %4d/%-9s %-12d %-22s %s\n", a.Scenario, a.Lock, string(e.Safety)+"/"+string(e.Liveness),
				a.Failed, fmt.Sprintf("%d decisive", a.Decisive), a.Inconclusive, med, a.GroupsText())
		}
		printSameSeed(w, s.Aggregates)
	}
	fmt.Fprintf(w, "\nseed %d, backend %s, time scale %s, %s: %s; %.1f schedules/s\n", s.Seed, backendText(s), s.TimeScaleText(),
		s.Elapsed.Round(time.Millisecond), totalsText(s.Totals), s.SchedulesPerSecond)
	for _, c := range s.Cells {
		if c.Failed() {
			fmt.Fprintf(w, "rerun %s: %s\n", c.Name(), c.Rerun)
		}
	}
	writeReplays(w, s.Replays)
}

// totalsText renders outcome counts for people, worst first:
// "1 regression, 3 met".
func totalsText(t map[string]int) string {
	order := []results.Outcome{results.Regression, results.Missed, results.HarnessError, results.Unknown,
		results.Inconclusive, results.Interrupted, results.Skipped, results.Met}
	var parts []string
	seen := map[string]bool{}
	for _, o := range order {
		if n := t[string(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
		seen[string(o)] = true
	}
	var rest []string
	for k, n := range t {
		if !seen[k] && n > 0 {
			rest = append(rest, fmt.Sprintf("%d %s", n, k))
		}
	}
	sort.Strings(rest)
	parts = append(parts, rest...)
	if len(parts) == 0 {
		return "no cells"
	}
	return strings.Join(parts, ", ")
}

// backendText names the backend, marked when it is a simulation.
func backendText(s *Summary) string {
	if s.Simulated {
		return s.Backend + " (simulated)"
	}
	return s.Backend
}

// printSameSeed shows, for runs that shared a seed (--same-seed), how
// often the seed reproduced its verdict and its evidence counts.
func printSameSeed(w io.Writer, aggs []results.Aggregate) {
	header := false
	for _, a := range aggs {
		if a.SameSeedRuns < 2 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\n%-22s %-15s %-16s %s\n", "SCENARIO", "LOCK", "SAME VERDICT", "SAME VERDICT AND EVIDENCE COUNTS")
			header = true
		}
		fmt.Fprintf(w, "%-22s %-15s %-16s %s\n", a.Scenario, a.Lock, fmt.Sprintf("%d/%d", a.SameVerdict, a.SameSeedRuns),
			fmt.Sprintf("%d/%d", a.SameEvidence, a.SameSeedRuns))
	}
}

// writeReplays shows each replayed finding beside what real Redis did.
func writeReplays(w io.Writer, rs []results.Replay) {
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

// outcomeColours are the terminal's version of the HTML palette: what a
// reader must act on stands out.
var outcomeColours = map[results.Outcome]string{
	results.Met:          "32",   // green
	results.Regression:   "1;31", // bold red
	results.Missed:       "1;33", // bold yellow
	results.HarnessError: "1;31",
	results.Unknown:      "33",
	results.Inconclusive: "35", // magenta
	results.Interrupted:  "2",  // dim
	results.Skipped:      "2",
}

// paint pads text to width (as %-Ns would), then colours it when on.
func paint(on bool, o results.Outcome, text string, width int) string {
	for len(text) < width {
		text += " "
	}
	code, ok := outcomeColours[o]
	if !on || !ok {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// writeRuns writes a row per cell run, in the summary's order; the runs
// an interrupt kept from starting are one line.
func writeRuns(w io.Writer, s *Summary, colour bool) {
	fmt.Fprintf(w, "\n%-22s %-15s %-17s %-20s %-13s %-24s %s\n", "SCENARIO", "LOCK", "SAFETY (EXPECTED)", "LIVENESS (EXPECTED)",
		"OUTCOME", "EVIDENCE", "DETAILS")
	unstarted := 0
	for _, c := range s.Cells {
		if c.NotStarted() {
			unstarted++
			continue
		}
		detail := ""
		switch {
		case c.Error != "":
			detail = c.Error
		case c.Why != "":
			detail = c.Why
		case c.Violations > 0:
			detail = fmt.Sprintf("%d incident(s), %d violation(s), first at %.3f s",
				len(c.Incidents), c.Violations, float64(c.Stats.FirstViolation)/1e9)
		case c.Outcome == results.Inconclusive:
			detail = strings.Join(c.Evidence.Short, "; ")
		default:
			detail = fmt.Sprintf("ran %.1f s", c.Ran.Seconds())
		}
		evidence := "-"
		if c.ShownVerdict() != results.NoVerdict { // "-" for a harness error: never a pass
			evidence = c.Evidence.Summary()
		}
		seed := ""
		if s.Repeat > 1 {
			seed = fmt.Sprintf(" [seed %d]", c.RunSeed)
		}
		fmt.Fprintf(w, "%-22s %-15s %-17s %-20s %s %-24s %s%s\n", c.Scenario, c.Lock, c.SafetyText(), c.LivenessText(),
			paint(colour, c.Outcome, string(c.Outcome), 13), evidence, detail, seed)
	}
	if unstarted > 0 {
		fmt.Fprintf(w, "(%d run(s) not started: interrupted before they ran)\n", unstarted)
	}
}
