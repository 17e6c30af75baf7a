//go:build race

package margins_test

// raceEnabled: the race detector slows the simulation several times over;
// the theory test then searches one lock, not three.
const raceEnabled = true
