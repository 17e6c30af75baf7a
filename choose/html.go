package choose

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes the table and every plot as one self-contained page.
func (t *Table) WriteHTML(w io.Writer) {
	fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"><title>lockchaos choose: which lock to use</title><style>
body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;vertical-align:top}th{background:#f4f4f4}
.unsafe{background:#fde0dd}.safe{background:#e5f5e0}.undecided{background:#fff7bc}.disagree{outline:2px solid #d62728}
code{font-size:13px}</style></head><body><h1>Which lock to use</h1>`)
	fmt.Fprintf(w, "<p>%s</p>", html.EscapeString(strings.ReplaceAll(t.provenance(), "`", "")))
	t.writeSafetyHTML(w)
	t.writeLivenessHTML(w)
	fmt.Fprintf(w, "<p>Margins: %s</p><h2>When to use each</h2><ul>", html.EscapeString(t.MarginsFrom))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "<li><code>%s</code>%s: %s</li>", html.EscapeString(r.Name), html.EscapeString(r.settingsNote()),
			html.EscapeString(r.Sentence))
	}
	fmt.Fprint(w, "</ul>")
	for _, p := range t.plots() {
		fmt.Fprintf(w, "<h2>%s</h2>%s", html.EscapeString(p.title), p.svg)
	}
	if len(t.Skipped) > 0 {
		fmt.Fprint(w, "<h2>Not in the table: cells the backend could not run</h2><ul>")
		for _, s := range t.Skipped {
			fmt.Fprintf(w, "<li>%s</li>", html.EscapeString(s))
		}
		fmt.Fprint(w, "</ul>")
	}
	if len(t.Disagreements) > 0 {
		fmt.Fprint(w, "<h2>Disagreements</h2><ul>")
		for _, d := range t.Disagreements {
			fmt.Fprintf(w, "<li><code>%s</code> (seed %d): %s<br><code>%s</code></li>", html.EscapeString(d.Cell), d.Seed,
				html.EscapeString(d.Why), html.EscapeString(d.Rerun))
		}
		fmt.Fprint(w, "</ul>")
	}
	fmt.Fprint(w, "</body></html>\n")
}

// writeSafetyHTML writes the safety table, each cell coloured by what
// its runs found and titled with its scenarios.
func (t *Table) writeSafetyHTML(w io.Writer) {
	fmt.Fprint(w, "<h2>Safety under each fault family</h2><table><tr><th>lock</th><th>servers</th><th>resource</th>")
	for _, f := range t.Families {
		fmt.Fprintf(w, `<th title="%s">%s</th>`, html.EscapeString(f.Doc), html.EscapeString(f.Name))
	}
	fmt.Fprint(w, "</tr>")
	for _, r := range t.Rows {
		fmt.Fprintf(w, `<tr><td title="%s"><code>%s</code></td><td>%s</td><td>%s</td>`, html.EscapeString(r.Needs.Traits),
			html.EscapeString(r.Name), html.EscapeString(r.Needs.Servers), html.EscapeString(r.Needs.Resource))
		for _, f := range t.Families {
			c := r.Cell(f.Name)
			if c == nil {
				fmt.Fprint(w, "<td>-</td>")
				continue
			}
			class := "safe"
			switch {
			case c.Unsafe > 0:
				class = "unsafe"
			case c.Runs == 0:
				class = "undecided"
			}
			if c.Disagree {
				class += " disagree"
			}
			title := "scenarios: " + strings.Join(c.Scenarios, ", ") + "; expected " + string(c.Expect)
			if c.Violation != "" {
				title += "; a violation: " + c.Violation
			}
			fmt.Fprintf(w, `<td class="%s" title="%s">%s</td>`, class, html.EscapeString(title), html.EscapeString(c.Text()))
		}
		fmt.Fprint(w, "</tr>")
	}
	fmt.Fprint(w, "</table>")
}

// writeLivenessHTML writes the liveness and cost table, then the margins.
func (t *Table) writeLivenessHTML(w io.Writer) {
	fmt.Fprint(w, "<h2>Liveness and cost</h2><table><tr><th>lock</th><th>crash</th><th>hang</th><th>cut off</th>"+
		"<th>minority down</th><th>floor p50 / p99</th><th>cycle p50 / p99</th><th>contended</th></tr>")
	for _, r := range t.Rows {
		l := r.Liveness
		fmt.Fprint(w, "<tr>")
		for _, s := range []string{r.Name, l.Crash.Text(), l.Hang.Text(), l.Partition.Text(), l.Minority.Text(),
			r.Cost.FloorText(), r.Cost.CycleText(), r.Cost.ContendedText()} {
			fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(s))
		}
		fmt.Fprint(w, "</tr>")
	}
	fmt.Fprint(w, "</table>")
	if len(t.MarginFamilies) > 0 {
		fmt.Fprint(w, "<h2>Margins</h2><table><tr><th>lock</th>")
		for _, f := range t.MarginFamilies {
			fmt.Fprintf(w, "<th>%s</th>", html.EscapeString(f))
		}
		fmt.Fprint(w, "</tr>")
		for _, r := range t.Rows {
			if len(r.Margins) == 0 {
				continue
			}
			fmt.Fprintf(w, "<tr><td>%s</td>", html.EscapeString(r.Name))
			for _, f := range t.MarginFamilies {
				fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(r.Margin(f).Text()))
			}
			fmt.Fprint(w, "</tr>")
		}
		fmt.Fprint(w, "</table>")
	}
}
