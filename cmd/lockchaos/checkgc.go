package main

import (
	"os"
	"runtime/debug"
)

// checkGCPercent is the GC target of `lockchaos check`: the heap may grow
// this much past live data before a collection. Checking holds a chunk's
// events (a million, about 115 MB) and the holds derived from them for the
// whole check, and makes little garbage beside them, so Go's default
// (100: twice the live heap) was most of the peak RSS: a 1M-event serial
// history peaks at 265-270 MB with it, 240-250 MB at 50 and 218-223 MB
// at 40, for a few more collections and ~0.1 s of CPU (BenchmarkCheckCLI
// in checker/, on a loaded machine, where collections run long and the
// garbage made meanwhile counts as live).
const checkGCPercent = 40

// tuneCheckGC sets the check's GC target, unless the user set GOGC, and
// returns what puts the previous one back (the tests run many commands in
// one process).
func tuneCheckGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(checkGCPercent)
	return func() { debug.SetGCPercent(old) }
}
