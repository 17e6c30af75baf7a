package choose

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// plot is one SVG figure of the table.
type plot struct {
	file, title, svg string
}

// plots are the table's figures: recovery per lock, cost against the
// floor, margins per family (those with data).
func (t *Table) plots() []plot {
	var out []plot
	if svg := t.recoveryPlot(); svg != "" {
		out = append(out, plot{"recovery.svg", "How long a stopped holder's key stayed taken (each dot a recovery, in TTLs)", svg})
	}
	if svg := t.costPlot(); svg != "" {
		out = append(out, plot{"cost.svg", "A lock cycle over its service's bare round trip (bar: p50, tick: p99; log scale)", svg})
	}
	if svg := t.marginsPlot(); svg != "" {
		out = append(out, plot{"margins.svg", "The smallest breaking magnitude per family, in TTLs", svg})
	}
	return out
}

const (
	plotLeft  = 230 // room for a row's name
	plotWidth = 560
	rowHeight = 22
)

// frame opens an SVG of h rows' height with an x axis of ticks.
func frame(b *strings.Builder, rows int, ticks []float64, x func(float64) float64, label string) int {
	h := 40 + rows*rowHeight + 30
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`,
		plotLeft+plotWidth+40, h)
	axisY := 30 + rows*rowHeight
	for _, v := range ticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="25" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%g</text>`,
			x(v), x(v), axisY, x(v), axisY+14, v)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, plotLeft+plotWidth/2, axisY+28, html.EscapeString(label))
	return h
}

func rowLabel(b *strings.Builder, i int, name string) float64 {
	y := float64(30 + i*rowHeight + rowHeight/2)
	fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, plotLeft-8, y, html.EscapeString(name))
	return y
}

// recoveryPlot draws every judged recovery of every row, by cause.
func (t *Table) recoveryPlot() string {
	var rows []*Row
	top := 3.0
	for _, r := range t.Rows {
		l := r.Liveness
		if l.Crash.N+l.Hang.N+l.Partition.N == 0 {
			continue
		}
		rows = append(rows, r)
		for _, rc := range []Recovery{l.Crash, l.Hang, l.Partition} {
			if rc.N > 0 {
				top = max(top, rc.MaxTTL)
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	top = math.Ceil(math.Min(top, 20))
	x := func(v float64) float64 { return plotLeft + math.Min(v, top)/top*plotWidth }
	var b strings.Builder
	frame(&b, len(rows), ticks(top), x, "TTLs until another pod held the key (crash: blue, hang: orange, cut off: purple)")
	colours := []string{"#1f77b4", "#ff7f0e", "#9467bd"}
	for i, r := range rows {
		y := rowLabel(&b, i, r.Name)
		for j, rc := range []Recovery{r.Liveness.Crash, r.Liveness.Hang, r.Liveness.Partition} {
			for _, v := range rc.AllTTL {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s" fill-opacity="0.6"/>`, x(v), y-5+float64(j)*5, colours[j])
			}
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// costPlot draws each row's cycle over its floor, on a log scale.
func (t *Table) costPlot() string {
	var rows []*Row
	top := 10.0
	for _, r := range t.Rows {
		if c := r.Cost; c != nil && c.FloorP50 > 0 {
			rows = append(rows, r)
			top = max(top, c.RatioP99, c.RatioP50)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	top = math.Pow(10, math.Ceil(math.Log10(top)))
	x := func(v float64) float64 { return plotLeft + math.Log10(math.Max(v, 1))/math.Log10(top)*plotWidth }
	var tk []float64
	for v := 1.0; v <= top; v *= 10 {
		tk = append(tk, v)
		if v*3 < top {
			tk = append(tk, v*3)
		}
	}
	var b strings.Builder
	frame(&b, len(rows), tk, x, "cycle / bare round trip (1: the floor itself)")
	for i, r := range rows {
		y := rowLabel(&b, i, r.Name)
		c := r.Cost
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%.1f" height="12" fill="#4c78a8"/>`, plotLeft, y-6, x(c.RatioP50)-plotLeft)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e45756" stroke-width="2"/>`, x(c.RatioP99), y-8,
			x(c.RatioP99), y+8)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%.1fx %s</text>`, x(max(c.RatioP99, c.RatioP50))+6, y,
			c.RatioP50, html.EscapeString(c.FloorOp))
	}
	b.WriteString("</svg>")
	return b.String()
}

// marginsPlot draws each row's breaking magnitude per family, a panel
// of dots per family.
func (t *Table) marginsPlot() string {
	var rows []*Row
	top := 1.0
	for _, r := range t.Rows {
		if len(r.Margins) > 0 {
			rows = append(rows, r)
			for _, m := range r.Margins {
				top = max(top, m.AtTTL, m.CapTTL)
			}
		}
	}
	if len(rows) == 0 || len(t.MarginFamilies) == 0 {
		return ""
	}
	top = math.Ceil(top)
	x := func(v float64) float64 { return plotLeft + math.Min(v, top)/top*plotWidth }
	var b strings.Builder
	frame(&b, len(rows), ticks(top), x, "TTLs: smallest breaking magnitude (hollow: held to the cap)")
	shapes := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}
	for i, r := range rows {
		y := rowLabel(&b, i, r.Name)
		for j, f := range t.MarginFamilies {
			m := r.Margin(f)
			if m == nil || strings.HasPrefix(m.Note, "n/a") {
				continue
			}
			col := shapes[j%len(shapes)]
			v, fill := m.AtTTL, col
			if !m.Broke {
				v, fill = m.CapTTL, "none"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s"><title>%s: %s</title></circle>`,
				x(v), y, fill, col, html.EscapeString(f), html.EscapeString(m.Text()))
		}
	}
	for j, f := range t.MarginFamilies {
		fmt.Fprintf(&b, `<circle cx="%d" cy="12" r="4" fill="%s"/><text x="%d" y="15">%s</text>`, plotLeft+j*110, shapes[j%len(shapes)],
			plotLeft+j*110+8, html.EscapeString(f))
	}
	b.WriteString("</svg>")
	return b.String()
}

// ticks are a linear axis's ticks from 0 to top.
func ticks(top float64) []float64 {
	step := math.Max(1, math.Ceil(top/10))
	var out []float64
	for v := 0.0; v <= top+1e-9; v += step {
		out = append(out, v)
	}
	return out
}
