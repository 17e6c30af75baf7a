//go:build race

package scenarios_test

// raceEnabled: the race detector slows every call several times over,
// which starves the matrix's timing (Redlock's per-node timeouts first).
const raceEnabled = true
