package reports_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/verify"
)

const evil = `<script>alert(1)</script>`

// savedRun builds a summary over the checker's saved histories (copied
// into dir), one cell per history, plus a scenario with a hostile name.
func savedRun(t *testing.T, dir string) *reports.Summary {
	t.Helper()
	cells := []struct{ scenario, lock, file string }{
		{"baseline", "token", "pass.jsonl"},
		{"slow-holder", "token", "lost-update.jsonl"},
		{"slow-holder", "naive", "foreign-release.jsonl"},
		{"gc-pause", "fenced", "stale-fence-rejected.jsonl"},
		{evil, "token", "overlap.jsonl"},
	}
	s := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: "test", GoVersion: "go", RedisVersion: "7",
		Backend: "process", Seed: 1, Repeat: 1, Started: time.Unix(0, 0).UTC(), Command: "lockchaos run --seed 1"}
	for _, c := range cells {
		src := filepath.Join("..", "checker", "testdata", c.file)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.Join("h", c.file)
		if err := os.MkdirAll(filepath.Join(dir, "h"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
		s.Cells = append(s.Cells, &results.Cell{Scenario: c.scenario, Lock: c.lock, Expect: results.Unsafe,
			Verdict: "fail", Outcome: results.Met, History: rel, Rerun: "lockchaos run --scenario " + c.scenario})
	}
	s.Cells = append(s.Cells, &results.Cell{Scenario: "failover", Lock: "redlock", Expect: results.NotApplicable, Outcome: results.Skipped})
	s.Tally()
	return s
}

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

func TestHTMLEveryCellPresentAndLinksResolve(t *testing.T) {
	dir := t.TempDir()
	s := savedRun(t, dir)
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 5 {
		t.Fatalf("%d pages, want 5 (n/a cells get none)", len(res.Pages))
	}
	index, _ := os.ReadFile(res.Index)
	for _, c := range s.Cells {
		if !strings.Contains(string(index), ">"+templateEscape(c.Lock)+"<") {
			t.Errorf("lock %s missing from the matrix", c.Lock)
		}
	}
	if strings.Count(string(index), `class="cell `) != 6 {
		t.Errorf("%d matrix cells, want 6", strings.Count(string(index), `class="cell `))
	}
	pages := append([]string{res.Index}, res.Pages...)
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		for _, m := range hrefRE.FindAllStringSubmatch(string(b), -1) {
			target := filepath.Join(filepath.Dir(p), filepath.FromSlash(m[1]))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", filepath.Base(p), m[1])
			}
		}
		if strings.Contains(string(b), "http://") && !strings.Contains(string(b), `xmlns="http://www.w3.org/2000/svg"`) || strings.Contains(string(b), "https://") {
			t.Errorf("%s refers to the network", filepath.Base(p))
		}
	}
}

func templateEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;", "&", "&amp;").Replace(s)
}

func TestHTMLEscapesUserText(t *testing.T) {
	dir := t.TempDir()
	s := savedRun(t, dir)
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{res.Index}, res.Pages...) {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), evil) {
			t.Fatalf("%s contains the raw script tag", p)
		}
	}
	index, _ := os.ReadFile(res.Index)
	if !strings.Contains(string(index), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatal("the hostile scenario name is not shown escaped")
	}
	for _, p := range res.Pages {
		if strings.Contains(filepath.Base(p), "<") || strings.Contains(filepath.Base(p), "/") {
			t.Fatalf("unsafe page name %q", p)
		}
	}
}

func TestCellPageShowsTimelineViolationsAndRerun(t *testing.T) {
	b := []byte(cellPageOf(t, "slow-holder--naive"))
	for _, want := range []string{`<svg class="timeline"`, `class="overlap"`, `class="foreign-release"`, "removed a lock it no longer held",
		"lockchaos run --scenario slow-holder", "incident 1", "porcupine-mutual-exclusion.html"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	b = []byte(cellPageOf(t, "slow-holder--token"))
	if !strings.Contains(string(b), `class="lost-write"`) || !strings.Contains(string(b), "both read 0 and wrote 1") {
		t.Error("the lost update page does not mark the lost write")
	}
}

// TestLargeCellPageStaysSmall renders a 50,000-operation cell: the
// timelines fold holds into pixel columns, so the page stays under 5 MB.
func TestLargeCellPageStaysSmall(t *testing.T) {
	dir := t.TempDir()
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "big", Lock: "token"}}
	var id int64
	add := func(e history.Event) {
		e.ID = id
		id++
		h.Events = append(h.Events, e)
	}
	t0, v := int64(0), int64(0)
	for len(h.Events) < 50_000 {
		c := int(id % 8)
		add(history.Event{Kind: history.Acquire, Client: c, Key: "k", Call: t0, Return: t0 + 100_000, Outcome: history.Ok})
		add(history.Event{Kind: history.Acquire, Client: (c + 1) % 8, Key: "k", Call: t0 + 50_000, Return: t0 + 150_000, Outcome: history.Refused})
		add(history.Event{Kind: history.Read, Client: c, Key: "k", Call: t0 + 200_000, Return: t0 + 210_000, Value: v, Outcome: history.Ok})
		v++
		add(history.Event{Kind: history.Write, Client: c, Key: "k", Call: t0 + 1_000_000, Return: t0 + 1_010_000, Value: v, Outcome: history.Ok})
		add(history.Event{Kind: history.Release, Client: c, Key: "k", Call: t0 + 1_100_000, Return: t0 + 1_200_000, Outcome: history.Ok})
		t0 += 1_300_000
	}
	h.End = t0
	if err := history.WriteFile(filepath.Join(dir, "big.jsonl"), h); err != nil {
		t.Fatal(err)
	}
	s := &reports.Summary{Format: reports.FormatVersion, Seed: 1, Repeat: 1,
		Cells: []*results.Cell{{Scenario: "big", Lock: "token", Expect: results.Safe, Verdict: "pass", Outcome: results.Met, History: "big.jsonl"}}}
	s.Tally()
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(res.Pages[0])
	t.Logf("50,000-operation cell page: %d bytes, rendered in %v", st.Size(), res.Elapsed)
	if st.Size() > 5<<20 {
		t.Fatalf("page is %d bytes, over 5 MB", st.Size())
	}
}

// TestPagesInHeadlessChromium opens the index and a cell page from disk in
// a real browser, saves screenshots under out/, and checks the rendered DOM.
func TestPagesInHeadlessChromium(t *testing.T) {
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on PATH: install it (Debian: apt-get install chromium) to run the browser test; .ci/run does")
	}
	dir := t.TempDir()
	s := savedRun(t, dir)
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	shots := filepath.Join("..", "out", "screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	cell := filepath.Join(dir, "cells", "slow-holder--naive.html")
	for _, c := range []struct {
		page, shot string
		wants      []string
	}{
		{res.Index, "index.png", []string{`id="matrix"`, `class="cell unsafe-detected"`, "&lt;script&gt;"}},
		{cell, "cell-slow-holder-naive.png", []string{`<svg class="timeline"`, `class="overlap"`, `id="violations"`, `id="stats"`}},
	} {
		abs, _ := filepath.Abs(c.page)
		shot, _ := filepath.Abs(filepath.Join(shots, c.shot))
		common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
			"--user-data-dir=" + t.TempDir()}
		cmd := exec.Command(browser, append(common, "--window-size=1300,1600", "--screenshot="+shot, "file://"+abs)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("screenshot %s: %v\n%s", c.shot, err, out)
		}
		if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
			t.Fatalf("screenshot %s missing or blank: %v", shot, err)
		}
		dom, err := exec.Command(browser, append(common, "--dump-dom", "file://"+abs)...).Output()
		if err != nil {
			t.Fatalf("dump-dom %s: %v", c.page, err)
		}
		for _, w := range c.wants {
			if !strings.Contains(string(dom), w) {
				t.Errorf("rendered DOM of %s lacks %s", filepath.Base(c.page), w)
			}
		}
		if strings.Contains(string(dom), evil) {
			t.Errorf("rendered DOM of %s runs the hostile script", filepath.Base(c.page))
		}
		t.Logf("screenshot: %s", shot)
	}
	fmt.Fprintln(os.Stderr, "browser screenshots in", shots)
}

// TestEveryCellPageLinksItsPorcupineViewAndOwnDescription: the first cell
// written gets its porcupine pages too (its folder used not to exist yet),
// and a page shows the description the run carried (a scenario from a
// file), not the built-in catalog's.
func TestEveryCellPageLinksItsPorcupineViewAndOwnDescription(t *testing.T) {
	dir := t.TempDir()
	s := savedRun(t, dir)
	s.Cells[0].Description = "our own baseline, from a scenarios file"
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(res.Pages[0])
	if !strings.Contains(string(first), "porcupine-mutual-exclusion.html") {
		t.Fatal("the first cell page has no porcupine view")
	}
	if !strings.Contains(string(first), "our own baseline, from a scenarios file") {
		t.Fatal("the page does not show the run's own scenario description")
	}
	// Porcupine's page names the cell and property, links back, and opens
	// at the first error.
	pc, err := os.ReadFile(strings.TrimSuffix(res.Pages[0], ".html") + "-porcupine-mutual-exclusion.html")
	if err != nil {
		t.Fatal(err)
	}
	cell := s.Cells[0].Scenario + "/" + s.Cells[0].Lock
	for _, want := range []string{"<title>" + cell + ": mutual-exclusion (porcupine)</title>",
		`href="` + filepath.Base(res.Pages[0]) + `"`, "the matrix</a>", "#jump-link"} {
		if !strings.Contains(string(pc), want) {
			t.Errorf("porcupine page lacks %q", want)
		}
	}
}

// TestCellPageLeadsWithIncidentsAndEvidence: a violating cell's page says
// how many incidents there were, with their causes, and what evidence the
// verdict rests on, before the charts.
func TestCellPageLeadsWithIncidentsAndEvidence(t *testing.T) {
	b := []byte(cellPageOf(t, "slow-holder--token"))
	html := string(b)
	inc, ev, tl := strings.Index(html, `id="incidents"`), strings.Index(html, `id="evidence"`), strings.Index(html, `id="overview"`)
	if inc < 0 || ev < 0 || tl < 0 || inc >= ev || ev >= tl {
		t.Fatalf("incidents at %d, evidence at %d, timeline at %d: want all three, in that order", inc, ev, tl)
	}
	if !strings.Contains(html, "1 incident(s)") {
		t.Fatal("the incident count is missing")
	}
	// An unsafe cell whose violation was found reads "detected", not "fail".
	if !strings.Contains(html, `id="verdict">detected<`) {
		t.Fatal(`an unsafe, detected cell's page does not say "detected"`)
	}
}

// cellPageOf writes the saved run's HTML and returns the page of the cell
// whose file name contains name.
func cellPageOf(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	res, err := reports.WriteHTML(dir, savedRun(t, dir), reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Pages {
		if strings.Contains(p, name) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no cell page named like %q in %v", name, res.Pages)
	return ""
}

// A sweep's met runs get no page but the first of each cell; a run that
// missed its expectation always gets one, and --all-pages writes them all.
func TestSweepPagesTheRunsWorthReading(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "checker", "testdata", "pass.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pass.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &reports.Summary{Format: reports.FormatVersion, Seed: 1, Repeat: 4}
	for i, out := range []results.Outcome{results.Met, results.Met, results.Regression, results.Met} {
		s.Cells = append(s.Cells, &results.Cell{Scenario: "baseline", Lock: "token", Expect: results.Safe, Verdict: "pass",
			Outcome: out, History: "pass.jsonl", RunSeed: int64(i + 1)})
	}
	s.Tally()
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 2 || res.Unpaged != 2 || !strings.Contains(res.Pages[1], "seed3") {
		t.Fatalf("pages %v, %d unpaged: want the first run's and the regression's", res.Pages, res.Unpaged)
	}
	res, err = reports.WriteHTML(dir, s, reports.HTMLOptions{AllPages: true, Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 4 || res.Unpaged != 0 {
		t.Fatalf("--all-pages: %d pages, %d unpaged", len(res.Pages), res.Unpaged)
	}
}

// index.html's "rerun everything" is the summary's rerun line (the seed
// and time scale pinned), not the command as typed; merged shards give a
// line each.
func TestIndexRerunsEverythingWithTheSeedAndTimeScale(t *testing.T) {
	dir := t.TempDir()
	s := savedRun(t, dir)
	s.Command, s.Rerun = "lockchaos run", "lockchaos run --seed 1 --time-scale 1.50"
	res, err := reports.WriteHTML(dir, s, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(res.Index)
	if !strings.Contains(string(index), "<td>rerun everything</td><td><code>lockchaos run --seed 1 --time-scale 1.50</code></td>") {
		t.Errorf("index.html does not rerun with the seed and scale:\n%s", index)
	}
	other := *s
	other.Shard, s.Shard = "2/2", "1/2"
	s.Rerun, other.Rerun = "lockchaos run --seed 1 --shard 1/2", "lockchaos run --seed 1 --shard 2/2"
	merged := reports.Merge(dir, []*reports.Summary{s, &other}, []string{dir, dir})
	if merged.Rerun != "lockchaos run --seed 1 --shard 1/2\nlockchaos run --seed 1 --shard 2/2" {
		t.Errorf("merged rerun %q", merged.Rerun)
	}
}

var (
	incidentRE = regexp.MustCompile(`<li><b>([0-9.]+ s) to ([0-9.]+ s)</b>, (\d+) violation\(s\)`)
	zoomRE     = regexp.MustCompile(`<h3>incident \d+, ([0-9.]+ s) to ([0-9.]+ s): (\d+) violation\(s\)`)
)

// The cell page's incident and the timeline's zoom on it group and span
// one violation alike (the zoom was an "episode" of its own, 0.000 s to
// 0.071 s, beside the incident's 0.031 s to 0.042 s).
func TestOneViolationIsOneIncidentAndOneZoomWithOneSpan(t *testing.T) {
	page := cellPageOf(t, "gc-pause--fenced") // stale-fence-rejected.jsonl: one violation
	incidents, zooms := incidentRE.FindAllStringSubmatch(page, -1), zoomRE.FindAllStringSubmatch(page, -1)
	if len(incidents) != 1 || len(zooms) != 1 {
		t.Fatalf("%d incident(s), %d zoom(s), want one of each:\n%s", len(incidents), len(zooms), page)
	}
	if in, z := incidents[0][1:], zooms[0][1:]; !slices.Equal(in, z) || in[2] != "1" {
		t.Errorf("incident %q, zoom %q: want one span and one violation for both", in, z)
	}
}
