package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/results"
)

func TestProgressNamesTheRunningCellsOldestFirst(t *testing.T) {
	now := time.Now()
	running := map[string]time.Time{
		runKey("gc-pause/token", 5):    now.Add(-1200 * time.Millisecond),
		runKey("baseline/naive", 5):    now.Add(-300 * time.Millisecond),
		runKey("slow-reply/fenced", 6): now.Add(-2 * time.Second),
	}
	running[runKey("failover/token", 5)] = now.Add(-100 * time.Millisecond)
	want := "running 4: slow-reply/fenced (seed 6) 2.0s, gc-pause/token (seed 5) 1.2s, baseline/naive (seed 5) 0.3s, +1 more"
	if got := runningText(running, now); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := runningText(nil, now); got != "cells" {
		t.Fatalf("nothing running: %q", got)
	}
	// A finished cell leaves the list.
	var out strings.Builder
	p := New(&out, 2)
	p.Started("gc-pause/token", 5)
	p.Cell(&results.Cell{Scenario: "gc-pause", Lock: "token", RunSeed: 5, Outcome: results.Met}, 1, 2)
	if len(p.running) != 0 || !strings.Contains(out.String(), "[1/2]") {
		t.Fatalf("running %v, output %q", p.running, out.String())
	}
	p.Done()
}
