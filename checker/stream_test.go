package checker

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// sameReport says how a report from CheckFile over several chunks differs
// from Check's over the whole history, in what CheckFile promises to keep:
// the verdict, every property's status, counts and violations (as a set,
// when all were kept), the statistics, the evidence, the liveness figures
// and the incidents.
func sameReport(whole, streamed *Report, maxViolations int) []string {
	var diffs []string
	diff := func(what string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			diffs = append(diffs, fmt.Sprintf("%s: whole %v, chunked %v", what, a, b))
		}
	}
	diff("verdict", whole.Verdict, streamed.Verdict)
	for _, a := range whole.Results {
		b := streamed.Result(a.Property)
		if b == nil {
			diffs = append(diffs, fmt.Sprintf("%s: missing", a.Property))
			continue
		}
		p := string(a.Property)
		diff(p+" status", a.Status, b.Status)
		diff(p+" decisive", a.Decisive, b.Decisive)
		diff(p+" violations", a.ViolationCount, b.ViolationCount)
		diff(p+" operations", a.Operations, b.Operations)
		diff(p+" judged", a.Judged, b.Judged)
		if a.Property.Group() == GroupLiveness {
			diff(p+" note", a.Note, b.Note)
		}
		if a.ViolationCount <= maxViolations {
			diff(p+" violation list", summaries(a.Violations), summaries(b.Violations))
		}
	}
	diff("stats", whole.Stats, streamed.Stats)
	diff("liveness", whole.Liveness, streamed.Liveness)
	w, s := whole.Evidence, streamed.Evidence
	diff("evidence", []any{w.Fired, w.Judged, w.Exercised, w.Cycles, w.Acquires, w.Indefinite, w.Enough, w.Short},
		[]any{s.Fired, s.Judged, s.Exercised, s.Cycles, s.Acquires, s.Indefinite, s.Enough, s.Short})
	total := 0
	for _, r := range whole.Results {
		total = max(total, r.ViolationCount)
	}
	if total <= maxViolations {
		diff("incidents", whole.Incidents, streamed.Incidents)
	}
	return diffs
}

func summaries(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%d %s", v.At, v.Summary))
	}
	slices.Sort(out)
	return out
}

// checkInChunks writes h to a file and checks it with CheckFile in chunks
// of at least n events.
func checkInChunks(t testing.TB, h *history.History, n int) (*Report, FileSummary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	rep, sum, err := CheckFile(context.Background(), path, FileOptions{ChunkEvents: n})
	if err != nil {
		t.Fatal(err)
	}
	return rep, sum
}

// The fuzz corpus's small histories (overlaps, lost updates, orphan
// releases, indefinite writes, holds never released) checked in chunks of
// one event, cut wherever a key is quiet, give what Check gives.
func TestChunkedCheckAgreesOnSmallHistories(t *testing.T) {
	multi := 0
	for seed := range 1500 {
		data := []byte(fmt.Sprintf("%08d-%d", seed*7919, seed))
		for i := range data {
			data[i] = byte(int(data[i]) * (seed + 3) % 251)
		}
		h := fuzzHistory(data)
		// A recorder writes call order with ids in it.
		slices.SortStableFunc(h.Events, func(a, b history.Event) int { return cmp.Compare(a.Call, b.Call) })
		for i := range h.Events {
			h.Events[i].ID = int64(i)
		}
		path := filepath.Join(t.TempDir(), "h.jsonl")
		if err := history.WriteFile(path, h); err != nil {
			t.Fatal(err)
		}
		if _, err := history.LoadFile(path); err != nil {
			continue // zero-length operations a file cannot hold
		}
		whole := Check(context.Background(), h, Options{})
		streamed, sum := checkInChunks(t, h, 1)
		if sum.Chunks > 1 {
			multi++
		}
		if d := sameReport(whole, streamed, 50); len(d) > 0 {
			t.Fatalf("seed %d (%d chunks): %v", seed, sum.Chunks, d)
		}
	}
	t.Logf("%d of 1500 histories were checked in more than one chunk", multi)
	if multi < 150 {
		t.Fatalf("only %d of 1500 histories were cut at all", multi)
	}
}
