package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

// agreeChunk is the chunk size every entry point is given, so the large
// history is checked in several chunks by each reader of a file.
const agreeChunk = 100

// verdictOf is what an entry point made of a history: an error (the
// file is bad input), or the verdict and each property's status.
type verdictOf struct {
	bad      bool
	verdict  checker.Status
	safety   checker.Status
	liveness checker.Status
	props    map[checker.Property]string // as shown (checker.Result.Shown)
	// evidence is its summary and each judged window: "1/2 exercised,
	// 0 cycles; client-pause (op 10) yes; ...".
	evidence string
}

func verdictFrom(rep *checker.Report) verdictOf {
	v := verdictOf{verdict: rep.Verdict, props: map[checker.Property]string{},
		safety:   checker.GroupVerdict(rep.Results, checker.GroupSafety),
		liveness: checker.GroupVerdict(rep.Results, checker.GroupLiveness)}
	for _, r := range rep.Results {
		v.props[r.Property] = r.Shown()
	}
	v.evidence = rep.Evidence.Summary()
	for _, m := range rep.Evidence.Moments {
		v.evidence += fmt.Sprintf("; %s (op %d) %s", m.Fault, m.Window, map[bool]string{true: "yes", false: "no"}[m.Exercised])
	}
	return v
}

// The same saved histories (a crashed run's, cut mid-line or at the end
// of a line with its last windows unjudged; one with no events; one
// checked in chunks) give the same verdict, per group and per property,
// through every entry point: verify.File, `lockchaos check`, the cell
// page `lockchaos report` writes, verify.History, what a run calls on
// the history it holds, and verify.Reader, what a continuous part follows
// its file with as it is written.
func TestEveryEntryPointAgreesOnASavedHistory(t *testing.T) {
	checkChunkEvents = agreeChunk
	defer func() { checkChunkEvents = 0 }()
	entries := map[string]func(*testing.T, string) verdictOf{
		"verify.File": func(t *testing.T, path string) verdictOf {
			res, err := verify.File(context.Background(), path, verify.Options{ChunkEvents: agreeChunk})
			if err != nil {
				return verdictOf{bad: true}
			}
			if strings.HasPrefix(filepath.Base(path), "chunked") && res.Summary.Chunks < 3 {
				t.Errorf("chunked: read in %d chunk(s)", res.Summary.Chunks)
			}
			return verdictFrom(res.Report)
		},
		"continuous (verify.Reader)": readerEntry,
		"check":                      checkEntry,
		"report":                     reportEntry,
		"run (verify.History)": func(t *testing.T, path string) verdictOf {
			h, err := history.LoadFile(path)
			if err != nil {
				return verdictOf{bad: true}
			}
			return verdictFrom(verify.History(context.Background(), h, checker.Options{}).Report)
		},
	}
	for name, path := range agreeHistories(t) {
		t.Run(name, func(t *testing.T) {
			want := entries["verify.File"](t, path)
			t.Logf("verify.File: %+v", want)
			for entry, of := range entries {
				got := of(t, path)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s says %+v\nverify.File says %+v", entry, got, want)
				}
			}
			switch {
			case name == "crashed mid-line" && !want.bad:
				t.Errorf("a line cut short is bad input, got %+v", want)
			case name == "empty" && want.verdict != checker.Unknown:
				t.Errorf("no events: %s, want unknown", want.verdict)
			case name == "chunked" && want.verdict != checker.Fail:
				t.Errorf("the overlap in the chunked history: %s, want fail", want.verdict)
			}
		})
	}
}

// readerEntry follows the file as a continuous part of a run does
// (history.Follow, the recorder already closed), in chunks.
func readerEntry(t *testing.T, path string) verdictOf {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := make(chan struct{})
	close(written)
	res, err := verify.Reader(context.Background(), history.Follow(f, written, time.Millisecond), path,
		verify.Options{ChunkEvents: agreeChunk, NoWitness: true})
	if err != nil {
		return verdictOf{bad: true}
	}
	return verdictFrom(res.Report)
}

func checkEntry(t *testing.T, path string) verdictOf {
	code, out, errOut := runCLI("check", "--json", path)
	if code == exitUsage {
		return verdictOf{bad: true}
	}
	var rep checker.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check --json: exit %d, %v\n%s", code, err, errOut)
	}
	return verdictFrom(&rep)
}

// reportEntry saves a summary whose one cell is the history, as a run
// would, and reads back what `lockchaos report` wrote on its page: each
// property's status, and the verdict (the page says when its re-check
// disagrees with the summary's; the summary is given each verdict a
// reader could give, and exactly one must agree).
func reportEntry(t *testing.T, path string) verdictOf {
	var got verdictOf
	for _, v := range []checker.Status{checker.Pass, checker.Fail, checker.Unknown} {
		dir := t.TempDir()
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		c := &results.Cell{Scenario: "gc-pause", Lock: "token", History: "history.jsonl", Verdict: v, Outcome: results.Met}
		sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Repeat: 1, Started: time.Now(),
			Cells: []*results.Cell{c}}
		sum.Tally()
		if _, err := reports.WriteJSON(dir, sum); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI("report", dir)
		if code == exitUsage && strings.Contains(errOut, "could not be read") {
			return verdictOf{bad: true}
		}
		pages, _ := filepath.Glob(filepath.Join(dir, "cells", "*.html"))
		page := ""
		for _, p := range pages {
			if !strings.Contains(p, "porcupine") {
				page = p
			}
		}
		html, err := os.ReadFile(page)
		if code != exitOK || err != nil {
			t.Fatalf("report: exit %d, %v\n%s", code, err, errOut)
		}
		if strings.Contains(string(html), "re-checking the history for this page gave") {
			continue
		}
		got = pageVerdict(string(html))
		got.verdict = v
	}
	return got
}

var (
	pageRow      = regexp.MustCompile(`<tr><td>([a-z-]+)[^\n]*?<td class="verdict-([a-z-]+)">([^<]*)</td>`)
	pageEvidence = regexp.MustCompile(`<h2 id="evidence">[^<]*</h2>\n<p>([^;]*);`)
	pageMoment   = regexp.MustCompile(`<tr><td>([a-z-]+) \(op (\d+)\)</td><td>(yes|no)</td>`)
)

// pageVerdict reads the page's table of properties (each one's status
// and how it is shown); the groups' verdicts follow from it as
// checker.GroupVerdict has them.
func pageVerdict(html string) verdictOf {
	var rs []checker.Result
	for _, m := range pageRow.FindAllStringSubmatch(html, -1) {
		r := checker.Result{Property: checker.Property(m[1]), Status: checker.Status(m[2]),
			Decisive: !strings.Contains(m[0], "(not decisive)")}
		switch m[3] {
		case "not judged":
			r.Note = "not judged"
		case "n/a":
			r.Note = "not applicable"
		case "pass":
			r.Judged = 1
		}
		rs = append(rs, r)
	}
	v := verdictFrom(&checker.Report{Results: rs})
	if m := pageEvidence.FindStringSubmatch(html); m != nil {
		v.evidence = m[1]
	}
	for _, m := range pageMoment.FindAllStringSubmatch(html, -1) {
		v.evidence += fmt.Sprintf("; %s (op %s) %s", m[1], m[2], m[3])
	}
	return v
}

// agreeHistories writes the histories every entry point is fed, by name.
func agreeHistories(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	body, err := os.ReadFile(testdata("two-windows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	texts := map[string]string{
		"crashed mid-line": string(body[:len(body)*2/3]),
		// Both windows closed, neither judged, op 3's release in flight.
		"crashed, no end": strings.Join(lines[:12], ""),
		"empty":           lines[0],
	}
	paths := map[string]string{}
	for name, text := range texts {
		paths[name] = filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(name)+".jsonl")
		if err := os.WriteFile(paths[name], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths["chunked"] = filepath.Join(dir, "chunked.jsonl")
	if err := history.WriteFile(paths["chunked"], chunkedHistory()); err != nil {
		t.Fatal(err)
	}
	return paths
}

// chunkedHistory is 400 lock cycles of three clients on one key, each
// reading and incrementing the resource, a client-pause window every 40
// cycles (left unjudged, as a crash leaves them) and, at cycle 200, two
// holders at once: many chunks of agreeChunk events, and a violation.
func chunkedHistory() *history.History {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "gc-pause", Lock: "token",
		Clients: 3, Keys: []string{"k"}, Fencing: "off", TTL: 300 * time.Millisecond, Faults: []string{"client-pause"}}}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
	}
	op := func(kind history.Kind, c int, at int64, out history.Outcome, f func(*history.Event)) {
		e := history.Event{Kind: kind, Client: c, Key: "k", Call: ms(at), Return: ms(at) + ms(1)/2, Outcome: out}
		if f != nil {
			f(&e)
		}
		add(e)
	}
	value := int64(0)
	for i := int64(0); i < 400; i++ {
		c, at := int(i%3), 10*i
		if i%40 == 5 {
			add(history.Event{Kind: history.Fault, Client: -1, Call: ms(at), Return: ms(at + 2), Outcome: history.Ok,
				Window: history.FaultWindow("client-pause", history.Hit{Pods: []int{c}})})
		}
		op(history.Acquire, c, at+3, history.Ok, func(e *history.Event) { e.Token = fmt.Sprint(i) })
		if i == 200 {
			op(history.Acquire, (c+1)%3, at+4, history.Ok, func(e *history.Event) { e.Token = "overlap" })
			op(history.Release, (c+1)%3, at+5, history.Ok, nil)
		} else {
			op(history.Read, c, at+4, history.Ok, func(e *history.Event) { e.Value = value })
			value++
			op(history.Write, c, at+5, history.Ok, func(e *history.Event) { e.Value = value })
		}
		op(history.Release, c, at+6, history.Ok, nil)
	}
	return h
}
