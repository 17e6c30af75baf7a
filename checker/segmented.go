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

// cuts calls fn with each stretch of one key's operations (sorted by
// call) between quiescent points: before an operation that starts after
// every earlier definite one has returned. An operation that may still
// take effect (return Forever) does not stop the cutting: the model
// carries it across the cut (see final), so one early timeout cannot turn
// the rest of a history into one search.
func cuts(ops []porcupine.Operation, fn func([]porcupine.Operation)) {
	start := 0
	var maxRet int64 = -1 << 63
	for i, op := range ops {
		if i > start && op.Call > maxRet {
			fn(ops[start:i:i])
			start = i
		}
		if op.Return != Forever {
			maxRet = max(maxRet, op.Return)
		}
	}
	if start < len(ops) {
		fn(ops[start:])
	}
}

// eachSegment groups operations by key, sorts each key's by call, cuts
// them and calls fn with each segment and its starting state, key by key
// in order. Only one key's operations are copied at a time, and no list of
// all segments is built: a serial history has as many segments as
// operations.
func (sm segmentedModel) eachSegment(ops []porcupine.Operation, fn func(segment)) {
	keyOf := func(op porcupine.Operation) string { return op.Metadata.(*keyed).key }
	// One key (the usual case) needs no grouping; several are grouped by
	// index, four bytes an operation rather than a copy of each.
	single := !slices.ContainsFunc(ops, func(op porcupine.Operation) bool { return keyOf(op) != keyOf(ops[0]) })
	var keys []string
	byKey := map[string][]int32{}
	switch {
	case len(ops) == 0:
	case single:
		keys = []string{keyOf(ops[0])}
	default:
		for i, op := range ops {
			k := keyOf(op)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], int32(i))
		}
	}
	sort.Strings(keys)
	byCall := func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) }
	for _, k := range keys {
		var kops []porcupine.Operation
		if single {
			kops = ops // ours to reorder: porcupine takes operations in any order
		} else {
			kops = make([]porcupine.Operation, len(byKey[k]))
			for j, i := range byKey[k] {
				kops[j] = ops[i]
			}
			delete(byKey, k)
		}
		if !slices.IsSortedFunc(kops, byCall) {
			slices.SortStableFunc(kops, byCall)
		}
		state := sm.model.Init()
		var carried []porcupine.Operation
		index := 0
		cuts(kops, func(s []porcupine.Operation) {
			if len(carried) > 0 {
				s = append(append([]porcupine.Operation(nil), carried...), s...)
			}
			fn(segment{key: k, index: index, ops: s, init: state})
			index++
			state, carried = sm.final(s, state)
		})
	}
}

// segmentOutcome is the verdict over all segments.
type segmentOutcome struct {
	illegal  []segment
	timedOut bool
	segments int
	largest  int
}

// check runs every segment of ops: a lone operation is one model step;
// longer segments go to porcupine, in parallel, within the deadline.
func (sm segmentedModel) check(ctx context.Context, ops []porcupine.Operation, deadline time.Time) segmentOutcome {
	var out segmentOutcome
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan segment, 64)
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
	sm.eachSegment(ops, func(s segment) {
		out.segments++
		out.largest = max(out.largest, len(s.ops))
		if len(s.ops) == 1 {
			op := s.ops[0]
			if ok, _ := sm.model.Step(s.init, op.Input, op.Output); !ok {
				mu.Lock()
				out.illegal = append(out.illegal, s)
				mu.Unlock()
			}
			return
		}
		work <- s
	})
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
