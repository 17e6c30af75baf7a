package checker

import (
	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/history"
)

// Whole-history operation lists, for the tests that compare the segmented
// checker with plain porcupine and with its own sources.

// opSlice is an opSource over operations already built.
type opSlice []porcupine.Operation

func (s opSlice) Len() int           { return len(s) }
func (s opSlice) Key(i int) string   { return s[i].Metadata.(*keyed).key }
func (s opSlice) Call(i int) int64   { return s[i].Call }
func (s opSlice) Return(i int) int64 { return s[i].Return }
func (s opSlice) Build(idx []int32) []porcupine.Operation {
	out := make([]porcupine.Operation, len(idx))
	for j, i := range idx {
		out[j] = s[i]
	}
	return out
}

// lockOperations returns every operation of the lock model, built.
func lockOperations(holds []Hold) []porcupine.Operation {
	l := newLockOps(holds)
	return l.Build(allOf(l))
}

// resourceOperations returns every operation of the counter model, built.
func resourceOperations(evs []history.Event) []porcupine.Operation {
	c := newCounterOps(evs)
	return c.Build(allOf(c))
}
