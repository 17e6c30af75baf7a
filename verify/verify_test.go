package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/verify"
)

// unjudged writes two-windows.jsonl without its judgments, as a run that
// crashed before judging leaves it.
func unjudged(t *testing.T) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "checker", "testdata", "two-windows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if !strings.Contains(l, `"exercised"`) {
			kept = append(kept, l)
		}
	}
	path := filepath.Join(t.TempDir(), "unjudged.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file's windows are judged whole or in chunks, and the history kept
// for a page is the whole file in call order with its judgments, read in
// one chunk or in many.
func TestFileJudgesAndKeepsTheWholeHistory(t *testing.T) {
	path := unjudged(t)
	whole, err := history.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{0, 2} {
		res, err := verify.File(context.Background(), path, verify.Options{ChunkEvents: chunk, KeepHistory: true})
		if err != nil {
			t.Fatal(err)
		}
		if chunk > 0 && res.Summary.Chunks < 2 {
			t.Errorf("chunks of %d: read in %d", chunk, res.Summary.Chunks)
		}
		if ev := res.Report.Evidence; ev.Fired != 2 || ev.Judged != 2 {
			t.Errorf("chunks of %d: %d fired, %d judged; want 2 and 2", chunk, ev.Fired, ev.Judged)
		}
		h := res.History
		if len(h.Events) != len(whole.Events)+2 || h.End != whole.End ||
			!slices.IsSortedFunc(h.Events, func(a, b history.Event) int { return int(a.Call - b.Call) }) {
			t.Errorf("chunks of %d: kept %d events to %d, want %d to %d in call order", chunk, len(h.Events), h.End,
				len(whole.Events)+2, whole.End)
		}
	}
}

// A history with no events is unknown, never a pass, whether read from
// a file, followed as it is written (a continuous part) or held in memory.
func TestNoEventsIsUnknown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	header := `{"format":2,"scenario":"baseline","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","clients":2}` + "\n"
	if err := os.WriteFile(path, []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := verify.File(context.Background(), path, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := history.LoadFile(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	followed, err := verify.Reader(context.Background(), history.Follow(f, closed(), time.Millisecond), path, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*checker.Report{"File": res.Report, "Reader": followed.Report,
		"History": verify.History(context.Background(), h, checker.Options{}).Report} {
		if rep.Verdict != checker.Unknown || rep.Evidence.Enough || rep.Result(checker.MutualExclusion).Status != checker.Unknown {
			t.Errorf("%s: %s, enough %v", name, rep.Verdict, rep.Evidence.Enough)
		}
	}
}

// closed is a Follow's done for a file already written whole.
func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Reader, following a file as a continuous part does, reports what File
// does, is told of each chunk, and keeps no witness events when asked not
// to.
func TestReaderIsFile(t *testing.T) {
	path := unjudged(t)
	file, err := verify.File(context.Background(), path, verify.Options{ChunkEvents: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	told := 0
	followed, err := verify.Reader(context.Background(), history.Follow(f, closed(), time.Millisecond), path,
		verify.Options{ChunkEvents: 2, NoWitness: true, Checked: func(*history.History, *checker.Report) { told++ }})
	if err != nil {
		t.Fatal(err)
	}
	got, want := followed.Report, file.Report
	if got.Verdict != want.Verdict || got.Evidence.Summary() != want.Evidence.Summary() ||
		fmt.Sprint(followed.Summary) != fmt.Sprint(file.Summary) || told != file.Summary.Chunks || followed.Witness != nil {
		t.Errorf("Reader: %s, %s, %+v, told of %d chunks, %d witness events; File: %s, %s, %+v", got.Verdict,
			got.Evidence.Summary(), followed.Summary, told, len(followed.Witness), want.Verdict, want.Evidence.Summary(),
			file.Summary)
	}
}

// A history with witness events verified in chunks (File, Reader) gives
// what it gives held whole (History): a failover's replica keeps an old
// holder's value across the cuts while the primary takes new ones.
func TestChunksAgreeWithWholeOnWitnessHistories(t *testing.T) {
	path := filepath.Join("..", "checker", "testdata", "formats", "format4-failover.jsonl")
	h, err := history.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := verify.History(context.Background(), h, checker.Options{}).Report
	for _, chunk := range []int{1, 7, 13} {
		res, err := verify.File(context.Background(), path, verify.Options{ChunkEvents: chunk})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Chunks < 2 {
			t.Errorf("chunks of %d: read in %d", chunk, res.Summary.Chunks)
		}
		for _, w := range whole.Results {
			got := res.Report.Result(w.Property)
			if got.Shown() != w.Shown() || got.ViolationCount != w.ViolationCount || got.Note != w.Note {
				t.Errorf("chunks of %d: %s %s (%d, %q); whole %s (%d, %q)", chunk, w.Property, got.Shown(), got.ViolationCount,
					got.Note, w.Shown(), w.ViolationCount, w.Note)
			}
		}
	}
}
