package reports

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports/reportstest"
)

// The cell page states each stopped holder's recovery against the bound,
// in ms and TTLs, who got the key back or that nobody did, what was not
// judged and why, the median and max and both bounds; the liveness
// properties show their notes and violations, and one with nothing to
// judge says so rather than a bare pass.
func TestCellPageStatesLiveness(t *testing.T) {
	h, rep := livenessCell()
	page := livenessPage(t, h, rep)
	for _, want := range []string{
		`<h2 id="liveness">`,
		`<td>client 3 crashed</td><td>order:1</td><td>0.410 s</td><td>310 ms (1.03 TTL)</td><td>660 ms (2.20 TTL)</td><td>client 5</td>`,
		`<td>client 1 hung</td><td>order:1</td><td>1.000 s</td><td colspan="3" class="verdict-fail">stuck: nobody acquired ` +
			`order:1 for 1.590 s (5.30 TTL), to the end of the cell (bound 660 ms)</td>`,
		"<li>client 2 was cut off at 1.200 s: not judged: client 2 held nothing when the window opened</li>",
		"<li>recovery: median 950 ms (3.17 TTL), max 1.590 s (5.30 TTL)</li>",
		"<li>recovery bound (deadlock-free): 660 ms (2.20 TTL):",
		"<li>acquire bound (fault-tolerant): 810 ms:",
		`deadlock-free <span class="small">(liveness)</span></td><td class="verdict-fail">fail</td><td>1</td>` +
			`<td>1 of 2 stopped holders&#39; keys stayed taken past the bound</td>`,
		`fault-tolerant <span class="small">(liveness)</span></td><td class="verdict-pass">not judged</td><td>0</td>` +
			`<td>no lock node was down: nothing to judge</td>`,
		"nobody acquired order:1 for 1.590 s, to the end of the cell (bound 660 ms): stuck</li>", // the violation, in words
		`<span id="liveness-legend">`, "black ✗", "brown ⧗", "teal ▶", "green ◆", "light pink", "dark pink", "dark dashed line",
		"<title>client 5 acquired order:1 310 ms after client 3 crashed (bound 660 ms)</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// No late recovery and no node-down window: their lines stay out.
	for _, absent := range []string{"orange ◆", "node-down windows"} {
		if strings.Contains(page, absent) {
			t.Errorf("page says %q, which this cell does not have", absent)
		}
	}
	props, live, tl := strings.Index(page, "What the checkers say"), strings.Index(page, `id="liveness"`), strings.Index(page, `id="overview"`)
	if props < 0 || live < props || tl < live {
		t.Errorf("properties at %d, liveness at %d, timeline at %d: want them in that order", props, live, tl)
	}
	validPage(t, page)
}

// A holder recovered only past the bound reads so, and the share of
// node-down time the key was free while someone tried is shown.
func TestCellPageLateRecoveryAndFreeWhileTrying(t *testing.T) {
	h, rep := livenessCell()
	rc := &rep.Liveness.Recoveries[0]
	rc.RecoveredAt, rc.After, rc.Stuck = ms(1210), 800*time.Millisecond, true
	rep.Liveness.FreeWhileTrying = 0.25
	ft := rep.Result(checker.FaultTolerant)
	ft.Judged, ft.Note = 3, "3 node-down windows judged"
	page := livenessPage(t, h, rep)
	for _, want := range []string{
		`<td class="verdict-fail">800 ms (2.67 TTL): past the bound</td><td>660 ms (2.20 TTL)</td><td>client 5</td>`,
		"in node-down windows the key was free while a pod with a majority of the lock's nodes reachable tried for 25.0% of the time",
		`fault-tolerant <span class="small">(liveness)</span></td><td class="verdict-pass">pass</td>`,
		"orange ◆", "<title>client 5 acquired order:1 800 ms after client 3 crashed (bound 660 ms: past it)</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	validPage(t, page)
}

// A cell whose only judged holder left its key stuck has no median to
// show: the page says none recovered and gives the max.
func TestCellPageStuckOnlyHasNoMedian(t *testing.T) {
	h, rep := livenessCell()
	var stuck []checker.Recovery
	for _, rc := range rep.Liveness.Recoveries {
		if rc.Judged && !rc.Recovered {
			stuck = append(stuck, rc)
		}
	}
	if len(stuck) == 0 {
		t.Fatal("the fixture has no stuck recovery")
	}
	rep.Liveness.Recoveries, rep.Liveness.MedianRecovery = stuck, 0
	page := livenessPage(t, h, rep)
	if !strings.Contains(page, "<li>recovery: median none recovered, max") || strings.Contains(page, "median 0 ns") {
		t.Errorf("a stuck-only cell's page lacks its recovery line or shows a median of nothing")
	}
}

// A cell in which no holder stopped and no liveness property judged
// anything has no liveness section and no liveness legend; its liveness
// properties read "nothing to judge".
func TestCellPageWithoutLivenessHasNoSection(t *testing.T) {
	h, rep := livenessCell()
	withoutStops(h)
	rep.Liveness = checker.Liveness{FreeWhileTrying: -1, RecoverWithin: 660 * time.Millisecond}
	rep.Results = []checker.Result{{Property: checker.MutualExclusion, Status: checker.Pass, Decisive: true},
		{Property: checker.DeadlockFree, Status: checker.Pass, Decisive: true, Note: "no holder stopped: nothing to judge"},
		{Property: checker.FaultTolerant, Status: checker.Pass, Decisive: true, Note: "no lock node was down: nothing to judge"}}
	rep.Verdict = checker.Pass
	page := livenessPage(t, h, rep)
	for _, absent := range []string{`id="liveness"`, `id="liveness-legend"`, "Liveness:", "recovery bound", `class="crashed"`, `class="stretch`} {
		if strings.Contains(page, absent) {
			t.Errorf("a cell without liveness moments shows %q", absent)
		}
	}
	if n := strings.Count(page, ">not judged<"); n != 2 {
		t.Errorf("%d liveness properties read \"not judged\", want 2", n)
	}
	if !strings.Contains(page, `<td>mutual-exclusion</td><td class="verdict-pass">pass</td>`) {
		t.Error("a safety property's pass is dressed as a liveness one")
	}
	validPage(t, page)
}

// The section shows when a liveness property decided anything, even with
// no recovery to list: an unknown, or a moment judged.
func TestLivenessSectionShowsWhenJudged(t *testing.T) {
	for _, c := range []struct {
		name string
		r    checker.Result
		want bool
	}{
		{"nothing to judge", checker.Result{Property: checker.FaultTolerant, Status: checker.Pass}, false},
		{"judged", checker.Result{Property: checker.FaultTolerant, Status: checker.Pass, Judged: 2}, true},
		{"unknown", checker.Result{Property: checker.DeadlockFree, Status: checker.Unknown}, true},
		{"a safety failure", checker.Result{Property: checker.MutualExclusion, Status: checker.Fail}, false},
	} {
		rep := &checker.Report{Results: []checker.Result{c.r}, Liveness: checker.Liveness{FreeWhileTrying: -1}}
		if got := livenessSection(rep, history.Header{}, 0) != nil; got != c.want {
			t.Errorf("%s: section shown %v, want %v", c.name, got, c.want)
		}
	}
}

var svgRE = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// validPage checks the page with xmllint's HTML parser (which knows no
// SVG: it names every SVG element an invalid tag, nothing else may fail)
// and each SVG on it as XML.
func validPage(t *testing.T, page string) {
	t.Helper()
	xmllint := reportstest.XMLLint(t)
	path := filepath.Join(t.TempDir(), "cell.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(xmllint, "--html", "--noout", path).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "parser error") && !regexp.MustCompile(`Tag [a-z]+ invalid`).MatchString(line) {
			t.Errorf("xmllint: %s", line)
		}
	}
	for _, svg := range svgRE.FindAllString(page, -1) {
		wellFormedSVG(t, svg)
	}
}
