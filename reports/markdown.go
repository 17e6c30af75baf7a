package reports

import (
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/internal/splice"
	"github.com/lockchaos/lockchaos/results"
)

// Markers around a generated table in a Markdown file: WriteMarkdownInto
// replaces what lies between them and nothing else.
const (
	TableStart = "<!-- lockchaos:table -->"
	TableEnd   = "<!-- /lockchaos:table -->"
)

// ErrNoMarkers is returned when a file lacks the table markers (the
// same error as margins': one splice writes both tables).
var ErrNoMarkers = splice.ErrNoMarkers

// Markdown renders a run as a table, a row per lock and a column per
// scenario, each cell its expectation and how many runs found a decisive
// violation ("fails 10/10"), plus the runs that could not say
// (inconclusive, unknown, errors): which lock survives which fault, with
// the numbers behind it and the command that produced them. A scenario in
// which some cell judged liveness, or expected other than live, gets a
// liveness column beside it ("stuck 3/3"): safety and liveness side by
// side.
func Markdown(s *Summary) string {
	aggs := s.Aggregates
	if len(aggs) == 0 {
		aggs = results.Aggregates(s.Cells)
	}
	scens, locks := Order(s)
	traits := map[string]string{}
	for _, c := range s.Cells {
		if c.LockTraits != "" {
			traits[c.Lock] = c.LockTraits
		}
	}
	byCell := map[[2]string]results.Aggregate{}
	liveness := map[string]bool{} // scenarios with a liveness column
	for _, a := range aggs {
		byCell[[2]string{a.Lock, a.Scenario}] = a
		liveness[a.Scenario] = liveness[a.Scenario] || a.LivenessJudged > 0 || a.Expected().Liveness != results.Live
	}
	var b strings.Builder
	runs := max(s.Repeat, 1)
	fmt.Fprintf(&b, "Generated from `%s` (%s backend, seed %d, %d run(s) per cell, time scale %s, %s, lockchaos %s). ",
		s.Command, s.Backend, s.Seed, runs, s.TimeScaleText(), s.Started.UTC().Format("2006-01-02"), s.Version)
	b.WriteString("\"fails k/n\": k of n runs found a decisive safety violation (runs the harness could not complete are errors, " +
		"not among the n); **unsafe** and safe are the expectations the gate holds each cell to. A scenario's liveness column " +
		"(where liveness was judged or expected other than live): \"stuck k/n\", k of the n runs that judged liveness found " +
		"the lock stuck; **stuck** and live are the liveness expectations.\n\n")
	b.WriteString("| lock |")
	cols := 0
	for _, sc := range scens {
		fmt.Fprintf(&b, " %s |", sc)
		cols++
		if liveness[sc] {
			fmt.Fprintf(&b, " %s: liveness |", sc)
			cols++
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", cols) + "\n")
	for _, l := range locks {
		name := "`" + l + "`"
		if t := traits[l]; t != "" {
			name += " (" + t + ")"
		}
		fmt.Fprintf(&b, "| %s |", name)
		for _, sc := range scens {
			a, ok := byCell[[2]string{l, sc}]
			switch {
			case !ok:
				b.WriteString(" – |")
			default:
				fmt.Fprintf(&b, " %s |", markdownCell(a))
			}
			if liveness[sc] && !ok {
				b.WriteString(" – |")
			} else if liveness[sc] {
				fmt.Fprintf(&b, " %s |", markdownLiveness(a))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func markdownCell(a results.Aggregate) string {
	var parts []string
	e := a.Expected()
	switch e.Safety {
	case results.Unsafe:
		parts = append(parts, "**"+e.SafetyText()+"**")
	case results.Safe:
		parts = append(parts, "safe")
	}
	// A run the harness could not complete has no verdict: it is an
	// error, not one of the n runs that could have failed ("fails 0/1" of
	// a broken run would read as a pass).
	if ran := a.Runs - a.Errors; ran > 0 {
		parts = append(parts, fmt.Sprintf("fails %d/%d", a.SafetyFailed, ran))
	} else {
		parts = append(parts, "no verdict")
	}
	var unsure []string
	if a.SafetyInconclusive > 0 {
		unsure = append(unsure, fmt.Sprintf("%d inconclusive", a.SafetyInconclusive))
	}
	if a.Unknown > 0 {
		unsure = append(unsure, fmt.Sprintf("%d unknown", a.Unknown))
	}
	if a.Errors > 0 {
		unsure = append(unsure, fmt.Sprintf("%d errors", a.Errors))
	}
	s := strings.Join(parts, ", ")
	if len(unsure) > 0 {
		s += " (" + strings.Join(unsure, ", ") + ")"
	}
	if a.SafetyMet < a.Runs && e.Safety != results.Either {
		s += fmt.Sprintf(", met %d/%d", a.SafetyMet, a.Runs)
	}
	return s
}

// markdownLiveness is a cell's liveness column: its expectation, how many
// of the runs that judged liveness found the lock stuck, how many met.
func markdownLiveness(a results.Aggregate) string {
	e := a.Expected().Liveness
	var parts []string
	switch e {
	case results.Stuck:
		parts = append(parts, "**stuck**")
	case results.Live:
		parts = append(parts, "live")
	}
	ran := a.Runs - a.Errors
	switch {
	case a.LivenessJudged == 0:
		parts = append(parts, "not judged")
	case a.LivenessJudged < ran:
		parts = append(parts, fmt.Sprintf("stuck %d/%d (%d not judged)", a.LivenessFailed, a.LivenessJudged, ran-a.LivenessJudged))
	default:
		parts = append(parts, fmt.Sprintf("stuck %d/%d", a.LivenessFailed, a.LivenessJudged))
	}
	s := strings.Join(parts, ", ")
	if (a.LivenessJudged > 0 || e == results.Stuck) && a.LivenessMet < a.Runs && e != results.Either {
		s += fmt.Sprintf(", met %d/%d", a.LivenessMet, a.Runs)
	}
	return s
}

// WriteMarkdownInto replaces the table between TableStart and TableEnd in
// path with table.
func WriteMarkdownInto(path, table string) error {
	return splice.Into(path, TableStart, TableEnd, table)
}
