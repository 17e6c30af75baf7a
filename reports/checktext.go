package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// CheckText is what `lockchaos check` prints of one verified history.
type CheckText struct {
	Name    string // the file
	Summary checker.FileSummary
	Report  *checker.Report
	// Witness are the history's witness events (the first ones, if
	// WitnessMore counts more), for the server's one line.
	Witness     []history.Event
	WitnessMore int
}

// WriteCheckText prints the verdict of one history in plain words: what
// was read, the evidence against its floor, the server's view, the
// incidents, each property and its violations, liveness and statistics.
func WriteCheckText(w io.Writer, c CheckText) {
	sum, rep := c.Summary, c.Report
	hd := sum.Header
	fmt.Fprintf(w, "%s: scenario %s, lock %s, seed %d, %d events over %s",
		c.Name, orDash(hd.Scenario), orDash(rep.Lock), hd.Seed, sum.Events, history.Seconds(sum.End))
	if sum.Chunks > 1 {
		fmt.Fprintf(w, " (checked in %d chunks, the largest %d events)", sum.Chunks, sum.LargestChunk)
	}
	fmt.Fprintln(w)
	if rep.Simulated {
		fmt.Fprintf(w, "SIMULATED: recorded on backend %s (miniredis in virtual time), not on real Redis\n", orDash(rep.Backend))
	}
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	writeEvidenceText(w, rep)
	fmt.Fprintln(w, c.serverLine())
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(w, "incidents: %d\n", len(rep.Incidents))
		for i, in := range rep.Incidents {
			fmt.Fprintf(w, "  %d. %s to %s, %d violation(s) of %s: %s\n", i+1, history.Seconds(in.Start), history.Seconds(in.End),
				in.Violations, strings.Join(in.Properties, ", "), in.Cause)
		}
	}
	writeResultsText(w, rep.Results)
	writeLivenessText(w, rep.Liveness, hd.TTL)
	writeStatsText(w, rep)
}

// writeEvidenceText shows the evidence and what a pass must show: a
// caught cell needs none, and only a group that passed is held to its
// shortfalls. Then each judged window.
func writeEvidenceText(w io.Writer, rep *checker.Report) {
	ev := rep.Evidence
	fmt.Fprintf(w, "evidence: %s", ev.Summary())
	if ev.Floor == nil {
		fmt.Fprint(w, " (no floor recorded)")
	}
	fmt.Fprintln(w)
	if le := ev.LeaseEnds(); le != "" {
		fmt.Fprintf(w, "  %s\n", le)
	}
	proof := ev.Against(rep.Results)
	if proof.Sentence != "" {
		fmt.Fprintf(w, "  %s\n", proof.Sentence)
	}
	for _, why := range proof.Short {
		fmt.Fprintf(w, "  inconclusive: %s\n", why)
	}
	for _, m := range ev.Moments {
		mark := "-"
		if m.Exercised {
			mark = "+"
		}
		lease := ""
		switch m.Lease {
		case history.LeaseObserved:
			lease = " [lease end observed]"
		case history.LeaseAssumed:
			lease = " [lease end assumed from the TTL]"
		}
		fmt.Fprintf(w, "  %s %s (op %d)%s: %s\n", mark, m.Fault, m.Window, lease, m.Detail)
	}
}

// serverLine is the server's summary in one line; past the witness
// events kept, it says it read the first ones only.
func (c CheckText) serverLine() string {
	read := c.Summary.End
	if c.WitnessMore > 0 {
		read = c.Witness[len(c.Witness)-1].Call
	}
	line := SummarizeServer(c.Witness, read).Line(read)
	if c.WitnessMore > 0 {
		line += fmt.Sprintf(" (of the first %d witness events, to %s; %d more not read)", len(c.Witness),
			history.Seconds(read), c.WitnessMore)
	}
	return line
}

// writeResultsText shows each property's status and its violations.
func writeResultsText(w io.Writer, results []checker.Result) {
	for _, r := range results {
		decisive := ""
		if !r.Decisive {
			decisive = " (not decisive)"
		}
		if r.Property.Group() == checker.GroupLiveness {
			decisive = fmt.Sprintf(", %d judged", r.Judged) + decisive
		}
		fmt.Fprintf(w, "  %-22s %-10s %d violation(s)%s\n", r.Property, r.Shown(), r.ViolationCount, decisive)
		if r.Note != "" {
			fmt.Fprintf(w, "      note: %s\n", r.Note)
		}
		for _, v := range r.Violations {
			fmt.Fprintf(w, "      - %s\n", v.Summary)
		}
		if r.ViolationCount > len(r.Violations) {
			fmt.Fprintf(w, "      ... and %d more\n", r.ViolationCount-len(r.Violations))
		}
	}
}

func writeStatsText(w io.Writer, rep *checker.Report) {
	ms := func(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }
	s := rep.Stats
	fmt.Fprintf(w, "stats: %d acquired, %d refused, %d indefinite; %d cycles, %s; acquire p50 %s p99 %s; longest free while trying %s",
		s.AcquireOK, s.AcquireRefused, s.AcquireIndefinite, s.Cycles, CycleRate(s.Cycles, s.Duration),
		ms(s.AcquireP50), ms(s.AcquireP99), ms(s.LongestFree))
	if s.Abandoned > 0 {
		fmt.Fprintf(w, "; %d lease(s) abandoned", s.Abandoned)
	}
	if s.FirstViolation >= 0 {
		fmt.Fprintf(w, "; first violation at %s", history.Seconds(s.FirstViolation))
	}
	fmt.Fprintln(w)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}
