package checker

import (
	"math"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/history"
)

// counterOps is the counter model's operations as an opSource over the
// history's events: accepted reads and writes; a write that may have
// happened gets an open end. A refused request (stale fence) did nothing
// and is left out, as is a read with no answer (it constrains nothing).
// Four bytes an operation until a segment is built.
type counterOps struct {
	evs  []history.Event
	refs []int32 // indexes of the events that are operations
	one  *counterOne
	// byCall says the operations come in call order (the events' own,
	// as checks have them): each key's are then in order too, and
	// eachSegment need not read every one's call again to see so.
	byCall bool
}

// counterOne is the memory of BuildOne's operation.
type counterOne struct {
	op   [1]porcupine.Operation
	in   counterInput
	meta keyed
}

func newCounterOps(evs []history.Event) counterOps {
	c := counterOps{evs: evs, one: &counterOne{}, byCall: true}
	last := int64(math.MinInt64)
	for i := range evs {
		e := &evs[i] // not a copy: a million events, read for a few fields
		if _, ok := counterInputOf(e); ok {
			c.refs = append(c.refs, int32(i))
			c.byCall = c.byCall && e.Call >= last
			last = e.Call
		}
	}
	return c
}

// inCallOrder implements callOrdered.
func (c counterOps) inCallOrder() bool { return c.byCall }

// counterInputOf is the model input of e, if e is one of its operations.
func counterInputOf(e *history.Event) (counterInput, bool) {
	switch {
	case e.Kind == history.Read && e.Outcome == history.Ok:
		return counterInput{op: opRead, value: e.Value}, true
	case e.Kind == history.Write && e.Outcome == history.Ok:
		return counterInput{op: opWrite, value: e.Value}, true
	case e.Kind == history.Write && e.Outcome == history.Indefinite:
		return counterInput{op: opWrite, value: e.Value, indefinite: true}, true
	}
	return counterInput{}, false
}

func (c counterOps) ev(i int) *history.Event { return &c.evs[c.refs[i]] }
func (c counterOps) Len() int                { return len(c.refs) }
func (c counterOps) Key(i int) string        { return c.ev(i).Key }
func (c counterOps) Call(i int) int64        { return c.ev(i).Call }
func (c counterOps) Return(i int) int64 {
	if e := c.ev(i); e.Kind != history.Write || e.Outcome != history.Indefinite {
		return e.Return
	}
	return Forever
}

// Build implements opSource. Inputs and metadata live in two backing
// arrays the operations point into: one allocation each per segment.
func (c counterOps) Build(idx []int32) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(idx))
	inputs := make([]counterInput, len(idx))
	metas := make([]keyed, len(idx))
	for j, i := range idx {
		ops[j] = c.op(int(i), &inputs[j], &metas[j])
	}
	return ops
}

// BuildOne implements oneBuilder.
func (c counterOps) BuildOne(i int32) []porcupine.Operation {
	o := c.one
	o.op[0] = c.op(int(i), &o.in, &o.meta)
	return o.op[:]
}

// op is operation i, its input and metadata written to in and meta.
func (c counterOps) op(i int, in *counterInput, meta *keyed) porcupine.Operation {
	e := c.ev(i)
	*in, _ = counterInputOf(e)
	*meta = keyed{key: e.Key, eventID: e.ID}
	return porcupine.Operation{ClientId: e.Client, Input: in, Call: e.Call, Return: c.Return(i), Metadata: meta}
}
