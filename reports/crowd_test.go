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
)

// A page of n clients holding one key at once paints each client's
// contended stretch once, not each of the n(n-1)/2 overlapping pairs
// twice (n² rectangles, and memory to match, for report --all-pages);
// its episode says how many violations there are in all when it shows
// fewer. 200 holders: 39,800 rectangles before.
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
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{})
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
	if !regexp.MustCompile(`episode 1, [^:]*: \d+ violation\(s\) listed \(of 2\d{4} in all\)`).MatchString(page) {
		t.Errorf("the episode does not say how many violations there are in all")
	}
}
