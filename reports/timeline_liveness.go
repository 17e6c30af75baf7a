package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Liveness on the timeline: a holder that stopped (a cross where it
// crashed, an hourglass where its worker hung), a crashed pod's restart, a
// diamond where another pod got the key back, and, on a row per key below
// the client lanes, the stretches in which nobody held the key while
// someone tried, shaded darker where they outlasted the recovery bound. A
// reader paged for a job stuck behind a dead pod's lock sees the crash, the
// wait and its end (or that it never ended) in one picture.

// keyRow is a key's row under the client lanes: its stretches and the
// moments the recovery bound passed with the key still taken.
type keyRow struct {
	key       string
	stretches []checker.Stretch
	bounds    []mark // client is unused: the row is the key's
}

// liveLegend says which liveness marks a timeline draws, so the legend
// names only those.
type liveLegend struct {
	Crashed, Abandoned, Restart, Recovered, Late, Stretch, Stuck, Bound bool
}

// Any says whether the timeline draws any liveness mark.
func (l liveLegend) Any() bool {
	return l.Crashed || l.Abandoned || l.Restart || l.Recovered || l.Late || l.Stretch || l.Stuck || l.Bound
}

// abandonMark marks a holder that will never release: crashed or hung.
func abandonMark(e history.Event) mark {
	holding := ""
	if e.Key != "" {
		holding = " holding " + e.Key
	}
	if e.Err == history.Abandoned {
		return mark{client: e.Client, at: e.Call, kind: markAbandoned, title: fmt.Sprintf(
			"client %d hung at %s%s: its worker stopped, its process (and any watchdog) lives on",
			e.Client, history.Seconds(e.Call), holding)}
	}
	return mark{client: e.Client, at: e.Call, kind: markCrashed,
		title: fmt.Sprintf("client %d crashed at %s%s", e.Client, history.Seconds(e.Call), holding)}
}

// restartMark marks a crashed pod's return: a pod-crash window that
// carries a restart delay ends when the pod is back.
func restartMark(e history.Event) (mark, bool) {
	down := e.Hit().Restart
	if down == 0 {
		return mark{}, false
	}
	pod, ok := e.StoppedHolder()
	if !ok {
		return mark{}, false
	}
	return mark{client: pod, at: e.Return, kind: markRestart, title: fmt.Sprintf(
		"client %d restarted at %s as a fresh pod, after %s down", pod, history.Seconds(e.Return), durText(down))}, true
}

// addLiveness takes the checker's liveness figures: a mark per recovery,
// a row per key with its stretches and the bounds that passed.
func (t *timeline) addLiveness(l checker.Liveness) {
	rows := map[string]*keyRow{}
	row := func(key string) *keyRow {
		if rows[key] == nil {
			rows[key] = &keyRow{key: key}
		}
		return rows[key]
	}
	for _, s := range l.Stretches {
		r := row(s.Key)
		r.stretches = append(r.stretches, s)
	}
	for _, rc := range l.Recoveries {
		if rc.Recovered {
			kind := markRecovered
			if rc.Stuck {
				kind = markRecoveredLate
			}
			t.marks = append(t.marks, mark{client: rc.By, at: rc.RecoveredAt, kind: kind, title: recoveryTitle(rc)})
		}
		if rc.Stuck && rc.Key != "" {
			at := rc.At + int64(rc.Bound)
			r := row(rc.Key)
			r.bounds = append(r.bounds, mark{at: at, kind: markBound, title: fmt.Sprintf(
				"%s: %s %s at %s; %s not acquired again by %s, the %s bound", rc.Key, clientWord(rc.Client),
				stopVerb(rc.Cause), history.Seconds(rc.At), rc.Key, history.Seconds(at), durText(rc.Bound))})
		}
	}
	for _, r := range rows {
		t.keyRows = append(t.keyRows, *r)
	}
	sort.Slice(t.keyRows, func(i, j int) bool { return t.keyRows[i].key < t.keyRows[j].key })
}

// recoveryTitle: "client 5 acquired order:1 310 ms after client 3 crashed
// (bound 660 ms)".
func recoveryTitle(rc checker.Recovery) string {
	who := clientWord(rc.Client) + " " + stopVerb(rc.Cause)
	if rc.By == rc.Client {
		who = "it " + stopVerb(rc.Cause)
	}
	late := ""
	if rc.Stuck {
		late = ": past it"
	}
	return fmt.Sprintf("%s acquired %s %s after %s (bound %s%s)", clientWord(rc.By), rc.Key, durText(rc.After), who,
		durText(rc.Bound), late)
}

// legend says which of the liveness marks the timeline draws.
func (t *timeline) legend() liveLegend {
	var l liveLegend
	for _, m := range t.marks {
		switch m.kind {
		case markCrashed:
			l.Crashed = true
		case markAbandoned:
			l.Abandoned = true
		case markRestart:
			l.Restart = true
		case markRecovered:
			l.Recovered = true
		case markRecoveredLate:
			l.Late = true
		}
	}
	for _, r := range t.keyRows {
		l.Bound = l.Bound || len(r.bounds) > 0
		for _, s := range r.stretches {
			l.Stretch = l.Stretch || !s.Stuck
			l.Stuck = l.Stuck || s.Stuck
		}
	}
	return l
}

// drawLiveMark draws a stopped holder, a restart or a recovery on the
// client's lane (y is the lane's top, px the moment).
func drawLiveMark(b *strings.Builder, m mark, px float64, y int) {
	switch m.kind {
	case markCrashed:
		fmt.Fprintf(b, `<path class="crashed" d="M%.1f %dl10 %dM%.1f %dl-10 %d" stroke="#000" stroke-width="2.5" `+
			`stroke-linecap="round" fill="none"><title>%s</title></path>`,
			px-5, y+1, laneHeight-2, px+5, y+1, laneHeight-2, esc(m.title))
	case markAbandoned:
		fmt.Fprintf(b, `<path class="abandoned" d="M%.1f %dh10l-10 %dh10z" fill="#8d6e63" stroke="#3e2723" `+
			`stroke-width="1"><title>%s</title></path>`, px-5, y+1, laneHeight-2, esc(m.title))
	case markRestart:
		fmt.Fprintf(b, `<path class="restart" d="M%.1f %dv%dl9 %dz" fill="#00897b" stroke="#fff" `+
			`stroke-width="0.5"><title>%s</title></path>`, px, y+1, laneHeight-2, -(laneHeight-2)/2, esc(m.title))
	case markRecovered, markRecoveredLate:
		cls, fill := "recovered", "#2e7d32"
		if m.kind == markRecoveredLate {
			cls, fill = "recovered late", "#d55e00"
		}
		fmt.Fprintf(b, `<path class="%s" d="M%.1f %dl6 %dl-6 %dl-6 %dz" fill="%s" stroke="#fff" `+
			`stroke-width="1"><title>%s</title></path>`, cls, px, y, laneHeight/2, laneHeight/2, -laneHeight/2, fill, esc(m.title))
	}
}

// maxExactStretches is how many stretches a window draws one by one, each
// with its tooltip; past it they fold into pixel columns, as holds do.
const maxExactStretches = 400

// drawKeyRows draws each key's row: its label, its stretches (light, dark
// where stuck) and a dashed line where the recovery bound passed with the
// key still taken. top is the first row's top.
func (t *timeline) drawKeyRows(b *strings.Builder, from, to int64, x func(int64) float64, top, width int) {
	for i, r := range t.keyRows {
		y := top + i*(laneHeight+laneGap)
		fmt.Fprintf(b, `<g class="key-row"><text x="4" y="%d" font-size="11" font-style="italic" fill="#880e4f">%s`+
			`<title>key %s: free while someone tried</title></text>`, y+12, esc(shortKey(r.key)), esc(r.key))
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#f3d7e3" stroke-dasharray="3 3"/>`,
			leftMargin, y+laneHeight/2, width-10, y+laneHeight/2)
		visible := 0
		for _, s := range r.stretches {
			if s.End >= from && s.Start <= to {
				visible++
			}
		}
		if visible <= maxExactStretches {
			drawStretchesExact(b, r, from, to, x, y)
		} else {
			drawStretchesFolded(b, r, from, to, x, y)
		}
		for _, m := range r.bounds {
			if m.at < from || m.at > to {
				continue
			}
			px := x(m.at)
			fmt.Fprintf(b, `<line class="bound-passed" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#3b0a1a" `+
				`stroke-width="2" stroke-dasharray="3 2"><title>%s</title></line>`, px, y-2, px, y+laneHeight+2, esc(m.title))
		}
		b.WriteString(`</g>`)
	}
}

func drawStretchesExact(b *strings.Builder, r keyRow, from, to int64, x func(int64) float64, y int) {
	for _, s := range r.stretches {
		if s.End < from || s.Start > to {
			continue
		}
		x0, x1 := x(max(s.Start, from)), x(min(s.End, to))
		cls, opacity, what := "stretch", 0.25, "free while someone tried"
		if s.Stuck {
			cls, opacity, what = "stretch stuck", 0.7, "free while someone tried, past its bound: stuck"
		}
		fmt.Fprintf(b, `<rect class="%s" x="%.1f" y="%d" width="%.1f" height="%d" fill="#c2185b" fill-opacity="%.2f">`+
			`<title>nobody held %s from %s to %s (%s): %s</title></rect>`,
			cls, x0, y+1, math.Max(x1-x0, 1), laneHeight-2, opacity, esc(s.Key), esc(history.Seconds(s.Start)),
			esc(history.Seconds(s.End)), esc(durText(time.Duration(s.End-s.Start))), what)
	}
}

// drawStretchesFolded paints the row's pixel columns (1 free, 2 stuck)
// and draws runs of equal columns: bounded by the width.
func drawStretchesFolded(b *strings.Builder, r keyRow, from, to int64, x func(int64) float64, y int) {
	x0 := int(x(from))
	cols := int(x(to)) - x0
	cover := make([]uint8, cols+1)
	col := func(ns int64) int { return min(max(int(x(ns))-x0, 0), cols) }
	for _, s := range r.stretches {
		if s.End < from || s.Start > to {
			continue
		}
		v := uint8(1)
		if s.Stuck {
			v = 2
		}
		for c := col(s.Start); c <= col(s.End); c++ {
			cover[c] = max(cover[c], v)
		}
	}
	for c := 0; c <= cols; {
		v := cover[c]
		start := c
		for c <= cols && cover[c] == v {
			c++
		}
		if v == 0 {
			continue
		}
		cls, opacity := "stretch", 0.25
		if v == 2 {
			cls, opacity = "stretch stuck", 0.7
		}
		fmt.Fprintf(b, `<rect class="%s" x="%d" y="%d" width="%d" height="%d" fill="#c2185b" fill-opacity="%.2f"/>`,
			cls, x0+start, y+1, c-start, laneHeight-2, opacity)
	}
}

// shortKey fits a key into the lane labels' margin; the row's tooltip
// names it whole.
func shortKey(k string) string {
	const fits = 10
	if r := []rune(k); len(r) > fits {
		return "…" + string(r[len(r)-fits+1:])
	}
	return k
}

// cutOff is a Recovery's Cause for a holder cut off by a partition (no
// abandon event says it crashed or hung).
const cutOff = "cut off"

// stopVerb says what happened to a stopped holder, by a Recovery's Cause.
func stopVerb(cause string) string {
	switch cause {
	case history.Crashed:
		return "crashed"
	case history.Abandoned:
		return "hung"
	case cutOff:
		return "was cut off"
	}
	return "stopped"
}

func clientWord(c int) string { return fmt.Sprintf("client %d", c) }

// durText is history.Span: the sentences' one way to write a duration.
func durText(d time.Duration) string { return history.Span(d) }
