package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Incident is one episode of violations with what caused it: the fault
// window it followed (with the window's dangerous moment, as the run
// judged it) or, without one, violations close together in time. A pause
// that lets three pods in is one incident with many overlapping pairs;
// counts of incidents lead every output.
type Incident struct {
	Start      int64    `json:"start"`
	End        int64    `json:"end"`
	Fault      string   `json:"fault,omitempty"`
	Window     int64    `json:"window"` // the fault window's op id, or -1
	Violations int      `json:"violations"`
	Properties []string `json:"properties"`
	Cause      string   `json:"cause"`

	// base is the cause's window part, waiting for an example's sentence
	// (pending) when the incident's first violation was not kept.
	base    string
	pending bool
}

// episodeGap joins violations without a fault window into one incident.
const episodeGap = 100 * time.Millisecond

// incidentsOf groups the decisive violations (all of them when none is
// decisive) by the fault window they followed: a violation belongs to the
// latest window that began before it, ended at most two TTLs before it and
// reached its dangerous moment; only without such a window, to the latest
// one at all. (Windows in quick succession: a later one that harmed
// nobody is not the cause of what the one before it set up.)
func incidentsOf(h *history.History, evs []history.Event, results []Result) []Incident {
	moment := map[int64]string{}
	return incidentsFrom(incidentViolations(results), windowsOf(evs, moment), moment, h.Header.TTL)
}

// windowsOf returns the fault windows among evs and adds to moment the
// sentence of each judgment that found its window's dangerous moment.
func windowsOf(evs []history.Event, moment map[int64]string) []history.Event {
	var windows []history.Event
	for _, e := range evs {
		switch e.Kind {
		case history.Fault:
			windows = append(windows, e)
		case history.Exercised:
			if j := e.Judged(); j.Exercised {
				moment[j.Window] = j.Detail
			}
		}
	}
	return windows
}

// incidentViolations are the violations incidents are made of: the
// decisive ones, or all when none is decisive, by time. Each is a mark:
// the examples kept when they are all there is, else every violation
// counted (its mark), so an incident's count is the true count.
func incidentViolations(results []Result) []mark {
	all := cut(results)
	var ms []mark
	for _, decisive := range []bool{true, false} {
		for _, r := range results {
			switch {
			case r.Decisive != decisive:
			case all:
				ms = append(ms, r.marks...)
			default:
				for _, v := range r.Violations {
					ms = append(ms, markOf(v))
				}
			}
		}
		if len(ms) > 0 {
			break
		}
	}
	// A total order: violations at one instant (on two keys, say) come in
	// another order from a check in chunks, and the first names the incident.
	slices.SortStableFunc(ms, func(a, b mark) int {
		return cmp.Or(cmp.Compare(a.at, b.at), strings.Compare(a.key, b.key), cmp.Compare(a.start, b.start),
			strings.Compare(a.summary, b.summary))
	})
	return ms
}

// incidentSlack is how long after a fault window ends a violation may
// still be its doing: two TTLs (a second lease granted after the first
// ran out).
func incidentSlack(ttl time.Duration) int64 {
	if ttl == 0 {
		ttl = time.Second
	}
	return int64(2 * ttl)
}

// incidentsFrom groups vs (by time) given the fault windows (by call)
// and the sentences of those that reached their dangerous moment.
func incidentsFrom(ms []mark, windows []history.Event, moment map[int64]string, ttl time.Duration) []Incident {
	if len(ms) == 0 {
		return nil
	}
	slack := incidentSlack(ttl)
	var exercised []history.Event
	for _, w := range windows {
		if _, ok := moment[w.ID]; ok {
			exercised = append(exercised, w)
		}
	}
	var out []Incident
	byWindow := map[int64]int{}
	for _, m := range ms {
		v := m.violation()
		w, ok := windowNamed(windows, v)
		if !ok {
			w, ok = windowBefore(exercised, v.At, slack)
		}
		if !ok {
			w, ok = windowBefore(windows, v.At, slack)
		}
		if ok {
			if i, seen := byWindow[w.ID]; seen {
				out[i].add(m)
				continue
			}
			byWindow[w.ID] = len(out)
			cause := fmt.Sprintf("%s at %s (%s)", w.Fault(), history.Seconds(w.Call), strings.Join(w.Hit().Words(), ", "))
			if s := moment[w.ID]; s != "" {
				cause = s
			}
			out = append(out, Incident{Start: v.At, End: v.End, Fault: w.Fault(), Window: w.ID, base: cause + "; then ", pending: true})
			out[len(out)-1].add(m)
			continue
		}
		if n := len(out); n > 0 && out[n-1].Window < 0 && v.At-out[n-1].End <= int64(episodeGap) {
			out[n-1].add(m)
			continue
		}
		out = append(out, Incident{Start: v.At, End: v.End, Window: -1, pending: true})
		out[len(out)-1].add(m)
	}
	for i := range out {
		out[i].settleCause()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// settleCause words the cause of an incident none of whose violations was
// kept as an example (past --max-violations): what and how many, where.
func (in *Incident) settleCause() {
	if in.pending {
		in.Cause = fmt.Sprintf("%s%d violation(s) of %s from %s, none among the examples kept (raise --max-violations to see them)",
			in.base, in.Violations, strings.Join(in.Properties, ", "), history.Seconds(in.Start))
	}
	in.base, in.pending = "", false
}

func (in *Incident) add(m mark) {
	v := m.violation()
	if in.pending && m.summary != "" {
		in.Cause, in.pending = in.base+m.summary, false
	}
	in.Violations += m.n
	in.Start = min(in.Start, v.At)
	in.End = max(in.End, v.End, v.At)
	p := string(v.Property)
	for _, q := range in.Properties {
		if q == p {
			return
		}
	}
	in.Properties = append(in.Properties, p)
}

// windowNamed returns the window a violation names among its events (a
// liveness violation names the window that stopped the holder or took
// the node down: its bound, not a TTL, says how long after it it shows).
func windowNamed(ws []history.Event, v Violation) (history.Event, bool) {
	if v.Property.Group() != GroupLiveness {
		return history.Event{}, false
	}
	for _, id := range v.Events {
		for _, w := range ws {
			if w.ID == id {
				return w, true
			}
		}
	}
	return history.Event{}, false
}

// windowBefore returns the latest window that began at or before t and
// ended no more than slack before it (windows are in call order).
func windowBefore(ws []history.Event, t, slack int64) (history.Event, bool) {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Call > t })
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if ws[j].Return+slack >= t {
			return ws[j], true
		}
	}
	return history.Event{}, false
}
