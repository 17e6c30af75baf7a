package checker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// crowd is a history where n clients all hold one key at once (a lock
// that grants everyone: the worst case for whatever pairs holds up):
// each acquires in turn, 1 µs apart, and all release after the last
// acquired. Every pair of holds overlaps: n(n-1)/2 violations.
func crowd(n int) *history.History {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "crowd", Lock: "mutex",
		Clients: n, Keys: []string{"k"}, Fencing: history.FencingOff}}
	var id int64
	add := func(e history.Event) {
		e.ID = id
		id++
		h.Events = append(h.Events, e)
	}
	us := int64(time.Microsecond)
	for c := range n {
		add(history.Event{Kind: history.Acquire, Client: c, Key: "k", Call: int64(c) * us, Return: int64(c)*us + us/2,
			Outcome: history.Ok, Token: fmt.Sprint(c)})
	}
	for c := range n {
		t := int64(n+c) * us
		add(history.Event{Kind: history.Release, Client: c, Key: "k", Call: t, Return: t + us/2, Outcome: history.Ok})
	}
	h.End = int64(2*n) * us
	return h
}

// writeCrowd writes crowd(n) to a file, as `lockchaos check` reads it.
func writeCrowd(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("crowd-%d.jsonl", n))
	if err := history.WriteFile(path, crowd(n)); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkCrowd checks n simultaneous holders of one key, from the
// file: time and allocations should grow with n, not n² (the overlapping
// pairs are counted, and only the first MaxViolations are built).
func BenchmarkCrowd(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("holders=%d", n), func(b *testing.B) {
			path := writeCrowd(b, n)
			b.ReportAllocs()
			for b.Loop() {
				rep, _, err := checker.CheckFile(context.Background(), path, checker.FileOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if got, want := rep.Results[0].ViolationCount, n*(n-1)/2; got != want {
					b.Fatalf("%d overlaps counted, want %d", got, want)
				}
			}
		})
	}
}

// TestCrowdWritesNoFileItCannotRead keeps the benchmark's file honest.
func TestCrowdCountsEveryPair(t *testing.T) {
	path := writeCrowd(t, 40)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	rep, _, err := checker.CheckFile(context.Background(), path, checker.FileOptions{Options: checker.Options{MaxViolations: 5}})
	if err != nil {
		t.Fatal(err)
	}
	me := rep.Results[0]
	if me.ViolationCount != 40*39/2 || len(me.Violations) != 5 || rep.Verdict != checker.Fail {
		t.Fatalf("%d overlaps counted, %d kept, verdict %s", me.ViolationCount, len(me.Violations), rep.Verdict)
	}
}
