package checker

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

var counterSegmented = segmentedModel{
	model: CounterModel,
	final: counterFinal,
	legal: counterLegal,
	seed: func(s interface{}) interface{} {
		states := s.([]interface{})
		if len(states) == 0 {
			return &counterInput{op: opSeed}
		}
		return &counterInput{op: opSeed, seed: states[0].(int64)}
	},
}

func checkResource(ctx context.Context, evs []history.Event, holds []Hold, opts Options, deadline time.Time, c *carry) Result {
	start := time.Now()
	src := newCounterOps(evs)
	var states map[string]carried
	if c != nil {
		states = c.counter
	}
	out := counterSegmented.check(ctx, src, states, deadline)
	r := Result{Property: ResourceLinearizable, Decisive: true, Operations: src.Len(),
		Segments: out.segments, LargestSegment: out.largest}
	var ix *writeIndex
	// What a lost update's sentence needs from before a chunk's cut: the
	// key's recent reads and writes, and the holds they were made under.
	var earlier []history.Event
	allHolds := holds
	if c != nil && len(out.illegal) > 0 {
		for _, k := range sortedKeys(c.recent) {
			earlier = append(earlier, c.recent[k]...)
		}
		for _, k := range sortedKeys(c.holds) {
			allHolds = append(slices.Clip(c.holds[k]), allHolds...)
		}
	}
	if len(out.illegal) > 0 {
		ix = newWriteIndex(evs, earlier)
	}
	if c != nil {
		c.keepRecent(evs, holds)
	}
	for _, s := range out.illegal {
		detail := len(r.Violations) < opts.MaxViolations
		vs, marks := explainCounter(s, ix, evs, earlier, allHolds, detail)
		if marks == nil { // a segment no lost update explains: one violation, always built
			marks = []mark{markOf(vs[0])}
		}
		r.ViolationCount += len(marks)
		r.marks = append(r.marks, marks...)
		for _, v := range vs {
			if len(r.Violations) < opts.MaxViolations {
				r.Violations = append(r.Violations, v)
			}
		}
	}
	switch {
	case len(out.illegal) > 0:
		r.Status = Fail
	case out.timedOut:
		r.Status = Unknown
		r.Note = fmt.Sprintf("porcupine ran out of its %v budget (largest concurrent stretch: %d operations)", opts.Budget, out.largest)
	default:
		r.Status = Pass
	}
	if opts.InfoLimit > 0 {
		m := CounterModel
		r.Model = &m
		r.Info = counterSegmented.info(src, out.illegal, opts.InfoLimit, deadline)
	}
	r.Elapsed = time.Since(start)
	return r
}

// explainCounter turns an illegal segment into plain sentences. A write
// of v whose value another client already wrote is one lost increment (the
// pair may span segments: the first write can lie before the cut). A read
// no write explains is a stale read. Failing both, the segment as a whole
// is reported. It returns the sentences (only when detail is set: building
// them scans the history) and a mark per lost increment (nil when the
// segment is reported whole, as its one sentence).
func explainCounter(s segment, ix *writeIndex, evs, earlier []history.Event, holds []Hold, detail bool) ([]Violation, []mark) {
	var out []Violation
	var marks []mark
	for _, op := range s.ops {
		in := op.Input.(*counterInput)
		if in.op != opWrite || in.indefinite {
			continue
		}
		w := evs[ix.byID[op.Metadata.(*keyed).eventID]]
		prev, ok := ix.earlierWriter(w)
		if !ok {
			continue
		}
		m := mark{at: w.Call, start: prev.Call, end: w.Return, n: 1, key: w.Key, property: ResourceLinearizable}
		if detail {
			v := lostUpdate(prev, w, evs, earlier, holds)
			out = append(out, v)
			m = markOf(v)
		}
		marks = append(marks, m)
	}
	if len(marks) > 0 {
		return out, marks
	}
	state := describeStates(s.init)
	first := s.ops[0]
	if in := first.Input.(*counterInput); len(s.ops) == 1 && in.op == opWrite && !in.indefinite {
		w := evs[ix.byID[first.Metadata.(*keyed).eventID]]
		return []Violation{{
			Property: ResourceLinearizable, Key: s.key, Clients: []int{w.Client}, Events: []int64{w.ID},
			At: w.Call, Start: w.Call, End: w.Return,
			Summary: fmt.Sprintf("client %d wrote %d to %s at %s on top of %s: its read-modify-write started from a "+
				"stale %d, so the increments in between were lost",
				w.Client, w.Value, w.Key, history.Seconds(w.Call), state, w.Value-1),
		}}, nil
	}
	if len(s.ops) == 1 && first.Input.(*counterInput).op == opRead {
		r := evs[ix.byID[first.Metadata.(*keyed).eventID]]
		return []Violation{{
			Property: ResourceLinearizable, Key: s.key, Clients: []int{r.Client}, Events: []int64{r.ID},
			At: r.Call, Start: r.Call, End: r.Return,
			Summary: fmt.Sprintf("client %d read %d from %s at %s, but the value was %s: a stale or invented read",
				r.Client, r.Value, r.Key, history.Seconds(r.Call), state),
		}}, nil
	}
	return []Violation{unexplained(s, state)}, nil
}

// unexplained is the one sentence on a segment no order of its reads and
// writes explains, when no lost increment or lone stale op says why.
func unexplained(s segment, state string) Violation {
	first, last := s.ops[0], s.ops[len(s.ops)-1]
	var clients []int
	seen := map[int]bool{}
	var ids []int64
	for _, op := range s.ops {
		ids = append(ids, op.Metadata.(*keyed).eventID)
		if !seen[op.ClientId] {
			seen[op.ClientId] = true
			clients = append(clients, op.ClientId)
		}
	}
	sort.Ints(clients)
	endT := last.Return
	if endT == Forever {
		endT = last.Call
	}
	return Violation{
		Property: ResourceLinearizable, Key: s.key, Clients: clients, Events: ids, At: first.Call,
		Start: first.Call, End: endT,
		Summary: fmt.Sprintf("no order of the %d reads and writes of %s between %s and %s explains the values seen (value before them: %s)",
			len(s.ops), s.key, history.Seconds(first.Call), history.Seconds(endT), state),
	}
}

// describeStates renders the counter model's set of possible values.
func describeStates(s interface{}) string {
	states, _ := s.([]interface{})
	parts := make([]string, 0, len(states))
	for _, v := range states {
		parts = append(parts, fmt.Sprint(v))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "one of " + strings.Join(parts, ", ")
}

// writeIndex finds, for a write, an earlier accepted write of the same
// value on the same key by another client: the other half of a lost update.
type writeIndex struct {
	byID    map[int64]int
	byValue map[string]map[int64][]history.Event
}

func newWriteIndex(evs, earlier []history.Event) *writeIndex {
	ix := &writeIndex{byID: eventIndex(evs), byValue: map[string]map[int64][]history.Event{}}
	for _, e := range chain(earlier, evs) {
		if e.Kind != history.Write || e.Outcome != history.Ok {
			continue
		}
		m := ix.byValue[e.Key]
		if m == nil {
			m = map[int64][]history.Event{}
			ix.byValue[e.Key] = m
		}
		m[e.Value] = append(m[e.Value], e)
	}
	return ix
}

func (ix *writeIndex) earlierWriter(w history.Event) (history.Event, bool) {
	for _, p := range ix.byValue[w.Key][w.Value] {
		if p.ID != w.ID && p.Client != w.Client && (p.Call < w.Call || (p.Call == w.Call && p.ID < w.ID)) {
			return p, true
		}
	}
	return history.Event{}, false
}

// lostUpdate describes two holders that both wrote v.
func lostUpdate(a, b history.Event, evs, earlier []history.Event, holds []Hold) Violation {
	ha, okA := holdAt(holds, a)
	hb, okB := holdAt(holds, b)
	ids := []int64{a.ID, b.ID}
	for _, e := range []history.Event{a, b} {
		if r, ok := readBefore(earlier, evs, e); ok {
			ids = append(ids, r.ID)
		}
	}
	v := Violation{Property: ResourceLinearizable, Key: a.Key, Clients: []int{a.Client, b.Client},
		At: b.Call, Start: a.Call, End: b.Return}
	if okA && okB {
		ids = append(ids, ha.AcquireID, hb.AcquireID)
		until := history.Seconds(ha.End)
		if ha.End == Forever {
			until = "the end of the run"
		}
		v.Start = min(ha.Start, hb.Start)
		v.Summary = fmt.Sprintf("client %d held %s from %s to %s while client %d held it from %s; both read %d and "+
			"wrote %d: one increment lost",
			a.Client, a.Key, history.Seconds(ha.Start), until, b.Client, history.Seconds(hb.Start), a.Value-1, a.Value)
	} else {
		v.Summary = fmt.Sprintf("client %d wrote %d to %s at %s and client %d wrote %d at %s; both read %d: one increment lost",
			a.Client, a.Value, a.Key, history.Seconds(a.Call), b.Client, b.Value, history.Seconds(b.Call), a.Value-1)
	}
	v.Events = ids
	return v
}

// holdAt finds the hold of e's client on e's key that contains e's call.
func holdAt(holds []Hold, e history.Event) (Hold, bool) {
	for _, h := range holds {
		if h.Client == e.Client && h.Key == e.Key && h.Start <= e.Call && e.Call <= h.End {
			return h, true
		}
	}
	return Hold{}, false
}

// readBefore finds the client's last accepted read of the key before e.
func readBefore(earlier, evs []history.Event, e history.Event) (history.Event, bool) {
	var best history.Event
	found := false
	for _, r := range chain(earlier, evs) {
		if r.Kind == history.Read && r.Outcome == history.Ok && r.Client == e.Client && r.Key == e.Key && r.Return <= e.Call {
			if !found || r.Call > best.Call {
				best, found = r, true
			}
		}
	}
	return best, found
}

func eventIndex(evs []history.Event) map[int64]int {
	m := make(map[int64]int, len(evs))
	for i, e := range evs {
		m[e.ID] = i
	}
	return m
}

// chain yields the events of a, then those of b, without copying either.
func chain(a, b []history.Event) iter.Seq2[int, history.Event] {
	return func(yield func(int, history.Event) bool) {
		for i, e := range a {
			if !yield(i, e) {
				return
			}
		}
		for i, e := range b {
			if !yield(len(a)+i, e) {
				return
			}
		}
	}
}
