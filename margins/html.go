package margins

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes a self-contained page: the table, each lock's
// sentence, and every family's plot inline (nothing fetched).
func (r *Report) WriteHTML(w io.Writer) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>lockchaos margins</title><style>` +
		`body{font-family:sans-serif;margin:2em;color:#263238}table{border-collapse:collapse}` +
		`td,th{border:1px solid #cfd8dc;padding:4px 8px;text-align:left}.no{color:#c62828;font-weight:bold}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>How far each lock bends before it breaks (TTL %s)</h1>", ttlWords(r.TTL))
	fmt.Fprintf(&b, "<p>%d seeds a probe, resolution %.0f%% of the TTL, searched on %s", r.Seeds, 100*r.Resolution,
		html.EscapeString(r.Backend))
	if r.Confirm != "" {
		fmt.Fprintf(&b, ", confirmed on %s", html.EscapeString(r.Confirm))
	}
	fmt.Fprintf(&b, ", seed %d.</p><ul>", r.Seed)
	for _, s := range r.Sentences() {
		fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(s))
	}
	b.WriteString("</ul><table><tr><th>family</th><th>lock</th><th>breaks at</th><th>holds at</th><th>predicted</th><th>agrees</th>" +
		"<th>real Redis: below / above</th><th>why (the design)</th></tr>")
	for _, m := range r.Margins {
		agree := "yes"
		if !m.Agrees {
			agree = `<span class="no">NO</span>`
		}
		conf := html.EscapeString(m.confirmation())
		if m.Confirmed != nil && !*m.Confirmed {
			conf = `<span class="no">` + conf + `</span>`
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			html.EscapeString(m.Family), html.EscapeString(m.Lock), html.EscapeString(m.breaks()), html.EscapeString(m.holds()),
			html.EscapeString(m.Predicted.text(m.TTL)), agree, conf, html.EscapeString(m.Predicted.Why))
	}
	b.WriteString("</table>")
	if len(r.Recoveries) > 0 || len(r.Tolerances) > 0 {
		b.WriteString("<h2>Liveness</h2><ul>")
		for _, rc := range r.Recoveries {
			fmt.Fprintf(&b, "<li>after a crash: %s</li>", html.EscapeString(rc.String()))
		}
		for _, t := range r.Tolerances {
			fmt.Fprintf(&b, "<li>under a silent minority: %s (predicted: %s)</li>", html.EscapeString(t.String()),
				html.EscapeString(t.predicted()))
		}
		b.WriteString("</ul>")
	}
	seen := map[string]bool{}
	for _, m := range r.Margins {
		if seen[m.Family] || m.Searched == "-" {
			continue
		}
		seen[m.Family] = true
		fmt.Fprintf(&b, "<h2>%s</h2>", html.EscapeString(m.Family))
		var plot strings.Builder
		r.Plot(&plot, m.Family)
		b.WriteString(plot.String())
	}
	b.WriteString("</body></html>\n")
	_, _ = io.WriteString(w, b.String())
}
