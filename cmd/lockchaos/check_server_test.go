package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// watchedPause is a gc-pause on a one-node lock with the server watched:
// client 0's lease (tokA) expires on the server at 0.400 s while it is
// paused, client 1 takes the key at 0.421 s and client 0 goes on
// believing until 0.650 s: two holders at once. The window is judged
// exercised on the observed lease end; the floor asks for 3. unit scales
// every time (1_000_000: ms; 1: the same history over a few µs).
func watchedPause(unit int64, witness bool) *history.History {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "gc-pause", Lock: "token",
		Clients: 2, TTL: 300 * time.Millisecond, LockNodes: 1, Faults: []string{"client-pause"},
		Floor: &history.Floor{MinExercised: 3, MinCycles: 1, MaxIndefinite: 0.5}}}
	add := func(e history.Event) history.Event {
		if e.Kind == history.Witness && !witness {
			return e
		}
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
		return e
	}
	seen := func(at int64, op, tok string, deadline int64) {
		add(history.Event{Kind: history.Witness, Client: -1, Key: "order:1", Token: tok, Call: at * unit, Return: at * unit,
			Outcome: history.Ok, Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: op, Deadline: deadline * unit})})
	}
	op := func(k history.Kind, c int, tok string, at int64, out history.Outcome) {
		add(history.Event{Kind: k, Client: c, Key: "order:1", Token: tok, Call: at * unit, Return: (at + 1) * unit, Outcome: out})
	}
	add(history.Event{Kind: history.Witness, Client: -1, Outcome: history.Ok,
		Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: history.WitnessWatches})})
	op(history.Acquire, 0, "tokA", 100, history.Ok)
	seen(100, history.ServerSet, "tokA", 400)
	w := add(history.Event{Kind: history.Fault, Client: -1, Call: 150 * unit, Return: 600 * unit, Outcome: history.Ok,
		Window: history.FaultWindow("gc-pause", history.Hit{Pods: []int{0}})})
	seen(405, history.ServerExpired, "tokA", 0)
	op(history.Acquire, 1, "tokB", 420, history.Ok)
	seen(420, history.ServerSet, "tokB", 720)
	seen(600, history.ServerExpire, "tokB", 900)
	lease := history.LeaseObserved
	if !witness {
		lease = history.LeaseAssumed
	}
	add(history.Judgment{Fault: "gc-pause", Window: w.ID, Exercised: true, Lease: lease, Of: w,
		Detail: "client 0's lease on order:1 ended while it was paused; client 1 acquired it"}.Event())
	op(history.Release, 0, "tokA", 650, history.Refused)
	op(history.Release, 1, "tokB", 800, history.Ok)
	seen(801, history.ServerDel, "tokB", 0)
	op(history.Acquire, 0, "tokC", 1000, history.Refused)
	return h
}

func writeHistory(t *testing.T, h *history.History) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	return path
}

// check says whether the evidence's lease ends were observed or assumed,
// per window too, and sums the server up in one line; a cell caught by a
// decisive violation says it needs no floor, never "inconclusive: not
// exercised ... the floor is 3"; JSON carries the counts.
func TestCheckSaysWhatTheServerSaw(t *testing.T) {
	path := writeHistory(t, watchedPause(int64(time.Millisecond), true))
	code, out, errOut := runCLI("check", path)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitViolation, out, errOut)
	}
	for _, want := range []string{
		"evidence: 1/1 exercised, 2 cycles\n",
		"  lease ends: 1 observed on the server, 0 assumed from the TTL (of 1 judged window(s))\n",
		"server: 1 of 1 node(s) watched throughout (node1), 2 lease(s) seen: 1 deleted, 1 expired\n",
		"  no floor needed: a decisive violation of mutual-exclusion is proof on its own (the floor is what a pass must show)\n",
		"  + gc-pause (op 3) [lease end observed]: client 0's lease on order:1 ended while it was paused",
		"; 2 cycles, 2 cycles/s;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"inconclusive:", "the floor is 3"} {
		if strings.Contains(out, absent) {
			t.Errorf("a caught cell says %q:\n%s", absent, out)
		}
	}
	code, js, _ := runCLI("check", "--json", path)
	var rep checker.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != exitViolation {
		t.Fatalf("check --json: exit %d, %v", code, err)
	}
	if rep.Evidence.Observed != 1 || rep.Evidence.Assumed != 0 || !strings.Contains(js, `"observed": 1`) {
		t.Errorf("JSON evidence: observed %d, assumed %d", rep.Evidence.Observed, rep.Evidence.Assumed)
	}
	validate(t, compileSchema(t, "check.v1.json"), "check --json", []byte(js))
}

// Without witness events, check says the server was not watched and the
// lease ends were assumed.
func TestCheckSaysTheServerWasNotWatched(t *testing.T) {
	_, out, _ := runCLI("check", writeHistory(t, watchedPause(int64(time.Millisecond), false)))
	for _, want := range []string{
		"  lease ends: 0 observed on the server, 1 assumed from the TTL (of 1 judged window(s))\n",
		"server: not watched (the history has no witness events): every lease end is assumed from the TTL\n",
		"  + gc-pause (op 1) [lease end assumed from the TTL]:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A history over a few microseconds gets no rate: a rate over 4 µs is
// an extrapolation ("500000 cycles/s"), not a measurement.
func TestCheckPrintsNoRateOverAShortHistory(t *testing.T) {
	_, out, _ := runCLI("check", writeHistory(t, watchedPause(4, true)))
	if !strings.Contains(out, "; 2 cycles, rate not shown: the history spans only 4 µs;") || strings.Contains(out, "cycles/s") {
		t.Errorf("a 4 µs history's rate:\n%s", out)
	}
}

// The server's line is the same whether the file is read whole or in
// chunks of two events: the witness events are kept across chunks.
func TestCheckServerLineAcrossChunks(t *testing.T) {
	path := writeHistory(t, watchedPause(int64(time.Millisecond), true))
	lines := map[int]string{}
	defer func() { checkChunkEvents = 0 }()
	for _, chunk := range []int{0, 2} {
		checkChunkEvents = chunk
		_, out, _ := runCLI("check", path)
		if chunk > 0 && !strings.Contains(out, "(checked in ") {
			t.Fatalf("not checked in chunks of %d events:\n%s", chunk, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "server: ") {
				lines[chunk] = l
			}
		}
	}
	if lines[0] != lines[2] || !strings.Contains(lines[0], "2 lease(s) seen: 1 deleted, 1 expired") {
		t.Errorf("whole: %q\nin chunks: %q", lines[0], lines[2])
	}
}
