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
func crowd(n int) *history.History { return crowds(n, 1) }

// crowds is crowd over and over, rounds times, the key quiet between
// rounds (where a check in chunks may cut).
func crowds(n, rounds int) *history.History {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "crowd", Lock: "mutex",
		Clients: n, Keys: []string{"k"}, Fencing: history.FencingOff}}
	var id int64
	add := func(e history.Event) {
		e.ID = id
		id++
		h.Events = append(h.Events, e)
	}
	us := int64(time.Microsecond)
	for r := range rounds {
		base := int64(r*3*n) * us
		for c := range n {
			add(history.Event{Kind: history.Acquire, Client: c, Key: "k", Call: base + int64(c)*us, Return: base + int64(c)*us + us/2,
				Outcome: history.Ok, Token: fmt.Sprint(c)})
		}
		for c := range n {
			t := base + int64(n+c)*us
			add(history.Event{Kind: history.Release, Client: c, Key: "k", Call: t, Return: t + us/2, Outcome: history.Ok})
		}
	}
	h.End = int64(3*n*rounds) * us
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

// An incident counts every violation it holds, not the examples kept: a
// crowd of 40 holders, 6 times over, checked with 5 examples a property:
// its incidents hold all 6 x 780 overlaps and the foreign releases
// beside them, whole and in chunks. (It counted the 5 + 5 examples kept.)
func TestIncidentCountsAreTrueCounts(t *testing.T) {
	h := crowds(40, 6)
	path := filepath.Join(t.TempDir(), "crowds.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	opts := checker.Options{MaxViolations: 5}
	whole := checker.Check(context.Background(), h, opts)
	for name, rep := range map[string]*checker.Report{"whole": whole, "chunks": checkFileChunks(t, path, opts, 7)} {
		decisive, inIncidents := 0, 0
		for _, r := range rep.Results {
			if r.Decisive {
				decisive += r.ViolationCount
			}
		}
		for _, in := range rep.Incidents {
			inIncidents += in.Violations
		}
		if decisive < 6*780 || inIncidents != decisive || len(rep.Results[0].Violations) != 5 {
			t.Errorf("%s: %d decisive violations, %d in %d incident(s), %d examples", name, decisive, inIncidents,
				len(rep.Incidents), len(rep.Results[0].Violations))
		}
	}
}

func checkFileChunks(t *testing.T, path string, opts checker.Options, chunk int) *checker.Report {
	t.Helper()
	rep, sum, err := checker.CheckFile(context.Background(), path, checker.FileOptions{Options: opts, ChunkEvents: chunk})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Chunks < 2 {
		t.Fatalf("%d chunk(s), want several", sum.Chunks)
	}
	return rep
}
