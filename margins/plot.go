package margins

import (
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// palette gives each lock of a plot its colour, in the report's order.
var palette = []string{"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#ad1457"}

// The plot's size and margins, in pixels.
const plotWidth, plotHeight, plotLeft, plotRight, plotTop, plotBottom = 760, 360, 60, 200, 30, 50

// Plot writes one family's detection rate against magnitude (in TTLs),
// one curve per lock, each boundary marked: a self-contained SVG.
func (r *Report) Plot(w io.Writer, family string) {
	ms, g := r.familyAxes(family)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`,
		plotWidth, plotHeight)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">%s: share of schedules that broke the lock, by magnitude (TTL %s)</text>`,
		plotLeft, html.EscapeString(family), ttlWords(r.TTL))
	g.axes(&b)
	for i, m := range ms {
		g.curve(&b, i, m)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#546e7a">dashed: boundary found</text>`, plotWidth-plotRight+12, plotTop+len(ms)*18+16)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#546e7a">bars: the predicted interval</text>`,
		plotWidth-plotRight+12, plotTop+len(ms)*18+32)
	b.WriteString(`</svg>`)
	_, _ = io.WriteString(w, b.String())
}

// plotGeometry maps TTLs and rates to pixels.
type plotGeometry struct{ maxX, pw, ph float64 }

func (g plotGeometry) x(ttls float64) float64 { return float64(plotLeft) + ttls/g.maxX*g.pw }
func (g plotGeometry) y(rate float64) float64 { return float64(plotTop) + (1-rate)*g.ph }

// familyAxes picks the family's margins and sizes the axis: it spans
// twice the largest boundary (at least 1.5 TTLs), where the curves rise;
// probes further out (up to the cap) are left off.
func (r *Report) familyAxes(family string) ([]Margin, plotGeometry) {
	var ms []Margin
	maxX := 1.5
	for _, m := range r.Margins {
		if m.Family == family {
			ms = append(ms, m)
			if m.Broke {
				maxX = max(maxX, 2*float64(m.At)/float64(m.TTL))
			}
		}
	}
	return ms, plotGeometry{
		maxX: math.Ceil(maxX*4) / 4,
		pw:   float64(plotWidth - plotLeft - plotRight),
		ph:   float64(plotHeight - plotTop - plotBottom),
	}
}

// axes draws the frame, the rate grid and the magnitude ticks.
func (g plotGeometry) axes(b *strings.Builder) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#90a4ae"/>`, plotLeft, plotTop, g.pw, g.ph)
	for i := 0; i <= 4; i++ {
		rate := float64(i) / 4
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eceff1"/>`,
			plotLeft, g.y(rate), float64(plotLeft)+g.pw, g.y(rate))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`, plotLeft-6, g.y(rate)+4, rate*100)
	}
	for t := 0.0; t <= g.maxX+1e-9; t += tick(g.maxX) {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%gx</text>`, g.x(t), plotHeight-plotBottom+16, t)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%d" text-anchor="middle">magnitude, in TTLs</text>`,
		float64(plotLeft)+g.pw/2, plotHeight-plotBottom+34)
}

// curve draws the i-th lock's probes, its boundary, its predicted
// interval and its legend entry.
func (g plotGeometry) curve(b *strings.Builder, i int, m Margin) {
	c := palette[i%len(palette)]
	var shown []Probe
	for _, p := range m.curve() {
		if float64(p.Magnitude)/float64(m.TTL) <= g.maxX {
			shown = append(shown, p)
		}
	}
	var pts []string
	for _, p := range shown {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", g.x(float64(p.Magnitude)/float64(m.TTL)), g.y(p.Rate())))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), c)
	for _, p := range shown {
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s at %s: %d of %d broke</title></circle>`,
			g.x(float64(p.Magnitude)/float64(m.TTL)), g.y(p.Rate()), c, html.EscapeString(m.Lock), ttlWords(p.Magnitude), p.Broke, p.Runs)
	}
	label := m.Lock + ": never"
	if m.Broke {
		bx := g.x(float64(m.At) / float64(m.TTL))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="%s" stroke-dasharray="4 3"/>`, bx, plotTop, bx,
			float64(plotTop)+g.ph, c)
		label = fmt.Sprintf("%s: %.2fx", m.Lock, float64(m.At)/float64(m.TTL))
	}
	if m.Predicted.Breaks {
		lo, hi := g.x(float64(m.Predicted.Lo)/float64(m.TTL)), g.x(min(float64(m.Predicted.Hi)/float64(m.TTL), g.maxX))
		fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="6" fill="%s" opacity="0.35"><title>predicted: %s</title></rect>`,
			lo, float64(plotTop)+g.ph-6-float64(i)*7, max(hi-lo, 1), c, html.EscapeString(m.Predicted.Why))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`,
		plotWidth-plotRight+12, plotTop+i*18, c, plotWidth-plotRight+30, plotTop+i*18+10, html.EscapeString(label))
}

func tick(maxX float64) float64 {
	switch {
	case maxX <= 1.5:
		return 0.25
	case maxX <= 2:
		return 0.5
	case maxX <= 5:
		return 0.5
	}
	return 1
}

// WriteFiles writes margins.json, margins.md and one SVG per family
// into dir.
func (r *Report) WriteFiles(dir string) ([]string, error) {
	var wrote []string
	// Each file whole or not at all (a rename), never through a link
	// planted in dir; only what was written is listed.
	write := func(name string, fill func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		if err := safefile.WriteAtomic(p, fill); err != nil {
			return err
		}
		wrote = append(wrote, p)
		return nil
	}
	if err := write("margins.json", r.WriteJSON); err != nil {
		return wrote, err
	}
	if err := write("margins.md", func(w io.Writer) error {
		r.WriteMarkdown(w)
		fmt.Fprintln(w)
		r.WriteMarkdownDetail(w)
		return nil
	}); err != nil {
		return wrote, err
	}
	if err := write("margins.html", func(w io.Writer) error { r.WriteHTML(w); return nil }); err != nil {
		return wrote, err
	}
	seen := map[string]bool{}
	for _, m := range r.Margins {
		if !seen[m.Family] {
			seen[m.Family] = true
			fam := m.Family
			if err := write(fam+".svg", func(w io.Writer) error { r.Plot(w, fam); return nil }); err != nil {
				return wrote, err
			}
		}
	}
	return wrote, nil
}
