package checker

import (
	"math"
	"sort"

	"github.com/anishathalye/porcupine"
)

// What the counter model can still be after a segment: the state carried
// across a cut.

// counterLegal is CounterModel's Step verdict (some possible value allows
// the operation), without building the values after it.
func counterLegal(state, input interface{}) bool {
	in := input.(*counterInput)
	for _, s := range state.([]interface{}) {
		v := s.(int64)
		switch in.op {
		case opRead:
			if v == in.value {
				return true
			}
		case opWrite:
			if v == in.value-1 || in.indefinite {
				return true
			}
		case opSeed:
			return true
		}
	}
	return false
}

// counterFinal computes the values still possible after a segment, and
// the indefinite writes that may yet take effect. Every accepted write is
// an increment (a write of v needs v-1), so the counter never goes down:
// after a legal segment it is at least L, its largest definite write (or
// one of the values before it that its reads allow, when it wrote
// nothing), and above that only pending writes can move it, one step
// each: the possible values are L, L+1, ... while a pending write of the
// next value exists. A pending write of v can still matter
// only while some possible value is below v; it is carried into the next
// segment until none is. After an illegal segment this is the best guess
// to go on from (the violation is already reported).
func counterFinal(ops []porcupine.Operation, init interface{}) (interface{}, []porcupine.Operation) {
	seen := scanCounterOps(ops)
	if !seen.hasPending {
		// The common case, without the sets below: a serial history has
		// a segment per operation.
		return settledCounterFinal(seen, init), nil
	}
	pending := map[int64]porcupine.Operation{}
	for _, op := range ops {
		if in := op.Input.(*counterInput); in.op == opWrite && in.indefinite {
			pending[in.value] = op
		}
	}
	possible, lowest := possibleCounterValues(counterStarts(seen, init), pending)
	// A read above the largest definite write means a pending write did
	// land: the counter is at least that read now. Keep the values the
	// reads allow, unless none is left (an illegal segment: keep the guess).
	if seen.hasRead {
		possible, lowest = keepReadable(possible, lowest, seen.read)
	}
	states := make([]interface{}, 0, len(possible))
	for v := range possible {
		states = append(states, v)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].(int64) < states[j].(int64) })
	var carry []porcupine.Operation
	for v, op := range pending {
		if v > lowest {
			carry = append(carry, op)
		}
	}
	sort.Slice(carry, func(i, j int) bool { return carry[i].Call < carry[j].Call })
	return states, carry
}

// counterSeen is what counterFinal needs of a segment's operations: its
// largest definite write and largest read, and whether any write is
// pending (indefinite).
type counterSeen struct {
	wrote, read                   int64
	hasWrite, hasRead, hasPending bool
}

func scanCounterOps(ops []porcupine.Operation) counterSeen {
	var c counterSeen
	for _, op := range ops {
		in := op.Input.(*counterInput)
		switch {
		case in.op == opWrite && in.indefinite:
			c.hasPending = true
		case in.op == opWrite:
			c.wrote, c.hasWrite = max(c.wrote, in.value), true
		case in.op == opRead:
			c.read, c.hasRead = max(c.read, in.value), true
		}
	}
	return c
}

// settledCounterFinal is counterFinal for a segment with no pending write.
func settledCounterFinal(seen counterSeen, init interface{}) interface{} {
	if seen.hasWrite {
		return []interface{}{seen.wrote}
	}
	if !seen.hasRead {
		return init
	}
	var kept []interface{}
	for _, s := range init.([]interface{}) {
		if s.(int64) >= seen.read {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 || len(kept) == len(init.([]interface{})) {
		return init
	}
	return kept
}

// counterStarts is where the counter can stand before the segment's
// pending writes: its largest definite write, or without one the values
// before the segment, less those below what a read showed (when any
// value is left).
func counterStarts(seen counterSeen, init interface{}) []int64 {
	if seen.hasWrite {
		return []int64{seen.wrote}
	}
	var starts []int64
	for _, s := range init.([]interface{}) {
		if v := s.(int64); !seen.hasRead || v >= seen.read {
			starts = append(starts, v)
		}
	}
	if len(starts) == 0 {
		for _, s := range init.([]interface{}) {
			starts = append(starts, s.(int64))
		}
	}
	return starts
}

// possibleCounterValues climbs from each start while a pending write of
// the next value exists, and returns the values reached and the lowest.
func possibleCounterValues(starts []int64, pending map[int64]porcupine.Operation) (map[int64]bool, int64) {
	possible := map[int64]bool{}
	lowest := int64(math.MaxInt64)
	for _, v := range starts {
		lowest = min(lowest, v)
		for possible[v] = true; pending[v+1].Input != nil; v++ {
			possible[v+1] = true
		}
	}
	return possible, lowest
}

// keepReadable keeps the possible values at or above read, and their
// lowest; unchanged when none is.
func keepReadable(possible map[int64]bool, lowest, read int64) (map[int64]bool, int64) {
	kept := map[int64]bool{}
	for v := range possible {
		if v >= read {
			kept[v] = true
		}
	}
	if len(kept) == 0 {
		return possible, lowest
	}
	lowest = math.MaxInt64
	for v := range kept {
		lowest = min(lowest, v)
	}
	return kept, lowest
}
