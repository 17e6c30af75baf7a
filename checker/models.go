package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// opKind is what a model operation does.
type opKind uint8

const (
	opAcquire opKind = iota + 1
	opRelease
	opRead
	opWrite
	// opSeed sets the state outright: it stands at the head of a segment
	// checked on its own, carrying the state from the cut before it.
	opSeed
)

// lockInput is one operation of the lock model. Only successful acquires
// and hold ends (release calls, lost-lease signals) are operations: a
// refused or indefinite acquire gave nobody the belief of holding the lock.
type lockInput struct {
	op     opKind
	client int
	seed   int // holder to seed with (-1 free)
}

// free is the lock model's state when nobody holds the lock.
const free = -1

// LockModel is porcupine's model of a lock: an acquire takes effect only
// when nobody holds the lock; a hold ends with its holder's release.
// The state is the holder's client id, or -1.
var LockModel = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() interface{} { return free },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		s, in := state.(int), input.(*lockInput)
		switch in.op {
		case opAcquire:
			return s == free, in.client
		case opRelease:
			return s == in.client, free
		case opSeed:
			return true, in.seed
		}
		return false, s
	},
	DescribeOperation: func(input, _ interface{}) string {
		in := input.(*lockInput)
		switch in.op {
		case opAcquire:
			return fmt.Sprintf("client %d acquires", in.client)
		case opRelease:
			return fmt.Sprintf("client %d's hold ends", in.client)
		case opSeed:
			return "state before this segment: " + describeHolder(in.seed)
		}
		return "?"
	},
	DescribeState: func(state interface{}) string { return describeHolder(state.(int)) },
}

func describeHolder(h int) string {
	if h == free {
		return "free"
	}
	return fmt.Sprintf("held by client %d", h)
}

// counterInput is one operation on the protected counter.
type counterInput struct {
	op         opKind
	value      int64 // read: the value returned; write: the value written
	indefinite bool  // a write that may or may not have happened
	seed       int64
}

// counterModel is nondeterministic only through indefinite writes: they
// may have taken effect or not.
var counterModel = porcupine.NondeterministicModel{
	Partition: partitionByKey,
	Init:      func() []interface{} { return []interface{}{int64(0)} },
	Step: func(state, input, _ interface{}) []interface{} {
		s, in := state.(int64), input.(*counterInput)
		switch in.op {
		case opRead:
			if s == in.value {
				return []interface{}{s}
			}
		case opWrite:
			// Every write in a critical section is read-then-write(v+1):
			// writing v is legal only on top of v-1. That is what turns a
			// lost update (two holders both writing 18) into an illegal step.
			var next []interface{}
			if s == in.value-1 {
				next = append(next, in.value)
			}
			if in.indefinite {
				next = append(next, s)
			}
			return next
		case opSeed:
			return []interface{}{in.seed}
		}
		return nil
	},
	DescribeOperation: func(input, _ interface{}) string {
		in := input.(*counterInput)
		switch in.op {
		case opRead:
			return fmt.Sprintf("read %d", in.value)
		case opWrite:
			if in.indefinite {
				return fmt.Sprintf("write %d (may not have happened)", in.value)
			}
			return fmt.Sprintf("write %d", in.value)
		case opSeed:
			return fmt.Sprintf("value before this segment: %d", in.seed)
		}
		return "?"
	},
	DescribeState: func(state interface{}) string { return fmt.Sprint(state) },
}

// CounterModel is porcupine's model of the protected counter (reads and
// increment-writes), as a deterministic model over sets of states.
var CounterModel = counterModel.ToModel()

// keyed is carried in each operation's Metadata so models can partition
// by key (and by segment, for the report's view of a large history).
type keyed struct {
	key     string
	segment int
	eventID int64
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	type part struct {
		key     string
		segment int
	}
	idx := map[part]int{}
	var out [][]porcupine.Operation
	for _, op := range history {
		m := op.Metadata.(*keyed)
		p := part{m.key, m.segment}
		i, ok := idx[p]
		if !ok {
			i = len(out)
			idx[p] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], op)
	}
	return out
}
