package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// defaultTTL is the lease a history whose header records no TTL is judged
// with: lockimpl.DefaultTTL, every built-in lock's default (the checker
// sits below lockimpl and does not import it).
const defaultTTL = 300 * time.Millisecond

// defaultCallTimeout is the workload's acquire timeout
// (workload.Config.AcquireTimeout's default), for fault-tolerant's
// default bound when the header records none.
const defaultCallTimeout = 250 * time.Millisecond

// live follows a history's liveness: the windows the two properties read,
// one sweep per key (livesweep.go), and what they found. A whole history
// is added once and finished; one read in chunks is added chunk by chunk
// (drain gives what each chunk settled) and finished at the end.
type live struct {
	ttl           int64
	nodes         int // the lock's nodes (0: unknown)
	recoverWithin time.Duration
	acquireWithin time.Duration
	maxViolations int

	windows    []history.Event // stopping, node-down and pod-targeting windows, by call
	stops      int
	downs      int
	keys       map[string]*keyLive
	claimed    map[int64]bool      // stopping windows whose pod held a key when they opened
	abandonErr map[int64]abandonAt // stopping window -> its pod's first abandon in it (crashed, abandoned)
	// spansJudged are the spans of node-down windows in which some key
	// was tried by an eligible pod with a majority up (by first window).
	spansJudged map[int64]bool

	df, ft     tally
	recoveries []Recovery
	stretches  []Stretch
	waiting    time.Duration // free while an eligible pod tried, majority up
	elapsed    time.Duration
}

// tally is what one property found since the last drain, and its total.
type tally struct {
	judged, ops, count int
	violations         []Violation
	marks              []mark
	totalJudged        int
	totalCount         int
}

func (t *tally) add(v Violation, maxKept int) {
	t.count++
	t.totalCount++
	t.marks = append(t.marks, markOf(v))
	if len(t.violations) < maxKept {
		t.violations = append(t.violations, v)
	}
}

func newLive(h history.Header, maxViolations int) *live {
	ttl := cmp.Or(h.TTL, defaultTTL)
	return &live{ttl: int64(ttl), nodes: h.LockNodes, maxViolations: maxViolations,
		recoverWithin: recoverBound(h),
		acquireWithin: cmp.Or(h.AcquireWithin, history.DefaultAcquireWithin(defaultCallTimeout, history.DefaultRetrySlack)),
		keys:          map[string]*keyLive{}, claimed: map[int64]bool{}, abandonErr: map[int64]abandonAt{},
		spansJudged: map[int64]bool{}}
}

// recoverBound is deadlock-free's bound: the header's, or its default
// from the TTL.
func recoverBound(h history.Header) time.Duration {
	return cmp.Or(h.RecoverWithin, history.DefaultRecoverWithin(cmp.Or(h.TTL, defaultTTL), history.DefaultRetrySlack))
}

// add takes events by call: a whole history (whole), or the next chunk.
// A whole history with no window to judge is not swept at all: nothing
// in it could be judged (a chunk cannot know that of the chunks to come).
func (l *live) add(evs []history.Event, whole bool) {
	start := time.Now()
	defer func() { l.elapsed += time.Since(start) }()
	for i := range evs {
		e := &evs[i]
		if e.Kind != history.Fault {
			continue
		}
		_, stops := e.StoppedHolder()
		down := len(e.DownNodes()) > 0
		if stops || down || len(targetedPods(e)) > 0 {
			l.windows = append(l.windows, *e)
		}
		l.stops += b2i(stops)
		l.downs += b2i(down)
	}
	if whole && l.stops == 0 && (l.downs == 0 || l.nodes == 0) {
		return
	}
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case history.Acquire, history.Release, history.Lost, history.Abandon, history.Renew:
			k := l.keys[e.Key]
			if k == nil {
				k = newKeyLive(l, e.Key)
				l.keys[e.Key] = k
			}
			k.event(e)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// drain returns what the properties settled since the last drain.
func (l *live) drain() (df, ft Result) {
	df = l.df.result(DeadlockFree, l.elapsed)
	ft = l.ft.result(FaultTolerant, 0) // one sweep serves both: its time is deadlock-free's
	l.elapsed = 0
	return df, ft
}

func (t *tally) result(p Property, elapsed time.Duration) Result {
	r := Result{Property: p, Status: Pass, Decisive: true, Judged: t.judged, Violations: t.violations,
		ViolationCount: t.count, Operations: t.ops, Elapsed: elapsed, marks: t.marks}
	if t.count > 0 {
		r.Status = Fail
	}
	t.totalJudged += t.judged
	t.judged, t.ops, t.count, t.violations, t.marks = 0, 0, 0, nil, nil
	return r
}

// finish ends every sweep at the history's end and returns what was left
// to settle, with the notes that speak of the whole history and the
// figures.
func (l *live) finish(end int64) (df, ft Result, lv Liveness) {
	start := time.Now()
	for _, key := range sortedKeys(l.keys) {
		k := l.keys[key]
		k.finish()
		k.finishMoments(end)
	}
	l.unclaimed()
	spans := l.downSpans()
	l.judgeShare(spans, end)
	l.elapsed += time.Since(start)
	df, ft = l.drain()
	df.Note = l.dfNote()
	ft.Note = l.ftNote(spans)
	return df, ft, l.figures(spans)
}

func (l *live) dfNote() string {
	judged := l.df.totalJudged
	var why string
	for _, r := range l.sortedRecoveries() {
		if !r.Judged {
			why = r.Why
			break
		}
	}
	switch {
	case judged == 0 && why == "":
		return "no holder stopped while another pod tried: nothing to judge"
	case judged == 0:
		return "no holder stopped while another pod tried: nothing to judge (" + why + ")"
	case why != "":
		return fmt.Sprintf("%d of %d stopped holder(s) judged; not judged: %s", judged, len(l.recoveries), why)
	}
	return ""
}

func (l *live) ftNote(spans []downSpan) string {
	if l.downs == 0 {
		return "no lock node was down: nothing to judge"
	}
	if l.nodes == 0 {
		return "the lock's node count is unknown (the history's header records no lock_nodes): nothing to judge"
	}
	na, n := "", 0
	for _, s := range spans {
		if s.up == 0 && !l.spansJudged[s.id] {
			if n == 0 {
				na = fmt.Sprintf("%s down, %s, no majority", listText(s.noMajority), upText(l.nodes, len(s.noMajority)))
			}
			n++
		}
	}
	if n > 0 {
		na = fmt.Sprintf("not applicable in %d window(s): %s", n, na)
	}
	if l.ft.totalJudged == 0 {
		return strings.TrimSuffix("no pod tried for a key while a majority of the lock's nodes was up: nothing to judge; "+na, "; ")
	}
	return na
}

// stretch keeps a time nobody held a key while someone tried.
func (l *live) stretch(s Stretch) { l.stretches = append(l.stretches, s) }

func (l *live) sortedRecoveries() []Recovery {
	rs := slices.Clone(l.recoveries)
	slices.SortFunc(rs, func(a, b Recovery) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Client, b.Client), strings.Compare(a.Key, b.Key))
	})
	return rs
}

// figures are the Liveness a report shows.
func (l *live) figures(spans []downSpan) Liveness {
	lv := Liveness{Recoveries: l.sortedRecoveries(), RecoverWithin: l.recoverWithin, AcquireWithin: l.acquireWithin,
		FreeWhileTrying: -1}
	var after []time.Duration
	for _, r := range lv.Recoveries {
		if !r.Judged {
			continue
		}
		lv.MaxRecovery = max(lv.MaxRecovery, r.After)
		if r.Recovered {
			after = append(after, r.After)
		}
	}
	if len(after) > 0 {
		slices.Sort(after)
		lv.MedianRecovery = after[(len(after)-1)/2]
	}
	lv.Stretches = slices.Clone(l.stretches)
	slices.SortFunc(lv.Stretches, func(a, b Stretch) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), strings.Compare(a.Key, b.Key), cmp.Compare(a.End, b.End))
	})
	// The share is per key: each span a key was tried in counts its
	// majority-up time once for that key (two keys free for the same
	// second are two seconds of waiting over two of window).
	lv.FreeWhileTrying = l.freeShare(spans)
	return lv
}

// downSpans merges the node-down windows into runs of overlapping ones
// and measures, in each, how long a majority of the lock's nodes was up.
func (l *live) downSpans() []downSpan {
	var spans []downSpan
	var members [][]*history.Event
	for i := range l.windows {
		w := &l.windows[i]
		if len(w.DownNodes()) == 0 {
			continue
		}
		if n := len(spans); n > 0 && w.Call <= spans[n-1].end {
			spans[n-1].end = max(spans[n-1].end, w.Return)
			members[n-1] = append(members[n-1], w)
			continue
		}
		spans = append(spans, downSpan{id: w.ID, start: w.Call, end: w.Return})
		members = append(members, []*history.Event{w})
	}
	for i := range spans {
		spans[i].up, spans[i].noMajority = l.majorityTime(members[i])
	}
	return spans
}

// majorityTime sweeps one span's windows: the time a majority was up, and
// the first set of nodes down that left none.
func (l *live) majorityTime(ws []*history.Event) (int64, []string) {
	type change struct {
		t     int64
		delta int
		nodes []string
	}
	var cs []change
	for _, w := range ws {
		cs = append(cs, change{w.Call, 1, w.DownNodes()}, change{w.Return, -1, w.DownNodes()})
	}
	slices.SortStableFunc(cs, func(a, b change) int { return cmp.Or(cmp.Compare(a.t, b.t), -cmp.Compare(a.delta, b.delta)) })
	down := map[string]int{}
	var up int64
	var none []string
	for i, c := range cs {
		for _, n := range c.nodes {
			if down[n] += c.delta; down[n] <= 0 {
				delete(down, n)
			}
		}
		if i+1 == len(cs) || len(down) == 0 {
			continue
		}
		if majorityUp(l.nodes, len(down)) {
			up += cs[i+1].t - c.t
		} else if none == nil {
			none = sortedKeys(down)
		}
	}
	return up, none
}

// Words the liveness sentences share.

func clientText(c int) string { return fmt.Sprintf("client %d", c) }

// clientsText: "client 1", "clients 1 and 2", "clients 1, 2 and 5".
func clientsText(cs []int) string {
	if len(cs) == 1 {
		return clientText(cs[0])
	}
	const shown = 8
	words := make([]string, 0, shown+1)
	for i, c := range cs {
		if i == shown && len(cs) > shown+1 {
			words = append(words, fmt.Sprintf("%d others", len(cs)-shown))
			break
		}
		words = append(words, fmt.Sprint(c))
	}
	return "clients " + listText(words)
}

// listText: "a", "a and b", "a, b and c".
func listText(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// durText is history.Span: the sentences' one way to write a duration.
func durText(d time.Duration) string { return history.Span(d) }
