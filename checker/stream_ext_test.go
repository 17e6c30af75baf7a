package checker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// namedHistory is a history a test checks two ways, with its name.
type namedHistory struct {
	name string
	h    *history.History
}

// agreementCases are the histories two ways of checking must agree on:
// every testdata history (and those of older formats), every generated shape on one key and on ten,
// every liveness shape on one key and on three (a crash recovered from
// across a cut, a key stuck to the end, node-down windows), the liveness
// tables' histories, and the recorded histories with each mutation
// applied.
func agreementCases(t *testing.T) []namedHistory {
	var cases []namedHistory
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	older, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.jsonl"))
	for _, f := range append(files, older...) {
		name, _ := filepath.Rel("testdata", f)
		cases = append(cases, namedHistory{name, load(t, name)})
	}
	for _, s := range shapes {
		for _, keys := range []int{1, 10} {
			cases = append(cases, namedHistory{fmt.Sprintf("%s-%dkeys", s.name, keys), shaped(5_000, keys, s)})
		}
	}
	for _, s := range liveShapes {
		for _, keys := range []int{1, 3} {
			cases = append(cases, namedHistory{fmt.Sprintf("%s-%dkeys", s.name, keys), liveShaped(5_000, keys, s)})
		}
	}
	for _, c := range dfCases() {
		cases = append(cases, namedHistory{"deadlock-free/" + c.name, c.h})
	}
	for _, c := range ftCases() {
		cases = append(cases, namedHistory{"fault-tolerant/" + c.name, c.h})
	}
	for _, name := range []string{"recorded-token.jsonl", "recorded-fenced-3keys.jsonl"} {
		for _, m := range mutations {
			h := clone(load(t, name))
			m.apply(t, h)
			cases = append(cases, namedHistory{name + "/" + m.name, h})
		}
	}
	return cases
}

// Every testdata history, every generated shape on one key and on ten,
// and the recorded histories with each mutation applied: checked in
// chunks (of at least 1 and 1,000 events), they give what Check gives.
func TestChunkedCheckAgreesWithWholeCheck(t *testing.T) {
	for _, c := range agreementCases(t) {
		t.Run(c.name, func(t *testing.T) {
			whole := checker.Check(context.Background(), c.h, checker.Options{})
			for _, n := range []int{1, 1000} {
				rep, sum := checker.CheckInChunks(t, c.h, n)
				if d := checker.SameReport(whole, rep, 50); len(d) > 0 {
					t.Fatalf("chunks of %d (%d chunks, largest %d events): %v", n, sum.Chunks, sum.LargestChunk, d)
				}
				if sum.Events != len(c.h.Events) {
					t.Fatalf("chunks of %d: read %d events, the history has %d", n, sum.Events, len(c.h.Events))
				}
				if len(c.h.Events) > max(4*n, 1000) && sum.Chunks < 2 {
					t.Fatalf("chunks of %d: a %d-event history was never cut", n, len(c.h.Events))
				}
			}
		})
	}
}

// The recorded histories with witness events, cut at every chunk size up
// to 24 events: a lease the chunk's cut leaves on the server (live, or
// ended by its deadline after the last act the chunk heard of its key)
// meets the next chunk's leases, as in the whole history (a failover's
// replica keeps an old holder's value while the primary takes new ones).
func TestChunkedCheckAgreesOnLeasesSpanningACut(t *testing.T) {
	older, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.jsonl"))
	for _, f := range older {
		name, _ := filepath.Rel("testdata", f)
		h := load(t, name)
		whole := checker.Check(context.Background(), h, checker.Options{})
		for n := 1; n <= 24; n++ {
			rep, sum := checker.CheckInChunks(t, h, n)
			if d := checker.SameReport(whole, rep, 50); len(d) > 0 {
				t.Errorf("%s in chunks of %d (%d chunks): %v", name, n, sum.Chunks, d)
			}
		}
	}
}

// A chunk ends where each key is quiet: on ten keys that are never all
// free at once, memory still follows the chunk size, not the history.
func TestChunksStayNearTheirSizeOnManyKeys(t *testing.T) {
	h := shaped(200_000, 10, shapes[0])
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	_, sum, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Chunks < 15 || sum.LargestChunk > 12_000 {
		t.Fatalf("%d chunks, largest %d events: want about 20 of about 10,000", sum.Chunks, sum.LargestChunk)
	}
}

// Bad input in a chunked read is named by file and line, as LoadFile does.
func TestChunkedCheckNamesTheBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	body := `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z"}
{"op":0,"phase":"call","t":1,"kind":"acquire","client":0,"key":"k"}
{"op":0,"phase":"return","t":2,"client":0,"outcome":"ok"}
{"op":1,"phase":"return","t":3,"client":0,"outcome":"ok"}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 1})
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:4: return for op 1 that was never invoked") {
		t.Fatalf("err = %v", err)
	}
}

// An op id invoked again in a later chunk is bad input, as in one chunk.
func TestChunkedCheckFindsAnIdInvokedTwiceAcrossChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dup.jsonl")
	body := `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z"}
{"op":0,"phase":"call","t":1,"kind":"acquire","client":0,"key":"k"}
{"op":0,"phase":"return","t":2,"client":0,"outcome":"refused"}
{"op":1,"phase":"call","t":3,"kind":"acquire","client":1,"key":"k"}
{"op":1,"phase":"return","t":4,"client":1,"outcome":"refused"}
{"op":0,"phase":"call","t":5,"kind":"acquire","client":2,"key":"k"}
{"op":0,"phase":"return","t":6,"client":2,"outcome":"refused"}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := checker.CheckFile(context.Background(), path, checker.FileOptions{ChunkEvents: 1})
	if err == nil || !strings.Contains(err.Error(), "dup.jsonl:6: op 0 invoked twice") {
		t.Fatalf("err = %v", err)
	}
}

// A key held from the start and never released is never quiet: its chunk
// grows with the file, and the report says so rather than hiding it.
func TestChunkedCheckWarnsWhenAKeyIsNeverQuiet(t *testing.T) {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Lock: "token"}}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
	}
	add(history.Event{Kind: history.Acquire, Client: 0, Key: "k", Call: 1, Return: 2, Outcome: history.Ok, Token: "t"})
	for i := range 500 {
		t0 := int64(10 + 10*i)
		add(history.Event{Kind: history.Acquire, Client: 1 + i%3, Key: "k", Call: t0, Return: t0 + 5, Outcome: history.Refused})
	}
	rep, sum := checker.CheckInChunks(t, h, 20)
	if sum.Chunks != 1 || len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[len(rep.Warnings)-1], "not quiet") {
		t.Fatalf("%d chunks, warnings %q", sum.Chunks, rep.Warnings)
	}
}

// TestDecideGivesCheckVerdict: the supervisor's verdict-only look says
// what the full check says, on every agreement case (passes and fails of
// every property among them).
func TestDecideGivesCheckVerdict(t *testing.T) {
	seen := map[checker.Status]int{}
	for _, c := range agreementCases(t) {
		opts := checker.Options{Budget: 5 * time.Second, MaxViolations: 1}
		want := checker.Check(context.Background(), c.h, opts).Verdict
		if got := checker.Decide(context.Background(), c.h, opts); got != want {
			t.Errorf("%s: Decide %s, Check %s", c.name, got, want)
		}
		seen[want]++
	}
	if seen[checker.Pass] == 0 || seen[checker.Fail] == 0 {
		t.Errorf("verdicts seen %v: want passes and fails", seen)
	}
}
