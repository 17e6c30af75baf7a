package reports_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

// A page of n clients holding one key at once paints each client's
// contended stretch once, not each of the n(n-1)/2 overlapping pairs
// twice (n² rectangles, and memory to match, for report --all-pages);
// its zoom (the incident) says how many violations there are in all
// though it lists fewer. 200 holders: 39,800 rectangles before.
func TestCrowdPageDrawsEachClientOnce(t *testing.T) {
	const n = 200
	dir := t.TempDir()
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "crowd", Lock: "mutex", Clients: n,
		Keys: []string{"k"}, Fencing: history.FencingOff}}
	for c := range n {
		h.Events = append(h.Events, history.Event{ID: int64(c), Kind: history.Acquire, Client: c, Key: "k", Call: int64(c) * 1000,
			Return: int64(c)*1000 + 500, Outcome: history.Ok, Token: "t"})
	}
	for c := range n {
		t := int64(n+c) * 1000
		h.Events = append(h.Events, history.Event{ID: int64(n + c), Kind: history.Release, Client: c, Key: "k", Call: t, Return: t + 500,
			Outcome: history.Ok})
	}
	h.End = int64(2*n) * 1000
	if err := history.WriteFile(filepath.Join(dir, "crowd.jsonl"), h); err != nil {
		t.Fatal(err)
	}
	s := &reports.Summary{Format: reports.FormatVersion, Seed: 1, Repeat: 1,
		Cells: []*results.Cell{{Scenario: "crowd", Lock: "mutex", Expect: results.Unsafe, Verdict: "fail", Outcome: results.Met,
			History: "crowd.jsonl"}}}
	s.Tally()
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(res.Pages[0])
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if got := strings.Count(page, `class="overlap"`); got == 0 || got > 4*n {
		t.Errorf("%d overlap rectangles for %d holders, want at most a few per client", got, n)
	}
	// The zoom is the incident, with the incident's true count (every
	// pair of the 200 holders, not the examples listed).
	if !regexp.MustCompile(`incident 1, [^:]*: [1-9]\d{4} violation\(s\)`).MatchString(page) {
		t.Errorf("the incident's zoom does not say how many violations there are in all")
	}
}
