package choose

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the table for a terminal: safety per family, then
// liveness and cost, margins, a sentence per row, and the gate.
func (t *Table) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"LOCK", "SERVERS", "RESOURCE"}
	for _, f := range t.Families {
		head = append(head, strings.ToUpper(f.Name))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range t.Rows {
		line := []string{r.Name, r.Needs.Servers, r.Needs.Resource}
		for _, f := range t.Families {
			c := r.Cell(f.Name)
			if c == nil {
				line = append(line, "-")
				continue
			}
			line = append(line, c.Text())
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	_ = tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tCRASH RECOVERY\tHANG RECOVERY\tCUT-OFF RECOVERY\tMINORITY DOWN\tCYCLE P50 / P99 (x FLOOR)\tCONTENDED")
	for _, r := range t.Rows {
		l := r.Liveness
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, l.Crash.Text(), l.Hang.Text(), l.Partition.Text(),
			l.Minority.Text(), r.Cost.CycleText(), r.Cost.ContendedText())
	}
	_ = tw.Flush()

	if len(t.MarginFamilies) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "MARGINS\t%s\n", strings.ToUpper(strings.Join(t.MarginFamilies, "\t")))
		for _, r := range t.Rows {
			if len(r.Margins) == 0 {
				continue
			}
			line := []string{r.Name}
			for _, f := range t.MarginFamilies {
				line = append(line, r.Margin(f).Text())
			}
			fmt.Fprintln(tw, strings.Join(line, "\t"))
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(w, "\nmargins: %s\n\n", t.MarginsFrom)
	for _, r := range t.Rows {
		fmt.Fprintf(w, "%s%s: %s\n", r.Name, r.settingsNote(), r.Sentence)
	}
	fmt.Fprintln(w)
	t.writeGate(w)
}

// writeGate says whether every cell agreed with its expectation, and
// names each that did not.
func (t *Table) writeGate(w io.Writer) {
	if len(t.Skipped) > 0 {
		fmt.Fprintf(w, "%d cell(s) not in the table: the backend cannot run them (choose.json's skipped says why), "+
			"the first: %s\n", len(t.Skipped), t.Skipped[0])
	}
	for _, d := range t.Disagreements {
		fmt.Fprintf(w, "DISAGREES %s [%s]: %s\n  rerun: %s\n", d.Row, d.Family, d.Why, d.Rerun)
	}
	fmt.Fprintf(w, "%d run(s) in %s (seed %d, %d per cell, backend %s, time scale %.2f): ", t.Runs,
		t.Elapsed.Round(1e9), t.Seed, t.Seeds, t.Backend, t.TimeScale)
	switch holes := t.Holes(); {
	case t.Interrupted:
		fmt.Fprintln(w, "interrupted: the table holds what ran")
	case len(t.Disagreements) > 0:
		fmt.Fprintf(w, "%d disagreement(s) with the locks' expectations\n", len(t.Disagreements))
	case t.Runs == t.Undecided:
		fmt.Fprintln(w, "no run decided anything: the harness could not run the cells (their reports say why)")
	case len(holes) > 0:
		fmt.Fprintf(w, "inconclusive: %d cell(s) decided nothing in any run: %s\n", len(holes), strings.Join(holes, ", "))
	default:
		fmt.Fprintf(w, "every cell agrees with its lock's expectation (%d run(s) undecided)\n", t.Undecided)
	}
}
