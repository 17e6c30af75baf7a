package checker

import (
	"math/rand/v2"
	"testing"
)

// TestCounterLegalIsStep: counterLegal, the fast verdict on a lone
// operation, agrees with CounterModel's Step on every kind of operation
// from random sets of values.
func TestCounterLegalIsStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		var states []interface{}
		for range rng.IntN(4) {
			states = append(states, int64(rng.IntN(6)))
		}
		in := &counterInput{op: []opKind{opRead, opWrite, opSeed}[rng.IntN(3)], value: int64(rng.IntN(7)),
			indefinite: rng.IntN(3) == 0, seed: int64(rng.IntN(6))}
		want, _ := CounterModel.Step(states, in, nil)
		if got := counterLegal(states, in); got != want {
			t.Fatalf("states %v, op %+v: counterLegal %v, Step %v", states, *in, got, want)
		}
	}
}
