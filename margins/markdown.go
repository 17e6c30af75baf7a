package margins

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockchaos/lockchaos/internal/splice"
)

// WriteMarkdown writes the tables the README embeds: the boundaries as a
// matrix (a row per family, a column per lock), each marked where it
// disagrees with its prediction or with real Redis, then the liveness
// margins.
func (r *Report) WriteMarkdown(w io.Writer) {
	var locks, families []string
	cells := map[[2]string]Margin{}
	for _, m := range r.Margins {
		if len(families) == 0 || families[len(families)-1] != m.Family {
			families = append(families, m.Family)
		}
		if _, seen := cells[[2]string{"", m.Lock}]; !seen {
			cells[[2]string{"", m.Lock}] = m
			locks = append(locks, m.Lock)
		}
		cells[[2]string{m.Family, m.Lock}] = m
	}
	fmt.Fprintf(w, "| breaks under (TTL %s) | %s |\n|---|%s\n", ttlWords(r.TTL), strings.Join(locks, " | "),
		strings.Repeat("---|", len(locks)))
	for _, f := range families {
		row := make([]string, 0, len(locks))
		for _, l := range locks {
			m, ok := cells[[2]string{f, l}]
			if !ok {
				row = append(row, "")
				continue
			}
			row = append(row, m.cell())
		}
		fmt.Fprintf(w, "| %s | %s |\n", f, strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\n_Each boundary agrees with the one its lock's design predicts (within the resolution) and, where "+
		"confirmed, with real Redis just below and just above it, unless marked; the detail and the reasons are in margins.md._\n")
	r.writeLivenessMarkdown(w)
}

// cell is a margin in the matrix: its boundary, and what disagrees.
func (m Margin) cell() string {
	var c string
	switch {
	case m.NotApplicable:
		return "n/a"
	case m.Searched == "-":
		return "not in the simulation"
	case !m.Broke && m.BreaksBelow:
		c = "never"
	case !m.Broke:
		c = fmt.Sprintf("never (to %.0fx)", float64(m.Cap)/float64(m.TTL))
	case m.BreaksBelow:
		c = fmt.Sprintf("%s (%.2fx) or less", ttlWords(m.At), float64(m.At)/float64(m.TTL))
	default:
		c = fmt.Sprintf("%s (%.2fx)", ttlWords(m.At), float64(m.At)/float64(m.TTL))
	}
	if m.Searched != "sim" {
		c += " on " + m.Searched
	}
	if !m.Agrees {
		c += fmt.Sprintf(" **theory: %s**", m.Predicted.text(m.TTL))
	}
	if m.Confirmed != nil && !*m.Confirmed {
		c += " **real Redis: " + m.confirmation() + "**"
	}
	return c
}

// WriteMarkdownDetail writes every margin as a row: the boundary, the
// prediction and why, and the confirmation.
func (r *Report) WriteMarkdownDetail(w io.Writer) {
	fmt.Fprintf(w, "| family | lock | breaks at (TTL %s) | predicted | agrees | real Redis: below / above | why |\n"+
		"|---|---|---|---|---|---|---|\n", ttlWords(r.TTL))
	for _, m := range r.Margins {
		why := m.Predicted.Why
		if m.Note != "" {
			why += " (" + m.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Family, m.Lock, m.breaks(), m.Predicted.text(m.TTL),
			yesNo(m.Agrees), m.confirmation(), strings.ReplaceAll(why, "|", "/"))
	}
}

// writeLivenessMarkdown writes the liveness margins' tables.
func (r *Report) writeLivenessMarkdown(w io.Writer) {
	if len(r.Recoveries) > 0 {
		fmt.Fprint(w, "\n| lock | TTL | after a crash, key freed in (median / max) | stuck | predicted at most | agrees |\n"+
			"|---|---|---|---|---|---|\n")
		for _, rc := range r.Recoveries {
			pred := "never freed"
			if rc.Predicted > 0 {
				pred = ttlWords(rc.Predicted)
			}
			took := "-"
			if rc.Median > 0 {
				took = fmt.Sprintf("%s / %s (%.2fx TTL)", ttlWords(rc.Median), ttlWords(rc.Max), float64(rc.Max)/float64(rc.TTL))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d of %d | %s | %s |\n", rc.Lock, ttlWords(rc.TTL), took, rc.Stuck, rc.Judged, pred,
				yesNo(rc.Agrees))
		}
	}
	if len(r.Tolerances) > 0 {
		fmt.Fprint(w, "\n| lock | TTL | node timeout | under a silent minority, a free key waited (median / longest) | stuck | "+
			"predicted | agrees |\n|---|---|---|---|---|---|---|\n")
		for _, t := range r.Tolerances {
			waited := "-"
			if t.Waits > 0 {
				waited = fmt.Sprintf("%s / %s (%.1fx / %.1fx the node timeout); free %.0f%% of the time", ttlWords(t.Median),
					ttlWords(t.Longest), t.rounds(t.Median), t.rounds(t.Longest), 100*t.FreeShare)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s |\n", t.Lock, ttlWords(t.TTL), ttlWords(t.NodeTimeout), waited,
				t.Stuck, t.predicted(), yesNo(t.Agrees))
		}
	}
}

// The markers between which WriteMarkdownInto writes the table.
const (
	TableStart = "<!-- lockchaos:margins -->"
	TableEnd   = "<!-- /lockchaos:margins -->"
)

// WriteMarkdownInto replaces the table between TableStart and TableEnd in
// the file at path (the README embeds the built-in locks' margins).
func (r *Report) WriteMarkdownInto(path string) error {
	var t strings.Builder
	r.WriteMarkdown(&t)
	fmt.Fprintf(&t, "\n_TTL %s, %d seeds a probe, resolution %.0f%% of the TTL, searched on %s", ttlWords(r.TTL), r.Seeds,
		100*r.Resolution, r.Backend)
	if r.Confirm != "" {
		fmt.Fprintf(&t, ", confirmed on %s", r.Confirm)
	}
	fmt.Fprintf(&t, " (`make margins-table`, seed %d)._\n", r.Seed)
	return splice.Into(path, TableStart, TableEnd, t.String())
}

// CheckMarkdownFile says whether WriteMarkdownInto can write into path:
// a file with both markers, which this process may write. A search
// checks it first, so its end does not fail on a missing file.
func CheckMarkdownFile(path string) error {
	return splice.Check(path, TableStart, TableEnd)
}
