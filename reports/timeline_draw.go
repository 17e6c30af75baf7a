package reports

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Drawing the timeline: the holds (each one, or folded into pixel
// columns), the marks, the fault bands and the axis.

// The lanes and margins, in pixels.
const (
	laneHeight = 16
	laneGap    = 6
	leftMargin = 72
	topMargin  = 22
	axisHeight = 26
)

// svg draws the timeline between from and to (ns) at the given width. The
// output stays bounded whatever the history's size: in a wide window holds
// and marks are folded into pixel columns; only a narrow window (few holds)
// draws each hold with its own tooltip.
func (t *timeline) svg(from, to int64, width int) template.HTML {
	if to <= from {
		to = from + 1
	}
	plot := width - leftMargin - 10
	x := func(ns int64) float64 {
		return float64(leftMargin) + float64(ns-from)*float64(plot)/float64(to-from)
	}
	lane := map[int]int{}
	for i, c := range t.clients {
		lane[c] = i
	}
	t.svgs++ // ids in this drawing end in it: unique on the page
	rows := len(t.clients) + len(t.keyRows)
	height := topMargin + rows*(laneHeight+laneGap) + t.serverHeight() + axisHeight
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" `+
		`viewBox="0 0 %d %d" role="img" aria-label="timeline from %s to %s">`,
		width, height, width, height, esc(history.Seconds(from)), esc(history.Seconds(to)))
	b.WriteString(`<rect x="0" y="0" width="100%" height="100%" fill="#fff"/>`)
	keysBottom := topMargin + rows*(laneHeight+laneGap)
	lanesBottom := keysBottom + t.serverHeight()
	// Fault windows, shaded across every lane, labelled on top.
	for _, f := range t.faults {
		if f.end < from || f.start > to {
			continue
		}
		x0, x1 := x(max(f.start, from)), x(min(f.end, to))
		fmt.Fprintf(&b, `<g class="fault"><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#f5a623" `+
			`fill-opacity="0.18" stroke="#f5a623" stroke-opacity="0.5"><title>%s %s to %s: %s</title></rect>`,
			x0, topMargin-16, math.Max(x1-x0, 1), lanesBottom-topMargin+16,
			esc(f.name), esc(history.Seconds(f.start)), esc(history.Seconds(f.end)), esc(f.targets))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" fill="#a0620a">%s</text></g>`, x0+2, topMargin-6, esc(f.label))
	}
	// Lanes.
	for i, c := range t.clients {
		y := topMargin + i*(laneHeight+laneGap)
		fmt.Fprintf(&b, `<text x="4" y="%d" font-size="11" fill="#333">client %d</text>`, y+12, c)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`, leftMargin, y+laneHeight/2, width-10, y+laneHeight/2)
	}
	t.drawKeyRows(&b, from, to, x, topMargin+len(t.clients)*(laneHeight+laneGap), width)
	visible := 0
	for _, h := range t.holds {
		if h.Start <= to && h.End >= from {
			visible++
		}
	}
	t.drawServer(&b, from, to, x, keysBottom, width, fmt.Sprintf("server-blind-%d", t.svgs))
	if visible <= 400 {
		t.drawHoldsExact(&b, from, to, x, lane)
	} else {
		t.drawHoldsFolded(&b, from, to, plot, lane)
	}
	t.drawOutlived(&b, from, to, x, lane, fmt.Sprintf("beyond-lease-%d", t.svgs))
	t.drawMarks(&b, from, to, x, lane)
	t.drawAxis(&b, from, to, x, lanesBottom, width)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text inside went through esc
}

func (t *timeline) holdEnd(h checker.Hold) int64 {
	if h.End == checker.Forever {
		return t.end
	}
	return h.End
}

func (t *timeline) drawHoldsExact(b *strings.Builder, from, to int64, x func(int64) float64, lane map[int]int) {
	for _, h := range t.holds {
		end := t.holdEnd(h)
		if end < from || h.Start > to {
			continue
		}
		y := topMargin + lane[h.Client]*(laneHeight+laneGap)
		x0, x1 := x(max(h.Start, from)), x(min(end, to))
		until := history.Seconds(end)
		if h.End == checker.Forever {
			until = "the end of the run"
		}
		fence := ""
		if h.Fence > 0 {
			fence = fmt.Sprintf(", fence %d", h.Fence)
		}
		fmt.Fprintf(b, `<rect class="hold" x="%.1f" y="%d" width="%.1f" height="%d" fill="#4a90d9">`+
			`<title>client %d held %s from %s to %s%s</title></rect>`,
			x0, y+2, math.Max(x1-x0, 1), laneHeight-4, h.Client, esc(h.Key), esc(history.Seconds(h.Start)), esc(until), esc(fence))
	}
	for _, o := range t.contended {
		end := o.End
		if end == checker.Forever {
			end = t.end
		}
		if end < from || o.Start > to {
			continue
		}
		x0, x1 := x(max(o.Start, from)), x(min(end, to))
		y := topMargin + lane[o.Client]*(laneHeight+laneGap)
		fmt.Fprintf(b, `<rect class="overlap" x="%.1f" y="%d" width="%.1f" height="%d" fill="#d0021b">`+
			`<title>client %d held %s while another client held it too, from %s (%.1f ms)</title></rect>`,
			x0, y, math.Max(x1-x0, 1.5), laneHeight, o.Client, esc(o.Key), esc(history.Seconds(o.Start)), float64(end-o.Start)/1e6)
	}
}

// drawHoldsFolded marks, per lane and pixel column, whether a hold (or an
// overlap) covers it, and draws runs of columns: bounded by the width.
func (t *timeline) drawHoldsFolded(b *strings.Builder, from, to int64, plot int, lane map[int]int) {
	cover := make([][]uint8, len(t.clients))
	for i := range cover {
		cover[i] = make([]uint8, plot+1)
	}
	col := func(ns int64) int {
		c := int(float64(ns-from) * float64(plot) / float64(to-from))
		return min(max(c, 0), plot)
	}
	paint := func(client int, s, e int64, v uint8) {
		if e < from || s > to {
			return
		}
		row := cover[lane[client]]
		for c := col(s); c <= col(e); c++ {
			row[c] = max(row[c], v)
		}
	}
	for _, h := range t.holds {
		paint(h.Client, h.Start, t.holdEnd(h), 1)
	}
	for _, o := range t.contended {
		end := o.End
		if end == checker.Forever {
			end = t.end
		}
		paint(o.Client, o.Start, end, 2)
	}
	for i, row := range cover {
		y := topMargin + i*(laneHeight+laneGap)
		for c := 0; c <= plot; {
			v := row[c]
			if v == 0 {
				c++
				continue
			}
			start := c
			for c <= plot && row[c] == v {
				c++
			}
			fill, cls, h, dy := "#4a90d9", "hold", laneHeight-4, 2
			if v == 2 {
				fill, cls, h, dy = "#d0021b", "overlap", laneHeight, 0
			}
			fmt.Fprintf(b, `<rect class="%s" x="%d" y="%d" width="%d" height="%d" fill="%s"/>`,
				cls, leftMargin+start, y+dy, c-start, h, fill)
		}
	}
}

func (t *timeline) drawMarks(b *strings.Builder, from, to int64, x func(int64) float64, lane map[int]int) {
	// At most one mark of a kind per lane and pixel column.
	type key struct {
		lane, col int
		kind      markKind
	}
	drawn := map[key]bool{}
	for _, m := range t.marks {
		if m.at < from || m.at > to {
			continue
		}
		l, ok := lane[m.client]
		if !ok {
			continue
		}
		px := x(m.at)
		k := key{l, int(px), m.kind}
		if drawn[k] {
			continue
		}
		drawn[k] = true
		y := topMargin + l*(laneHeight+laneGap)
		switch m.kind {
		case markRefused:
			fmt.Fprintf(b, `<line class="refused" x1="%.1f" y1="%d" x2="%.1f" y2="%d" `+
				`stroke="#9b9b9b"><title>%s</title></line>`, px, y+laneHeight-5, px, y+laneHeight, esc(m.title))
		case markIndefinite:
			fmt.Fprintf(b, `<line class="indefinite" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f5a623" `+
				`stroke-width="2"><title>%s</title></line>`, px, y, px, y+laneHeight, esc(m.title))
		case markLostWrite:
			fmt.Fprintf(b, `<circle class="lost-write" cx="%.1f" cy="%d" r="4" fill="#d0021b" `+
				`stroke="#fff"><title>%s</title></circle>`, px, y+laneHeight/2, esc(m.title))
		case markForeignRelease:
			fmt.Fprintf(b, `<text class="foreign-release" x="%.1f" y="%d" font-size="14" font-weight="bold" `+
				`fill="#8b0000" text-anchor="middle">✕<title>%s</title></text>`, px, y+laneHeight-2, esc(m.title))
		case markLostSignal:
			fmt.Fprintf(b, `<text class="lost-signal" x="%.1f" y="%d" font-size="12" fill="#7b1fa2" `+
				`text-anchor="middle">!<title>%s</title></text>`, px, y+laneHeight-3, esc(m.title))
		case markRenewOK, markRenewRefused, markRenewIndefinite:
			drawRenewal(b, m, px, y)
		default:
			drawLiveMark(b, m, px, y)
		}
	}
}

func (t *timeline) drawAxis(b *strings.Builder, from, to int64, x func(int64) float64, y, width int) {
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#666"/>`, leftMargin, y, width-10, y)
	step := niceStep(to - from)
	for tk := (from/step + 1) * step; tk <= to; tk += step {
		px := x(tk)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#666"/><text x="%.1f" y="%d" `+
			`font-size="10" fill="#444" text-anchor="middle">%s</text>`,
			px, y, px, y+4, px, y+16, esc(msLabel(tk)))
	}
	fmt.Fprintf(b, `<text x="4" y="%d" font-size="10" fill="#444">time (ms)</text>`, y+16)
}

// niceStep picks a tick step (1, 2 or 5 times a power of ten, in ns) for
// about eight ticks across span.
func niceStep(span int64) int64 {
	raw := float64(span) / 8
	if raw < 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return int64(m * p)
		}
	}
	return int64(10 * p)
}

func msLabel(ns int64) string {
	ms := float64(ns) / 1e6
	if ms == math.Trunc(ms) {
		return fmt.Sprintf("%.0f", ms)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", ms), "0"), ".")
}

func esc(s string) string { return template.HTMLEscapeString(s) }
