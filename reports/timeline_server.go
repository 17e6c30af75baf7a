package reports

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

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
			r.extends[i] = append(r.extends[i], extension{e.Call, e.Deadline()})
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
	fmt.Fprintf(b, `<g class="server-row"><text x="4" y="%d" font-size="11" fill="#37474f">`, y+12)
	fmt.Fprintf(b, `%s<title>%s: its life on the server</title></text>`, esc(shortKey(label)), esc(about))
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
