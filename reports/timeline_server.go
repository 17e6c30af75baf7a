package reports

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// The server on the timeline: under the pods' lanes (and the liveness key
// rows), a row per key and node with the key's life on that server as the
// witness saw it: a bar per value the key held, from the write to its
// end, labelled with the value (shortened) and the node; white ticks
// where its expiry changed (a watchdog's renewals); a mark for how it
// ended (expired, deleted, replaced, evicted, lost; an open end if still
// live); grey where the witness could not see the node. On the pods'
// lanes, a hold whose belief went on after its lease on the server ended
// is hatched from that end: a pause that outlived its lease, in one
// picture. Without witness events nothing is drawn, and the legend says
// the server was not watched.

// serverRow is one key on one node.
type serverRow struct {
	key, node, serverKey string
	leases               []history.ServerLease // by Set
	// extends are each lease's expiry changes: instants and new deadlines.
	extends [][]extension
	blind   []Stretch
	why     string
}

type extension struct{ at, deadline int64 }

// outlived is a hold whose belief outlasted its lease on the server.
type outlived struct {
	client   int
	key      string
	from, to int64 // the lease's end, the belief's
	ended    string
	nodes    string
}

const (
	// maxServerRows is how many key-node rows a timeline draws; past it
	// the legend says how many were left out.
	maxServerRows = 12
	// maxExactLeases is how many leases a row draws one by one in a
	// window, each with its tooltip and label; past it they fold into
	// pixel columns, as holds do.
	maxExactLeases = 400
	// serverHeader is the height of the line that heads the server rows.
	serverHeader = 14
)

// addServer reads the witness events into server rows and finds the
// beliefs that outlived their lease.
func (t *timeline) addServer(h *history.History) {
	var ws []history.Event
	for _, e := range h.Events {
		if e.Kind == history.Witness {
			ws = append(ws, e)
		}
	}
	if len(ws) == 0 {
		return
	}
	t.watched = true
	v := history.ServerViewOf(ws, h.End)
	t.server = summarizeWitness(ws, v, h.End)
	type slot struct{ key, node string }
	rows := map[slot]*serverRow{}
	for _, l := range v.Leases {
		s := slot{l.Key, l.Node}
		if rows[s] == nil {
			rows[s] = &serverRow{key: l.Key, node: l.Node, serverKey: l.ServerKey}
		}
		r := rows[s]
		r.leases = append(r.leases, l)
		r.extends = append(r.extends, nil)
	}
	for _, e := range ws {
		if e.ServerOp() != history.ServerExpire {
			continue
		}
		r := rows[slot{e.Key, e.Node()}]
		if r == nil {
			continue
		}
		// The lease the key held then: the last one written by then.
		i := sort.Search(len(r.leases), func(i int) bool { return r.leases[i].Set > e.Call }) - 1
		if i >= 0 && e.Call <= r.leases[i].End {
			r.extends[i] = append(r.extends[i], extension{e.Call, e.Value})
		}
	}
	nodes := map[string]ServerNode{}
	for _, n := range t.server.Nodes {
		nodes[n.Node] = n
	}
	for _, r := range rows {
		r.blind, r.why = nodes[r.node].Blind, nodes[r.node].Why
		t.serverRows = append(t.serverRows, *r)
	}
	slices.SortFunc(t.serverRows, func(a, b serverRow) int {
		return strings.Compare(a.key+"\x00"+a.node, b.key+"\x00"+b.node)
	})
	if n := len(t.serverRows); n > maxServerRows {
		t.serverMore = n - maxServerRows
		t.serverRows = t.serverRows[:maxServerRows]
	}
	t.outlived = outlivedHolds(v, t.holds, h.Header.LockNodes, t.end)
}

// outlivedHolds finds, for each hold, its lease on the server
// (ServerView.LeaseFor, indexed by value and by key) and keeps those
// whose belief went on after it ended.
func outlivedHolds(v *history.ServerView, holds []checker.Hold, lockNodes int, end int64) []outlived {
	var out []outlived
	for _, h := range holds {
		sh, ok := v.LeaseFor(h, lockNodes)
		if !ok {
			continue
		}
		believed := h.End
		if believed == checker.Forever {
			believed = end
		}
		if sh.Ended == history.LeaseLive || believed <= sh.End {
			continue
		}
		out = append(out, outlived{client: h.Client, key: h.Key, from: sh.End, to: believed, ended: sh.Ended,
			nodes: strings.Join(sh.Nodes, ", ")})
	}
	return out
}

// serverLegend says which of the server's marks a timeline draws.
type serverLegend struct {
	// Watched is false when the history has no witness events.
	Watched                                                  bool
	Expired, Deleted, Replaced, Evicted, Lost, Live, Extends bool
	Found, Blind, Outlived                                   bool
	// More counts the key-node rows not drawn.
	More int
}

func (t *timeline) serverLegend() serverLegend {
	l := serverLegend{Watched: t.watched, More: t.serverMore, Outlived: len(t.outlived) > 0}
	for _, r := range t.serverRows {
		l.Blind = l.Blind || len(r.blind) > 0
		for i, ls := range r.leases {
			l.Extends = l.Extends || len(r.extends[i]) > 0
			l.Found = l.Found || ls.Found
			switch ls.Ended {
			case history.LeaseExpired:
				l.Expired = true
			case history.LeaseDeleted:
				l.Deleted = true
			case history.LeaseReplaced:
				l.Replaced = true
			case history.LeaseEvicted:
				l.Evicted = true
			case history.LeaseLost:
				l.Lost = true
			case history.LeaseLive:
				l.Live = true
			}
		}
	}
	return l
}

// serverHeight is the height the server rows take (0 without any).
func (t *timeline) serverHeight() int {
	if len(t.serverRows) == 0 {
		return 0
	}
	return serverHeader + len(t.serverRows)*(laneHeight+laneGap)
}

// drawServer draws the server rows from top, headed by a line that says
// what they are.
func (t *timeline) drawServer(b *strings.Builder, from, to int64, x func(int64) float64, top, width int, blindID string) {
	if len(t.serverRows) == 0 {
		return
	}
	// Blind stretches are hatched grey over whatever is under them.
	fmt.Fprintf(b, `<defs><pattern id="%s" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">`+
		`<rect width="5" height="5" fill="#e0e0e0" fill-opacity="0.6"/><rect width="2" height="5" fill="#616161" fill-opacity="0.7"/>`+
		`</pattern></defs>`, blindID)
	fmt.Fprintf(b, `<g class="server"><line x1="4" y1="%d" x2="%d" y2="%d" stroke="#b0bec5"/>`+
		`<text x="4" y="%d" font-size="9" fill="#455a64">on the server, as the witness saw it</text>`,
		top+2, width-10, top+2, top+11)
	for i, r := range t.serverRows {
		y := top + serverHeader + i*(laneHeight+laneGap)
		t.drawServerRow(b, r, from, to, x, y, width, blindID)
	}
	b.WriteString(`</g>`)
}

func (t *timeline) drawServerRow(b *strings.Builder, r serverRow, from, to int64, x func(int64) float64, y, width int, blindID string) {
	label, about := r.node, r.key+" on "+r.node
	if t.serverKeys() > 1 {
		label = r.key + "@" + r.node
	}
	if r.serverKey != "" && r.serverKey != r.key {
		about += " (the server names it " + r.serverKey + ")"
	}
	fmt.Fprintf(b, `<g class="server-row"><text x="4" y="%d" font-size="11" fill="#37474f">%s<title>%s: its life on the server</title></text>`,
		y+12, esc(shortKey(label)), esc(about))
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eceff1"/>`, leftMargin, y+laneHeight/2, width-10, y+laneHeight/2)
	visible := 0
	for _, l := range r.leases {
		if l.End >= from && l.Set <= to {
			visible++
		}
	}
	if visible <= maxExactLeases {
		drawLeasesExact(b, r, from, to, x, y)
	} else {
		drawLeasesFolded(b, r, from, to, x, y)
	}
	// Over the bars: a lease's stretch the witness could not see is
	// greyed, not hidden under it.
	for _, s := range r.blind {
		if s.To < from || s.From > to {
			continue
		}
		x0, x1 := x(max(s.From, from)), x(min(s.To, to))
		why := ""
		if r.why != "" {
			why = ": " + r.why
		}
		fmt.Fprintf(b, `<rect class="server-blind" x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#%s)">`+
			`<title>%s not watched from %s to %s%s</title></rect>`,
			x0, y, math.Max(x1-x0, 1), laneHeight, blindID, esc(r.node), esc(history.Seconds(s.From)), esc(history.Seconds(s.To)), esc(why))
	}
	b.WriteString(`</g>`)
}

// serverKeys counts the keys the server rows show.
func (t *timeline) serverKeys() int {
	keys := map[string]bool{}
	for _, r := range t.serverRows {
		keys[r.key] = true
	}
	return len(keys)
}

const (
	leaseFill = "#607d8b"
	leaseText = "#fff"
)

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
