package reports

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports/reportstest"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

func ms(n int64) int64 { return n * int64(time.Millisecond) }

// livenessCell is a cell in which client 3 crashed holding order:1 (its
// pod restarted 200 ms later) and client 5 got the key 310 ms after; then
// client 1's worker hung holding it and nobody got it again to the end;
// client 2 was cut off holding nothing (not judged).
func livenessCell() (*history.History, *checker.Report) {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "pod-crash", Lock: "no-ttl",
		Clients: 4, TTL: 300 * time.Millisecond, RecoverWithin: 660 * time.Millisecond}, End: ms(2590)}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	acquire := func(c int, at int64, out history.Outcome) {
		add(history.Event{Kind: history.Acquire, Client: c, Key: "order:1", Call: ms(at), Return: ms(at + 1), Outcome: out})
	}
	acquire(3, 100, history.Ok)
	acquire(2, 150, history.Refused)
	add(history.Event{Kind: history.Fault, Client: -1, Call: ms(410), Return: ms(610),
		Window: history.FaultWindow("pod-crash", history.Hit{Pods: []int{3}, StopsHolder: true, Restart: 200 * time.Millisecond})})
	add(history.Event{Kind: history.Abandon, Client: 3, Key: "order:1", Call: ms(410), Return: ms(410), Err: history.Crashed})
	acquire(5, 450, history.Refused)
	acquire(5, 720, history.Ok)
	add(history.Event{Kind: history.Release, Client: 5, Key: "order:1", Call: ms(800), Return: ms(801), Outcome: history.Ok})
	acquire(1, 900, history.Ok)
	add(history.Event{Kind: history.Fault, Client: -1, Call: ms(1000), Return: ms(1000),
		Window: history.FaultWindow("abandoned-lease", history.Hit{Pods: []int{1}, StopsHolder: true})})
	add(history.Event{Kind: history.Abandon, Client: 1, Key: "order:1", Call: ms(1000), Return: ms(1000), Err: history.Abandoned})
	for at := int64(1100); at < 2500; at += 200 {
		acquire(5, at, history.Refused)
		acquire(2, at+50, history.Refused)
	}
	stuck := "client 1 hung (its lease abandoned) at 1.000 s holding order:1 (TTL 300 ms); clients 2 and 5 kept trying; " +
		"nobody acquired order:1 for 1.590 s, to the end of the cell (bound 660 ms): stuck"
	rep := &checker.Report{Lock: "no-ttl", Verdict: checker.Fail, Results: []checker.Result{
		{Property: checker.MutualExclusion, Status: checker.Pass, Decisive: true},
		{Property: checker.DeadlockFree, Status: checker.Fail, Decisive: true, Judged: 2, ViolationCount: 1,
			Note: "1 of 2 stopped holders' keys stayed taken past the bound",
			Violations: []checker.Violation{{Property: checker.DeadlockFree, Key: "order:1", Clients: []int{1, 2, 5},
				At: ms(1660), Start: ms(1000), End: ms(2590), Summary: stuck}}},
		{Property: checker.FaultTolerant, Status: checker.Pass, Decisive: true, Note: "no lock node was down: nothing to judge"},
	}, Liveness: checker.Liveness{
		Recoveries: []checker.Recovery{
			{Client: 3, Key: "order:1", Cause: history.Crashed, At: ms(410), Recovered: true, By: 5, RecoveredAt: ms(720),
				After: 310 * time.Millisecond, Bound: 660 * time.Millisecond, Judged: true},
			{Client: 1, Key: "order:1", Cause: history.Abandoned, At: ms(1000), By: -1, After: 1590 * time.Millisecond,
				Bound: 660 * time.Millisecond, Stuck: true, Judged: true},
			{Client: 2, Cause: "cut off", At: ms(1200), By: -1, Bound: 660 * time.Millisecond,
				Why: "client 2 held nothing when the window opened"},
		},
		MedianRecovery: 950 * time.Millisecond, MaxRecovery: 1590 * time.Millisecond,
		Stretches: []checker.Stretch{{Key: "order:1", Start: ms(410), End: ms(720)},
			{Key: "order:1", Start: ms(1000), End: ms(2590), Stuck: true}},
		FreeWhileTrying: -1, RecoverWithin: 660 * time.Millisecond, AcquireWithin: 810 * time.Millisecond,
	}}
	return h, rep
}

// laneTop is the top of the i-th row of the timeline (clients, then keys).
func laneTop(i int) int { return topMargin + i*(laneHeight+laneGap) }

// The timeline marks the crash, the hang and the restart on the stopped
// pods' lanes, the recovery on the lane of the pod that got the key, and
// shades the key's row where nobody held it while others tried, darker
// where it stayed stuck, with a line where the bound passed.
func TestTimelineMarksLiveness(t *testing.T) {
	h, rep := livenessCell()
	svg := string(buildTimeline(h, rep).svg(0, h.End, 1200))
	// Lanes: clients 1, 2, 3, 5, then the key row order:1.
	for _, c := range []struct{ what, prefix, title string }{
		{"crash on client 3's lane", fmt.Sprintf(`<path class="crashed" d="M%.1f %dl10`, 72+410.0/2590*1118-5, laneTop(2)+1),
			"client 3 crashed at 0.410 s holding order:1"},
		{"hang on client 1's lane", fmt.Sprintf(`<path class="abandoned" d="M%.1f %dh10`, 72+1000.0/2590*1118-5, laneTop(0)+1),
			"client 1 hung at 1.000 s holding order:1: its worker stopped, its process (and any watchdog) lives on"},
		{"restart on client 3's lane", fmt.Sprintf(`<path class="restart" d="M%.1f %dv`, 72+610.0/2590*1118, laneTop(2)+1),
			"client 3 restarted at 0.610 s as a fresh pod, after 200 ms down"},
		{"recovery on client 5's lane", fmt.Sprintf(`<path class="recovered" d="M%.1f %dl6`, 72+720.0/2590*1118, laneTop(3)),
			"client 5 acquired order:1 310 ms after client 3 crashed (bound 660 ms)"},
		{"free stretch on the key row", fmt.Sprintf(`<rect class="stretch" x="%.1f" y="%d"`, 72+410.0/2590*1118, laneTop(4)+1),
			"nobody held order:1 from 0.410 s to 0.720 s (310 ms): free while someone tried"},
		{"stuck stretch on the key row", fmt.Sprintf(`<rect class="stretch stuck" x="%.1f" y="%d"`, 72+1000.0/2590*1118, laneTop(4)+1),
			"nobody held order:1 from 1.000 s to 2.590 s (1.590 s): free while someone tried, past its bound: stuck"},
		{"bound passed on the key row", fmt.Sprintf(`<line class="bound-passed" x1="%.1f" y1="%d"`, 72+1660.0/2590*1118, laneTop(4)-2),
			"order:1: client 1 hung at 1.000 s; order:1 not acquired again by 1.660 s, the 660 ms bound"},
	} {
		i := strings.Index(svg, c.prefix)
		if i < 0 {
			t.Errorf("%s: no %s", c.what, c.prefix)
			continue
		}
		if mark := svg[i:min(i+600, len(svg))]; !strings.Contains(mark, "<title>"+esc(c.title)+"</title>") {
			t.Errorf("%s: tooltip %q missing from %s", c.what, c.title, mark)
		}
	}
	if !strings.Contains(svg, `font-style="italic" fill="#880e4f">order:1<title>`) {
		t.Error("no key row labelled order:1")
	}
	wellFormedSVG(t, svg)
	want := liveLegend{Crashed: true, Abandoned: true, Restart: true, Recovered: true, Stretch: true, Stuck: true, Bound: true}
	if got := buildTimeline(h, rep).legend(); got != want {
		t.Errorf("legend %+v, want %+v", got, want)
	}
}

// withoutStops drops the history's abandons and fault windows: nothing in
// it stops a holder any more.
func withoutStops(h *history.History) {
	var plain []history.Event
	for _, e := range h.Events {
		if e.Kind != history.Abandon && e.Kind != history.Fault {
			plain = append(plain, e)
		}
	}
	h.Events = plain
}

// A history without liveness moments draws none of their marks, no key
// row, and the legend names none of them.
func TestTimelineWithoutLivenessHasNoLivenessMarks(t *testing.T) {
	h, _ := livenessCell()
	withoutStops(h)
	tl := buildTimeline(h, &checker.Report{})
	svg := string(tl.svg(0, h.End, 1200))
	for _, cls := range []string{"crashed", "abandoned", "restart", "recovered", "stretch", "key-row", "bound-passed"} {
		if strings.Contains(svg, `class="`+cls) {
			t.Errorf("a history without liveness moments has %s marks", cls)
		}
	}
	if tl.legend().Any() {
		t.Errorf("legend %+v names liveness marks the timeline does not draw", tl.legend())
	}
	if got, want := strings.Count(svg, `font-size="11" fill="#333">client`), 4; got != want {
		t.Errorf("%d lanes, want %d", got, want)
	}
}

// Stretches past what a window draws one by one fold into pixel columns:
// the SVG stays bounded, stuck columns still dark.
func TestTimelineFoldsManyStretches(t *testing.T) {
	h, rep := livenessCell()
	rep.Liveness.Stretches = nil
	for i := range int64(5000) {
		rep.Liveness.Stretches = append(rep.Liveness.Stretches,
			checker.Stretch{Key: "order:1", Start: ms(0) + i*400_000, End: ms(0) + i*400_000 + 100_000, Stuck: i == 4000})
	}
	svg := string(buildTimeline(h, rep).svg(0, h.End, 1200))
	if n := strings.Count(svg, `class="stretch`); n == 0 || n > 1200 {
		t.Fatalf("%d stretch rects for 5000 stretches in 1118 columns", n)
	}
	if !strings.Contains(svg, `class="stretch stuck"`) {
		t.Error("the stuck stretch vanished in the fold")
	}
	wellFormedSVG(t, svg)
}

// wellFormedSVG checks the SVG with xmllint (skipped where it is missing).
func wellFormedSVG(t *testing.T, svg string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "timeline.svg")
	if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(reportstest.XMLLint(t), "--noout", path).CombinedOutput(); err != nil {
		t.Errorf("the timeline is not well-formed XML: %v\n%s", err, out)
	}
}

// livenessPage writes the cell's page and returns it.
func livenessPage(t *testing.T, h *history.History, rep *checker.Report) string {
	t.Helper()
	dir := t.TempDir()
	s := &Summary{Format: FormatVersion, Seed: 1, Repeat: 1, Cells: []*results.Cell{{Scenario: "pod-crash", Lock: "no-ttl",
		Expect: results.Safe, Verdict: rep.Verdict, Outcome: results.Met, Report: rep, Checked: h}}}
	s.Tally()
	res, err := WriteHTML(dir, s, HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(res.Pages[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
