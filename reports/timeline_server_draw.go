package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Drawing the server's rows: each lease, how it ended, the beliefs that
// outlived theirs.

func drawLeasesExact(b *strings.Builder, r serverRow, from, to int64, x func(int64) float64, y int) {
	for i, l := range r.leases {
		if l.End < from || l.Set > to {
			continue
		}
		x0, x1 := x(max(l.Set, from)), x(min(l.End, to))
		w := math.Max(x1-x0, 1)
		opacity := 0.9
		if l.Found {
			opacity = 0.5
		}
		fmt.Fprintf(b, `<rect class="server-lease %s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%.1f">`+
			`<title>%s</title></rect>`, l.Ended, x0, y+2, w, laneHeight-4, leaseFill, opacity, esc(leaseTitle(l)))
		if text := shortValue(l.Value) + " " + l.Node; w > float64(len([]rune(text)))*5.5+4 {
			fmt.Fprintf(b, `<text class="lease-label" x="%.1f" y="%d" font-size="9" fill="%s" pointer-events="none">%s</text>`,
				x0+2, y+laneHeight-5, leaseText, esc(text))
		}
		for _, ex := range r.extends[i] {
			if ex.at < from || ex.at > to {
				continue
			}
			px := x(ex.at)
			deadline := "no expiry"
			if ex.deadline > 0 {
				deadline = "its deadline " + history.Seconds(ex.deadline)
			}
			fmt.Fprintf(b, `<line class="lease-extend" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#fff" stroke-width="1.5">`+
				`<title>%s gave %s = %s %s at %s</title></line>`,
				px, y+2, px, y+laneHeight-2, esc(l.Node), esc(l.Key), esc(shortValue(l.Value)), esc(deadline), esc(history.Seconds(ex.at)))
		}
		if l.End >= from && l.End <= to {
			drawLeaseEnd(b, l, x(l.End), y)
		}
	}
}

// drawLeasesFolded paints the row's pixel columns a lease covers and
// draws runs of them, with at most one end mark of a kind per column:
// bounded by the width.
func drawLeasesFolded(b *strings.Builder, r serverRow, from, to int64, x func(int64) float64, y int) {
	x0 := int(x(from))
	cols := int(x(to)) - x0
	cover := make([]bool, cols+1)
	col := func(ns int64) int { return min(max(int(x(ns))-x0, 0), cols) }
	type endAt struct {
		col int
		how string
	}
	ends := map[endAt]history.ServerLease{} // the first lease to end of a kind in a column
	for _, l := range r.leases {
		if l.End < from || l.Set > to {
			continue
		}
		for c := col(l.Set); c <= col(l.End); c++ {
			cover[c] = true
		}
		if l.End <= to {
			if k := (endAt{col(l.End), l.Ended}); !seen(ends, k) {
				ends[k] = l
			}
		}
	}
	for c := 0; c <= cols; {
		if !cover[c] {
			c++
			continue
		}
		start := c
		for c <= cols && cover[c] {
			c++
		}
		fmt.Fprintf(b, `<rect class="server-lease" x="%d" y="%d" width="%d" height="%d" fill="%s" fill-opacity="0.9"/>`,
			x0+start, y+2, c-start, laneHeight-4, leaseFill)
	}
	keys := make([]endAt, 0, len(ends))
	for k := range ends {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b endAt) int { return a.col - b.col })
	for _, k := range keys {
		drawLeaseEnd(b, ends[k], float64(x0+k.col), y)
	}
}

func seen[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// drawLeaseEnd marks how a lease ended, at px on the row whose top is y:
// amber ▼ and line, expired (its time ran out on the server); a dark
// bar, deleted (a release, a DEL); a purple ❯, replaced by another
// value; a red ✕, lost (its node lost it) or evicted; an open chevron,
// still live at the end.
func drawLeaseEnd(b *strings.Builder, l history.ServerLease, px float64, y int) {
	title := esc(leaseTitle(l))
	switch l.Ended {
	case history.LeaseExpired:
		fmt.Fprintf(b, `<path class="lease-end expired" d="M%.1f %dv%dM%.1f %dh8l-4 5z" stroke="#e69500" stroke-width="2" `+
			`fill="#e69500"><title>%s</title></path>`, px, y, laneHeight, px-4, y-1, title)
	case history.LeaseDeleted:
		fmt.Fprintf(b, `<rect class="lease-end deleted" x="%.1f" y="%d" width="3" height="%d" fill="#263238"><title>%s</title></rect>`,
			px-1.5, y, laneHeight, title)
	case history.LeaseReplaced:
		fmt.Fprintf(b, `<path class="lease-end replaced" d="M%.1f %dl5 %dl-5 %d" stroke="#8e24aa" stroke-width="2" fill="none">`+
			`<title>%s</title></path>`, px-3, y+2, laneHeight/2-2, laneHeight/2-2, title)
	case history.LeaseLost, history.LeaseEvicted:
		fmt.Fprintf(b, `<path class="lease-end %s" d="M%.1f %dl8 %dM%.1f %dl-8 %d" stroke="#d50000" stroke-width="2.5" `+
			`stroke-linecap="round" fill="none"><title>%s</title></path>`,
			l.Ended, px-4, y+2, laneHeight-4, px+4, y+2, laneHeight-4, title)
	case history.LeaseLive:
		fmt.Fprintf(b, `<path class="lease-end live" d="M%.1f %dl4 %dl-4 %d" stroke="%s" stroke-width="1.5" fill="none">`+
			`<title>%s</title></path>`, px-4, y+2, laneHeight/2-2, laneHeight/2-2, leaseFill, title)
	}
}

// leaseTitle is a lease in words: "order:1 = tokA on node1 from 0.100 s
// to 0.400 s: expired (its deadline); renewed 2 times".
func leaseTitle(l history.ServerLease) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s = %s on %s from %s", l.Key, shortValue(l.Value), l.Node, history.Seconds(l.Set))
	if l.Found {
		s.WriteString(" (found there when the witness connected)")
	}
	fmt.Fprintf(&s, " to %s: ", history.Seconds(l.End))
	switch l.Ended {
	case history.LeaseExpired:
		s.WriteString("expired (its time ran out on the server")
		if l.Removed > l.End {
			fmt.Fprintf(&s, "; removed %s later", history.Span(time.Duration(l.Removed-l.End)))
		}
		s.WriteString(")")
	case history.LeaseDeleted:
		s.WriteString("deleted")
	case history.LeaseReplaced:
		s.WriteString("replaced by another write")
	case history.LeaseEvicted:
		s.WriteString("evicted for memory")
	case history.LeaseLost:
		s.WriteString("lost by its node (it came back without it)")
	case history.LeaseLive:
		s.WriteString("still held at the end")
	default:
		s.WriteString(l.Ended)
	}
	if l.Extended > 0 {
		fmt.Fprintf(&s, "; expiry changed %d time(s)", l.Extended)
	}
	if l.Blind {
		s.WriteString("; the witness lost sight of the node meanwhile: its end is what the witness found back")
	}
	return s.String()
}

// shortValue fits a lease's value into a bar: values are tokens, often
// long (a UUID); the tooltip that shows it shortened says whose it is by
// its start.
func shortValue(v string) string {
	const fits = 8
	if r := []rune(v); len(r) > fits {
		return string(r[:fits-1]) + "…"
	}
	return v
}

// maxExactOutlived is how many outlived beliefs a window hatches one by
// one, each with its tooltip; past it they fold into pixel columns.
const maxExactOutlived = 400

// drawOutlived hatches, on a pod's lane, each belief from the moment its
// lease on the server ended to the moment the pod stopped believing.
func (t *timeline) drawOutlived(b *strings.Builder, from, to int64, x func(int64) float64, lane map[int]int, id string) {
	if len(t.outlived) == 0 {
		return
	}
	fmt.Fprintf(b, `<defs><pattern id="%s" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">`+
		`<rect width="3" height="6" fill="#fff" fill-opacity="0.75"/></pattern></defs>`, id)
	visible := 0
	for _, o := range t.outlived {
		if o.to >= from && o.from <= to {
			visible++
		}
	}
	if visible > maxExactOutlived {
		t.drawOutlivedFolded(b, from, to, x, lane, id)
		return
	}
	for _, o := range t.outlived {
		if o.to < from || o.from > to {
			continue
		}
		l, ok := lane[o.client]
		if !ok {
			continue
		}
		y := topMargin + l*(laneHeight+laneGap)
		x0, x1 := x(max(o.from, from)), x(min(o.to, to))
		fmt.Fprintf(b, `<rect class="beyond-lease" x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#%s)" stroke="#b71c1c" `+
			`stroke-width="1.5" stroke-dasharray="3 2"><title>%s</title></rect>`,
			x0, y+1, math.Max(x1-x0, 1.5), laneHeight-2, id, esc(outlivedTitle(o)))
	}
}

func (t *timeline) drawOutlivedFolded(b *strings.Builder, from, to int64, x func(int64) float64, lane map[int]int, id string) {
	x0 := int(x(from))
	cols := int(x(to)) - x0
	cover := make([][]bool, len(t.clients))
	for i := range cover {
		cover[i] = make([]bool, cols+1)
	}
	col := func(ns int64) int { return min(max(int(x(ns))-x0, 0), cols) }
	for _, o := range t.outlived {
		l, ok := lane[o.client]
		if !ok || o.to < from || o.from > to {
			continue
		}
		for c := col(o.from); c <= col(o.to); c++ {
			cover[l][c] = true
		}
	}
	for l, row := range cover {
		y := topMargin + l*(laneHeight+laneGap)
		for c := 0; c <= cols; {
			if !row[c] {
				c++
				continue
			}
			start := c
			for c <= cols && row[c] {
				c++
			}
			fmt.Fprintf(b, `<rect class="beyond-lease" x="%d" y="%d" width="%d" height="%d" fill="url(#%s)" stroke="#b71c1c" `+
				`stroke-width="1"/>`, x0+start, y+1, c-start, laneHeight-2, id)
		}
	}
}

// outlivedTitle: "client 4 still believed it held order:1 until 0.950
// s; its lease on node1 ended at 0.597 s (expired): 353 ms without a
// lease".
func outlivedTitle(o outlived) string {
	return fmt.Sprintf("client %d still believed it held %s until %s; its lease on %s ended at %s (%s): %s without a lease",
		o.client, o.key, history.Seconds(o.to), o.nodes, history.Seconds(o.from), o.ended, history.Span(time.Duration(o.to-o.from)))
}
