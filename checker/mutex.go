package checker

import (
	"context"
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/history"
)

var lockSegmented = segmentedModel{
	model: LockModel,
	final: func(ops []porcupine.Operation, init interface{}) (interface{}, []porcupine.Operation) {
		// Each client's operations alternate acquire / hold end, so the
		// holder after the segment is the client whose last operation is
		// an acquire (or the holder before it, if it did nothing here).
		if len(ops) == 1 { // most segments: no map for them
			in := ops[0].Input.(*lockInput)
			switch holder := init.(int); {
			case in.op == opAcquire:
				return in.client, nil
			case holder == in.client:
				return free, nil
			default:
				return holder, nil
			}
		}
		last := map[int]porcupine.Operation{}
		for _, op := range ops {
			in := op.Input.(*lockInput)
			if p, ok := last[in.client]; !ok || op.Call >= p.Call {
				last[in.client] = op
			}
		}
		holder := init.(int)
		if holder != free {
			if op, ok := last[holder]; ok && op.Input.(*lockInput).op != opAcquire {
				holder = free
			}
		}
		var latest int64 = -1 << 63
		for c, op := range last {
			if op.Input.(*lockInput).op == opAcquire && op.Return > latest {
				holder, latest = c, op.Return
			}
		}
		return holder, nil
	},
	seed: func(s interface{}) interface{} { return &lockInput{op: opSeed, seed: s.(int)} },
}

// lockOps is the lock model's operations as an opSource over the holds:
// the acquire as it happened, the hold's end as an instant at the release
// call (the holder stopped believing then, whatever the release's fate).
// Each is a hold's index and which end, four bytes, until a segment is
// built.
type lockOps struct {
	holds []Hold
	refs  []int32 // hold index << 1, | 1 for the end
	one   *lockOne
}

// lockOne is the memory of BuildOne's operation.
type lockOne struct {
	op   [1]porcupine.Operation
	in   lockInput
	meta keyed
}

func newLockOps(holds []Hold) lockOps {
	l := lockOps{holds: holds, refs: make([]int32, 0, 2*len(holds)), one: &lockOne{}}
	for i := range holds {
		h := &holds[i]
		l.refs = append(l.refs, int32(i)<<1)
		if h.EndID >= 0 {
			l.refs = append(l.refs, int32(i)<<1|1)
		}
	}
	return l
}

func (l lockOps) hold(i int) (*Hold, bool) { r := l.refs[i]; return &l.holds[r>>1], r&1 == 1 }
func (l lockOps) Len() int                 { return len(l.refs) }
func (l lockOps) Key(i int) string         { h, _ := l.hold(i); return h.Key }
func (l lockOps) Call(i int) int64 {
	h, end := l.hold(i)
	if end {
		return h.End
	}
	return h.AcquireCall
}
func (l lockOps) Return(i int) int64 {
	h, end := l.hold(i)
	if end {
		return h.End
	}
	return h.Start
}

// Build implements opSource, with inputs and metadata in two backing
// arrays per segment.
func (l lockOps) Build(idx []int32) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(idx))
	inputs := make([]lockInput, len(idx))
	metas := make([]keyed, len(idx))
	for j, i := range idx {
		ops[j] = l.op(int(i), &inputs[j], &metas[j])
	}
	return ops
}

// BuildOne implements oneBuilder.
func (l lockOps) BuildOne(i int32) []porcupine.Operation {
	o := l.one
	o.op[0] = l.op(int(i), &o.in, &o.meta)
	return o.op[:]
}

// op is operation i, its input and metadata written to in and meta.
func (l lockOps) op(i int, in *lockInput, meta *keyed) porcupine.Operation {
	h, end := l.hold(i)
	*in, *meta = lockInput{op: opAcquire, client: h.Client}, keyed{key: h.Key, eventID: h.AcquireID}
	if end {
		in.op, meta.eventID = opRelease, h.EndID
	}
	return porcupine.Operation{ClientId: h.Client, Input: in, Call: l.Call(i), Return: l.Return(i), Metadata: meta}
}

func checkMutualExclusion(ctx context.Context, holds []Hold, end int64, opts Options, deadline time.Time) Result {
	start := time.Now()
	src := newLockOps(holds)
	out := lockSegmented.check(ctx, src, nil, deadline)
	// Counted, and only the examples built: n holders at once are
	// n(n-1)/2 pairs.
	overlaps, count, marks := overlapsMarked(holds, opts.MaxViolations, end)
	r := Result{Property: MutualExclusion, Decisive: true, Operations: src.Len(),
		Segments: out.segments, LargestSegment: out.largest, ViolationCount: count, marks: marks}
	// A later hold's mark reads as its first example in the incidents'
	// order (by start, then sentence).
	first := map[int64]Violation{}
	for _, o := range overlaps {
		v := overlapViolation(o, end)
		r.Violations = append(r.Violations, v)
		if f, ok := first[o.B.AcquireID]; !ok || v.Start < f.Start || v.Start == f.Start && v.Summary < f.Summary {
			first[o.B.AcquireID] = v
		}
	}
	for i := range r.marks {
		r.marks[i].summary = first[r.marks[i].id].Summary
	}
	formalFail := len(out.illegal) > 0
	switch {
	case formalFail && count > 0:
		r.Status = Fail
	case formalFail || (count > 0 && !out.timedOut):
		// The two methods must agree; a disagreement is a checker bug, and
		// a checker that is unsure says so.
		r.Status = Unknown
		r.Note = fmt.Sprintf("checker disagreement: porcupine found %d illegal segment(s), the interval sweep %d "+
			"overlap(s); please report this history", len(out.illegal), count)
	case out.timedOut:
		r.Status = Unknown
		r.Note = fmt.Sprintf("porcupine ran out of its %v budget", opts.Budget)
		if count > 0 {
			r.Note += fmt.Sprintf("; the interval sweep found %d overlap(s)", count)
		}
	default:
		r.Status = Pass
	}
	if opts.InfoLimit > 0 {
		m := LockModel
		r.Model = &m
		r.Info = lockSegmented.info(src, out.illegal, opts.InfoLimit, deadline)
	}
	r.Elapsed = time.Since(start)
	return r
}

func overlapViolation(o Overlap, end int64) Violation {
	a, b := o.A, o.B
	until := "to " + history.Seconds(a.End)
	if a.End == Forever {
		until = "to the end of the run (" + history.Seconds(end) + ")"
	}
	overlapEnd := o.End
	if overlapEnd == Forever {
		overlapEnd = end
	}
	ids := []int64{a.AcquireID, b.AcquireID}
	for _, id := range []int64{a.EndID, b.EndID} {
		if id >= 0 {
			ids = append(ids, id)
		}
	}
	return Violation{
		Property: MutualExclusion, Key: a.Key, Clients: []int{a.Client, b.Client}, Events: ids,
		At: o.Start, Start: min(a.Start, b.Start), End: overlapEnd,
		Summary: fmt.Sprintf("client %d held %s from %s %s while client %d held it from %s (overlap %s)",
			a.Client, a.Key, history.Seconds(a.Start), until, b.Client, history.Seconds(b.Start), millis(overlapEnd-o.Start)),
	}
}

func millis(ns int64) string { return fmt.Sprintf("%.1f ms", float64(ns)/1e6) }
