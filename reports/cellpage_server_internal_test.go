package reports

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// The cell page's server section says, per node, that it was watched, the
// leases seen and how they ended, and names the belief that outlived its
// lease; the evidence says the one judged window rested on an observed
// lease end, per window too; the cell was caught (two holders at once),
// so its evidence needs no floor and says so, never "not exercised ...
// the floor is 3"; the legend explains the server rows.
func TestCellPageShowsTheServersView(t *testing.T) {
	h := witnessCell()
	rep := checker.Check(t.Context(), h, checker.Options{})
	if rep.Verdict != checker.Fail || rep.Evidence.Enough {
		t.Fatalf("the cell: verdict %s, enough %v; want a failure below the floor", rep.Verdict, rep.Evidence.Enough)
	}
	page := livenessPage(t, h, rep)
	for _, want := range []string{
		`<h2 id="server">Server's view: what Redis did with the lock keys</h2>`,
		`<tr><td>node1</td><td>throughout</td><td>-</td><td>2</td><td>1 deleted, 1 expired</td><td>1</td></tr>`,
		`<p id="server-outlived">1 belief(s) outlived their lease on the server`,
		"<li>client 0 still believed it held order:1 until 0.650 s; its lease on node1 ended at 0.400 s (expired): " +
			"250 ms without a lease</li>",
		`<p id="lease-ends">lease ends: 1 observed on the server, 0 assumed from the TTL (of 1 judged window(s)).`,
		`<td>gc-pause (op 3)</td><td>yes</td><td>observed on the server</td>`,
		"1/1 exercised",
		`<p class="proof" id="evidence-proof">no floor needed: a decisive violation of mutual-exclusion is proof on its own ` +
			`(the floor is what a pass must show).</p>`,
		`<span id="server-legend">Under the lanes, one row per key on each node`, "amber ▼", "dark bar", "white ticks",
		"hatched with a dashed red edge",
		`class="server-row"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, absent := range []string{"the floor is 3", "not exercised", `class="short"`, "purple ❯", "server-unwatched"} {
		if strings.Contains(page, absent) {
			t.Errorf("page says %q", absent)
		}
	}
	ev, srv, res := strings.Index(page, `id="evidence"`), strings.Index(page, `id="server"`), strings.Index(page, "What the checkers say")
	if ev < 0 || srv < ev || res < srv {
		t.Errorf("evidence at %d, server at %d, properties at %d: want them in that order", ev, srv, res)
	}
	validPage(t, page)
}

// A node the witness lost sight of says when it was watched, for how
// long it was not, and why; a key the server names otherwise is named.
func TestCellPageServerNodeLostSight(t *testing.T) {
	h := threeNodeCell()
	page := livenessPage(t, h, checker.Check(t.Context(), h, checker.Options{}))
	for _, want := range []string{
		`<tr><td>node1</td><td>throughout</td><td>-</td><td>1</td><td>1 deleted</td><td>0</td></tr>`,
		`<tr><td>node3</td><td>from the start to 0.300 s, 0.500 s to the end (unwatched for 200 ms in all)</td>` +
			`<td>connection refused</td><td>1</td><td>1 lost</td><td>0</td></tr>`,
		"Keys the server names otherwise: order:1 as lock:order:1.",
		`<p id="server-outlived">No belief outlived its lease on the server where the witness saw it.</p>`,
		"hatched grey: the witness could not see the node", "red ✕</span>: lost by its node",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	validPage(t, page)
}

// Without witness events the page says the server was not watched, in
// the section and under the timeline, and draws no server row; a pass
// below the floor still lists what it lacks.
func TestCellPageServerNotWatched(t *testing.T) {
	h := witnessCell()
	var plain []history.Event
	for _, e := range h.Events {
		if e.Kind != history.Witness && e.Kind != history.Acquire || e.Client == 0 {
			plain = append(plain, e)
		}
	}
	h.Events = plain
	rep := checker.Check(t.Context(), h, checker.Options{})
	page := livenessPage(t, h, rep)
	for _, want := range []string{
		`<p id="server-unwatched">The server was not watched: this history has no witness events, so every lease end the ` +
			`evidence rests on is assumed from the TTL.</p>`,
		`<span id="server-legend">The server was not watched (no witness events)`,
		`<ul class="short"><li>too few fault windows: 1 fired, each reached the dangerous moment; the floor is 3`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `class="server-row"`) || strings.Contains(page, "evidence-proof") {
		t.Error("an unwatched pass draws server rows or says no floor is needed")
	}
	validPage(t, page)
}

// The stats show a rate only where the history's span supports one.
func TestCellPageRateOnlyWhereTheSpanSupportsIt(t *testing.T) {
	for _, c := range []struct {
		cycles int
		span   int64
		want   string
	}{
		{1, 45, "rate not shown: the history spans only 45 ns"},
		{1, 4_000, "rate not shown: the history spans only 4 µs"},
		{3, ms(450), "rate not shown: 3 cycle(s) over 450 ms"},
		{10, ms(200), "50 cycles/s"},
		{2, ms(1000), "2 cycles/s"},
		{0, ms(2000), "0 cycles/s"},
	} {
		if got := CycleRate(c.cycles, c.span); got != c.want {
			t.Errorf("%d cycles over %d ns: %q, want %q", c.cycles, c.span, got, c.want)
		}
	}
	h := witnessCell()
	page := livenessPage(t, h, checker.Check(t.Context(), h, checker.Options{}))
	if !strings.Contains(page, "<td>cycles (per second)</td><td>2 (2 cycles/s)</td>") {
		t.Errorf("a 1 s history's rate is not shown:\n%s", fromStats(page))
	}
	h.End = 4_000
	for i := range h.Events {
		h.Events[i].Call, h.Events[i].Return = h.Events[i].Call/1000_000, h.Events[i].Return/1000_000
	}
	rep := checker.Check(t.Context(), h, checker.Options{})
	page = livenessPage(t, h, rep)
	if !strings.Contains(page, "<td>cycles (per second)</td><td>2 (rate not shown: the history spans only 4 µs)</td>") ||
		strings.Contains(page, "cycles/s") {
		t.Errorf("a 4 µs history shows a rate:\n%s", fromStats(page))
	}
}

// fromStats is the page from its stats section on (all of it without one).
func fromStats(page string) string {
	if i := strings.Index(page, `id="stats"`); i >= 0 {
		return page[i:]
	}
	return page
}
