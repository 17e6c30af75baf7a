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
	// lent is set when ops is a lone operation, lent's at, built in
	// memory the next segment reuses (oneBuilder): keep copies it before
	// it is kept.
	lent opSource
	at   int32
}

// keep returns s with operations of its own.
func (s segment) keep() segment {
	if s.lent != nil {
		s.ops, s.lent = s.lent.Build([]int32{s.at}), nil
	}
	return s
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
	// legal, when set, is model.Step's verdict on one operation without
	// the next state (no allocation: a serial history steps a segment
	// per operation).
	legal func(state, input interface{}) bool
}

// step1 reports whether op is legal from state.
func (sm segmentedModel) step1(state interface{}, op porcupine.Operation) bool {
	if sm.legal != nil {
		return sm.legal(state, op.Input)
	}
	ok, _ := sm.model.Step(state, op.Input, op.Output)
	return ok
}

// opSource is a list of operations the segmented checker reads by
// index; it builds porcupine operations a segment at a time, so a history
// of millions of operations never has them all built at once.
type opSource interface {
	Len() int
	Key(i int) string
	Call(i int) int64
	Return(i int) int64 // Forever for an end still open
	// Build returns the operations at idx, in that order.
	Build(idx []int32) []porcupine.Operation
}

// callOrdered is an opSource that knows its operations come in call
// order, so each key's do: eachSegment then does not check.
type callOrdered interface {
	inCallOrder() bool
}

// oneBuilder is an opSource that builds a lone operation into memory of
// its own that the next call reuses: a serial history has a segment per
// operation, and building each anew was a quarter of a check's garbage.
type oneBuilder interface {
	BuildOne(i int32) []porcupine.Operation
}

// build builds the segment seg, lent (the source returned) when it is one
// operation that cannot be carried past it: only an operation that may
// still take effect (Return Forever) is ever carried (final's pending),
// so one with a return, with nothing pending before it, is done with once
// stepped.
func build(src opSource, seg []int32, pending []porcupine.Operation) ([]porcupine.Operation, opSource) {
	if one, ok := src.(oneBuilder); ok && len(seg) == 1 && len(pending) == 0 && src.Return(int(seg[0])) != Forever {
		return one.BuildOne(seg[0]), src
	}
	s := src.Build(seg)
	if len(pending) > 0 {
		s = append(append([]porcupine.Operation(nil), pending...), s...)
	}
	return s, nil
}

// cuts calls fn with each stretch of one key's operations (idx, sorted by
// call) between quiescent points: before an operation that starts after
// every earlier definite one has returned. An operation that may still
// take effect (return Forever) does not stop the cutting: the model
// carries it across the cut (see final), so one early timeout cannot turn
// the rest of a history into one search.
//
// The times are read a block of operations ahead, in a loop of reads
// that do not wait on each other: on a large history each is a cache miss
// on its event, and there they overlap, where one at a time between two
// segments' checks they were a fifth of a check; fn then builds each
// operation from its event still in cache.
func cuts(src opSource, idx []int32, fn func([]int32)) {
	var calls, rets [cutBlock]int64
	start := 0
	var maxRet int64 = -1 << 63
	for b := 0; b < len(idx); b += cutBlock {
		blk := idx[b:min(b+cutBlock, len(idx))]
		for k, i := range blk {
			calls[k], rets[k] = src.Call(int(i)), src.Return(int(i))
		}
		for k := range blk {
			if j := b + k; j > start && calls[k] > maxRet {
				fn(idx[start:j:j])
				start = j
			}
			if r := rets[k]; r != Forever {
				maxRet = max(maxRet, r)
			}
		}
	}
	if start < len(idx) {
		fn(idx[start:])
	}
}

// cutBlock is how many operations cuts reads ahead: their events stay in
// cache (a few hundred lines) until fn builds them.
const cutBlock = 256

// eachSegment groups operations by key, sorts each key's by call, cuts
// them and calls fn with each segment and its starting state, key by key
// in order. Operations are grouped by index, four bytes each, and built
// one segment at a time; no list of all segments is built: a serial
// history has as many segments as operations.
//
// With carry non-nil (a history checked in chunks), each key starts from
// the state and pending operations carry holds for it, and what is left
// after its last segment is stored back.
func (sm segmentedModel) eachSegment(src opSource, carry map[string]carried, fn func(segment)) {
	n := src.Len()
	if n == 0 {
		return
	}
	byKey := map[string][]int32{}
	var keys []string
	first := src.Key(0)
	single := true
	for i := 1; i < n && single; i++ {
		single = src.Key(i) == first
	}
	if single { // the usual case: no map lookups
		keys, byKey[first] = []string{first}, allOf(src)
	} else {
		for i := range n {
			k := src.Key(i)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], int32(i))
		}
	}
	sort.Strings(keys)
	byCall := func(a, b int32) int { return cmp.Compare(src.Call(int(a)), src.Call(int(b))) }
	o, ok := src.(callOrdered)
	ordered := ok && o.inCallOrder()
	for _, k := range keys {
		idx := byKey[k]
		delete(byKey, k)
		if !ordered && !slices.IsSortedFunc(idx, byCall) {
			slices.SortStableFunc(idx, byCall)
		}
		state := sm.model.Init()
		var pending []porcupine.Operation
		if c, ok := carry[k]; ok {
			state, pending = c.state, c.pending
		}
		index := 0
		cuts(src, idx, func(seg []int32) {
			s, lent := build(src, seg, pending)
			fn(segment{key: k, index: index, ops: s, init: state, lent: lent, at: seg[0]})
			index++
			state, pending = sm.final(s, state)
		})
		if carry != nil {
			carry[k] = carried{state: state, pending: pending}
		}
	}
}

// carried is what one key's model holds at the end of a chunk: the states
// still possible and the operations that may yet take effect.
type carried struct {
	state   interface{}
	pending []porcupine.Operation
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
func (sm segmentedModel) check(ctx context.Context, ops opSource, carry map[string]carried, deadline time.Time) segmentOutcome {
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
	sm.eachSegment(ops, carry, func(s segment) {
		out.segments++
		out.largest = max(out.largest, len(s.ops))
		if len(s.ops) == 1 {
			op := s.ops[0]
			if !sm.step1(s.init, op) {
				mu.Lock()
				out.illegal = append(out.illegal, s.keep())
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
func (sm segmentedModel) info(src opSource, illegal []segment, limit int, deadline time.Time) *porcupine.LinearizationInfo {
	var hist []porcupine.Operation
	if src.Len() <= limit {
		hist = src.Build(allOf(src))
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

// allOf lists every index of src.
func allOf(src opSource) []int32 {
	idx := make([]int32, src.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	return idx
}
