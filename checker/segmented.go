package checker

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// segment is a stretch of one key's operations between two quiescent
// points, with the model state it starts from.
type segment struct {
	key   string
	index int
	ops   []porcupine.Operation
	init  interface{}
}

// segmentedModel is what the segmented checker needs on top of a porcupine
// model: how to carry the state across a cut, and how to seed a segment
// checked on its own (for the report's view).
type segmentedModel struct {
	model porcupine.Model
	// final returns the states still possible after a segment, from those
	// before it, and the operations that may yet take effect after it
	// (indefinite ones whose effect can still happen), which are carried
	// into the next segment.
	final func(ops []porcupine.Operation, init interface{}) (interface{}, []porcupine.Operation)
	// seed returns the input of an operation that sets the state to s.
	seed func(s interface{}) interface{}
}

// cut splits one key's operations (sorted by call) at quiescent points:
// before an operation that starts after every earlier definite one has
// returned. An operation that may still take effect (return Forever) does
// not stop the cutting: the model carries it across the cut (see final),
// so one early timeout cannot turn the rest of a history into one search.
func cut(ops []porcupine.Operation) [][]porcupine.Operation {
	var out [][]porcupine.Operation
	start := 0
	var maxRet int64 = -1 << 63
	for i, op := range ops {
		if i > start && op.Call > maxRet {
			out = append(out, ops[start:i])
			start = i
		}
		if op.Return != Forever {
			maxRet = max(maxRet, op.Return)
		}
	}
	if start < len(ops) {
		out = append(out, ops[start:])
	}
	return out
}

// segmentAll groups operations by key, sorts each key's by call, cuts them
// and computes each segment's starting state.
func (sm segmentedModel) segmentAll(ops []porcupine.Operation) []segment {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range ops {
		k := op.Metadata.(*keyed).key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	sort.Strings(keys)
	var segs []segment
	for _, k := range keys {
		kops := byKey[k]
		byCall := func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) }
		if !slices.IsSortedFunc(kops, byCall) {
			slices.SortStableFunc(kops, byCall)
		}
		state := sm.model.Init()
		var carried []porcupine.Operation
		for i, s := range cut(kops) {
			if len(carried) > 0 {
				s = append(append([]porcupine.Operation(nil), carried...), s...)
			}
			segs = append(segs, segment{key: k, index: i, ops: s, init: state})
			state, carried = sm.final(s, state)
		}
	}
	return segs
}

// segmentOutcome is the verdict over all segments.
type segmentOutcome struct {
	illegal  []segment
	timedOut bool
	segments int
	largest  int
}

// check runs every segment: a lone operation is one model step; longer
// segments go to porcupine, in parallel, within the deadline.
func (sm segmentedModel) check(ctx context.Context, segs []segment, deadline time.Time) segmentOutcome {
	out := segmentOutcome{segments: len(segs)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan segment)
	workers := max(1, runtime.GOMAXPROCS(0))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				remaining := time.Until(deadline)
				res := porcupine.Unknown
				if remaining > 0 && ctx.Err() == nil {
					m := sm.model
					init := s.init
					m.Init = func() interface{} { return init }
					res = porcupine.CheckOperationsTimeout(m, s.ops, remaining)
				}
				mu.Lock()
				switch res {
				case porcupine.Illegal:
					out.illegal = append(out.illegal, s)
				case porcupine.Unknown:
					out.timedOut = true
				}
				mu.Unlock()
			}
		}()
	}
	for _, s := range segs {
		out.largest = max(out.largest, len(s.ops))
		if len(s.ops) == 1 {
			op := s.ops[0]
			if ok, _ := sm.model.Step(s.init, op.Input, op.Output); !ok {
				mu.Lock()
				out.illegal = append(out.illegal, s)
				mu.Unlock()
			}
			continue
		}
		work <- s
	}
	close(work)
	wg.Wait()
	sort.Slice(out.illegal, func(i, j int) bool {
		a, b := out.illegal[i], out.illegal[j]
		if a.ops[0].Call != b.ops[0].Call {
			return a.ops[0].Call < b.ops[0].Call
		}
		return a.key < b.key
	})
	return out
}

// info computes porcupine's linearization info for the report: over the
// whole history (partitioned by key) when it has at most limit operations,
// else over the first failing segments, each seeded with its start state.
func (sm segmentedModel) info(ops []porcupine.Operation, illegal []segment, limit int, deadline time.Time) *porcupine.LinearizationInfo {
	var hist []porcupine.Operation
	if len(ops) <= limit {
		hist = ops
	} else {
		n := 0
		for i, s := range illegal {
			if n+len(s.ops) > limit && i > 0 {
				break
			}
			n += len(s.ops) + 1
			first := s.ops[0]
			hist = append(hist, porcupine.Operation{
				ClientId: first.ClientId, Input: sm.seed(s.init), Call: first.Call - 2, Return: first.Call - 1,
				Metadata: &keyed{key: s.key, segment: s.index + 1, eventID: -1},
			})
			for _, op := range s.ops {
				m := *op.Metadata.(*keyed)
				m.segment = s.index + 1
				op.Metadata = &m
				hist = append(hist, op)
			}
		}
	}
	if len(hist) == 0 {
		return nil
	}
	remaining := time.Until(deadline)
	if remaining <= 0 {
		remaining = time.Second // a short look is better than no picture at all
	}
	_, info := porcupine.CheckOperationsVerbose(sm.model, hist, remaining)
	return &info
}
