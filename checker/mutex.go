package checker

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/workload/history"
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

// lockOperations turns holds into the lock model's operations: the acquire
// as it happened, the hold's end as an instant at the release call (the
// holder stopped believing then, whatever the release's fate).
func lockOperations(holds []Hold) []porcupine.Operation {
	// Inputs and metadata live in two backing arrays and the operations
	// point into them: a million boxed structs would cost a million
	// allocations and much of the GC's time.
	ops := make([]porcupine.Operation, 0, 2*len(holds))
	inputs := make([]lockInput, 0, 2*len(holds))
	metas := make([]keyed, 0, 2*len(holds))
	add := func(in lockInput, m keyed, call, ret int64) {
		inputs = append(inputs, in)
		metas = append(metas, m)
		ops = append(ops, porcupine.Operation{ClientId: in.client, Input: &inputs[len(inputs)-1],
			Call: call, Return: ret, Metadata: &metas[len(metas)-1]})
	}
	for _, h := range holds {
		add(lockInput{op: opAcquire, client: h.Client}, keyed{key: h.Key, eventID: h.AcquireID}, h.acquireCall, h.Start)
		if h.EndID >= 0 {
			add(lockInput{op: opRelease, client: h.Client}, keyed{key: h.Key, eventID: h.EndID}, h.End, h.End)
		}
	}
	return ops
}

func checkMutualExclusion(ctx context.Context, holds []Hold, end int64, opts Options, deadline time.Time) Result {
	start := time.Now()
	ops := lockOperations(holds)
	out := lockSegmented.check(ctx, ops, deadline)
	overlaps := Overlaps(holds)
	r := Result{Property: MutualExclusion, Decisive: true, Operations: len(ops),
		Segments: out.segments, LargestSegment: out.largest, ViolationCount: len(overlaps)}
	sort.SliceStable(overlaps, func(i, j int) bool { return overlaps[i].Start < overlaps[j].Start })
	for _, o := range overlaps {
		if len(r.Violations) >= opts.MaxViolations {
			break
		}
		r.Violations = append(r.Violations, overlapViolation(o, end))
	}
	formalFail := len(out.illegal) > 0
	switch {
	case formalFail && len(overlaps) > 0:
		r.Status = Fail
	case formalFail || (len(overlaps) > 0 && !out.timedOut):
		// The two methods must agree; a disagreement is a checker bug, and
		// a checker that is unsure says so.
		r.Status = Unknown
		r.Note = fmt.Sprintf("checker disagreement: porcupine found %d illegal segment(s), the interval sweep %d overlap(s); please report this history", len(out.illegal), len(overlaps))
	case out.timedOut:
		r.Status = Unknown
		r.Note = fmt.Sprintf("porcupine ran out of its %v budget", opts.Budget)
		if len(overlaps) > 0 {
			r.Note += fmt.Sprintf("; the interval sweep found %d overlap(s)", len(overlaps))
		}
	default:
		r.Status = Pass
	}
	if opts.InfoLimit > 0 {
		m := LockModel
		r.Model = &m
		r.Info = lockSegmented.info(ops, out.illegal, opts.InfoLimit, deadline)
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
