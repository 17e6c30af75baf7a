package reports

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/workload/history"
)

//go:embed templates
var templatesFS embed.FS

var (
	css       = mustRead("templates/style.css")
	indexTmpl = template.Must(template.New("index").Parse(mustRead("templates/index.html.tmpl")))
	cellTmpl  = template.Must(template.New("cell").Parse(mustRead("templates/cell.html.tmpl")))
)

func mustRead(name string) string {
	b, err := templatesFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// HTMLOptions tune the HTML reports. Zero fields take the defaults.
type HTMLOptions struct {
	// Budget for re-checking each history (the pages need porcupine's
	// linearization info, which summary.json does not keep). Default 20s.
	Budget time.Duration
	// InfoLimit: histories up to this many operations get porcupine's view
	// of the whole run; larger ones, of their failing segments. Default 5000.
	InfoLimit int
	// Width of the timelines in pixels. Default 1200.
	Width int
	// HistoryBase resolves relative history paths. Default: the output dir.
	HistoryBase string
}

// HTMLResult lists what WriteHTML wrote.
type HTMLResult struct {
	Index   string
	Pages   []string
	Elapsed time.Duration
}

// WriteHTML writes index.html (the matrix) and one page per cell run under
// dir/cells, with porcupine's visualizations beside them. Every page is
// self-contained: no network, no scripts of ours (porcupine's pages carry
// their own inline script).
func WriteHTML(dir string, s *Summary, opts HTMLOptions) (*HTMLResult, error) {
	start := time.Now()
	if opts.Budget == 0 {
		opts.Budget = 20 * time.Second
	}
	if opts.InfoLimit == 0 {
		opts.InfoLimit = 5000
	}
	if opts.Width == 0 {
		opts.Width = 1200
	}
	if opts.HistoryBase == "" {
		opts.HistoryBase = dir
	}
	res := &HTMLResult{}
	links := map[*scenarios.CellResult]string{}
	for _, c := range s.Cells {
		if c.Outcome == scenarios.Skipped && c.History == "" {
			continue
		}
		rel := cellPageName(c, s.Repeat > 1)
		page := filepath.Join(dir, rel)
		if err := writeCellPage(page, dir, s, c, opts); err != nil {
			return nil, err
		}
		links[c] = filepath.ToSlash(rel)
		res.Pages = append(res.Pages, page)
	}
	index := filepath.Join(dir, "index.html")
	var buf bytes.Buffer
	if err := indexTmpl.Execute(&buf, indexData(s, links)); err != nil {
		return nil, fmt.Errorf("reports: index: %w", err)
	}
	if err := writeFile(index, buf.Bytes()); err != nil {
		return nil, err
	}
	res.Index = index
	res.Elapsed = time.Since(start)
	return res, nil
}

// cellPageName is a file name safe whatever the scenario is called; a hash
// keeps two names that sanitise alike apart.
func cellPageName(c *scenarios.CellResult, withSeed bool) string {
	base := slug(c.Scenario) + "--" + slug(c.Lock)
	if base != c.Scenario+"--"+c.Lock {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s\x00%s", c.Scenario, c.Lock)
		base += fmt.Sprintf("-%08x", h.Sum32())
	}
	if withSeed {
		base += fmt.Sprintf("--seed%d", c.RunSeed)
	}
	return filepath.Join("cells", base+".html")
}

func slug(s string) string {
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	if len(out) > 60 {
		out = out[:60]
	}
	if out == "" || out[0] == '.' {
		out = "_" + out
	}
	return out
}

// outcomeClass is the matrix colour of a cell run.
func outcomeClass(c *scenarios.CellResult) string {
	switch c.Outcome {
	case scenarios.Met:
		switch c.Expect {
		case scenarios.Safe:
			return "safe-pass"
		case scenarios.Unsafe:
			return "unsafe-detected"
		}
		return "either"
	case scenarios.Regression:
		return "regression"
	case scenarios.Missed:
		return "missed"
	case scenarios.Inconclusive:
		return "unknown"
	case scenarios.HarnessError:
		return "error"
	case scenarios.Interrupted:
		return "interrupted"
	}
	return "na"
}

type matrixCell struct {
	Present                                      bool
	Class, Outcome, Verdict, Detail, Title, Link string
}

type matrixRow struct {
	Scenario, Description string
	Cells                 []matrixCell
}

type runRow struct {
	Link, Scenario, Lock, Expect, Verdict, Outcome, First string
	Seed                                                  int64
	Violations                                            int
}

type total struct {
	Name  string
	Count int
}

type indexView struct {
	Title, CSS                                                          template.CSS
	Seed, LastSeed                                                      int64
	Repeat                                                              int
	Started, Elapsed, Version, GoVersion, RedisVersion, Backend, Shards string
	Command                                                             string
	Interrupted                                                         bool
	Totals                                                              []total
	Locks                                                               []string
	Rows                                                                []matrixRow
	Runs                                                                []runRow
}

func indexData(s *Summary, links map[*scenarios.CellResult]string) indexView {
	v := indexView{CSS: template.CSS(css), Title: template.CSS(fmt.Sprintf("seed %d", s.Seed)), Seed: s.Seed,
		LastSeed: s.Seed + int64(max(s.Repeat, 1)) - 1, Repeat: s.Repeat,
		Started: s.Started.Format(time.RFC3339), Elapsed: s.Elapsed.Round(time.Millisecond).String(), Version: s.Version,
		GoVersion: s.GoVersion, RedisVersion: orDash(s.RedisVersion), Backend: orDash(s.Backend), Shards: s.Shard,
		Command: s.Command, Interrupted: s.Interrupted}
	for k, n := range s.Totals {
		v.Totals = append(v.Totals, total{k, n})
	}
	sort.Slice(v.Totals, func(i, j int) bool { return v.Totals[i].Name < v.Totals[j].Name })
	// Columns: the built-in locks in order, then any other (user) locks.
	seenLock := map[string]bool{}
	for _, c := range s.Cells {
		seenLock[c.Lock] = true
	}
	for _, l := range lockimpl.Names() {
		if seenLock[l] {
			v.Locks = append(v.Locks, l)
			delete(seenLock, l)
		}
	}
	var others []string
	for l := range seenLock {
		others = append(others, l)
	}
	sort.Strings(others)
	v.Locks = append(v.Locks, others...)
	// Rows in first-seen order; repeats of a cell are folded into one.
	type agg struct{ runs []*scenarios.CellResult }
	rowIdx := map[string]int{}
	cells := map[string]*agg{}
	for _, c := range s.Cells {
		if _, ok := rowIdx[c.Scenario]; !ok {
			rowIdx[c.Scenario] = len(v.Rows)
			v.Rows = append(v.Rows, matrixRow{Scenario: c.Scenario})
		}
		k := c.Scenario + "\x00" + c.Lock
		if cells[k] == nil {
			cells[k] = &agg{}
		}
		cells[k].runs = append(cells[k].runs, c)
	}
	for i := range v.Rows {
		row := &v.Rows[i]
		for _, lock := range v.Locks {
			a := cells[row.Scenario+"\x00"+lock]
			if a == nil {
				row.Cells = append(row.Cells, matrixCell{})
				continue
			}
			row.Cells = append(row.Cells, foldRuns(a.runs, links))
		}
	}
	if s.Repeat > 1 {
		for _, c := range s.Cells {
			first := "-"
			if c.Stats.FirstViolation >= 0 && c.Violations > 0 {
				first = history.Seconds(c.Stats.FirstViolation)
			}
			v.Runs = append(v.Runs, runRow{Link: links[c], Scenario: c.Scenario, Lock: c.Lock, Expect: string(c.Expect),
				Verdict: orDash(string(c.Verdict)), Outcome: string(c.Outcome), First: first, Seed: c.RunSeed, Violations: c.Violations})
		}
	}
	return v
}

// foldRuns shows one run as is, several as a detection rate; the worst
// outcome decides the colour and the link goes to the first run with it.
func foldRuns(runs []*scenarios.CellResult, links map[*scenarios.CellResult]string) matrixCell {
	worst := runs[0]
	rank := map[string]int{"regression": 6, "missed": 5, "error": 4, "unknown": 3, "interrupted": 2}
	failed := 0
	for _, r := range runs {
		if rank[outcomeClass(r)] > rank[outcomeClass(worst)] {
			worst = r
		}
		if r.Verdict == checker.Fail {
			failed++
		}
	}
	mc := matrixCell{Present: true, Class: outcomeClass(worst), Outcome: string(worst.Outcome), Link: links[worst],
		Title: fmt.Sprintf("expected %s; %s", worst.Expect, worst.Outcome)}
	if len(runs) == 1 {
		mc.Verdict = orDash(string(worst.Verdict))
		switch {
		case worst.Expect == scenarios.NotApplicable:
			mc.Verdict, mc.Detail = "n/a", ""
		case worst.Violations > 0:
			mc.Detail = fmt.Sprintf("%d violation(s)", worst.Violations)
		case worst.Error != "":
			mc.Detail = string(worst.Outcome)
		default:
			mc.Detail = "0 violations"
		}
		return mc
	}
	mc.Verdict = fmt.Sprintf("%d/%d failed", failed, len(runs))
	mc.Detail = fmt.Sprintf("expected %s", worst.Expect)
	return mc
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type cellView struct {
	CSS                                                              template.CSS
	IndexLink, Scenario, Lock, Description, Expect, Verdict, Outcome string
	OutcomeNote, Error, Rerun, HistoryLink, HistoryName, Recheck     string
	RunSeed, CellSeed                                                int64
	Events                                                           int
	Results                                                          []checker.Result
	Groups                                                           []violationGroup
	Timeline                                                         template.HTML
	Zooms                                                            []zoomView
	Stats                                                            []statRow
	Porcupine                                                        []porcupineLink
}

type violationView struct{ At, Summary string }

// violationGroup is one property's violations: the first few shown, the
// rest folded away, the uncounted beyond what the checker kept.
type violationGroup struct {
	Property    string
	Decisive    bool
	Count       int
	First, Rest []violationView
	RestStart   int
	Uncounted   int
}

type zoomView struct {
	Title string
	SVG   template.HTML
}

type statRow struct{ Name, Value string }

type porcupineLink struct{ Name, Link, Note string }

var outcomeNotes = map[scenarios.Outcome]string{
	scenarios.Met:          "(the cell did what its expectation says)",
	scenarios.Regression:   "(a safe cell failed: a regression)",
	scenarios.Missed:       "(an unsafe cell passed: the harness missed a known bug)",
	scenarios.Inconclusive: "(the checker could not decide within its budget)",
	scenarios.HarnessError: "(the harness could not run this cell)",
	scenarios.Skipped:      "(not run)",
	scenarios.Interrupted:  "(the run was interrupted; the partial history was checked)",
}

func writeCellPage(page, dir string, s *Summary, c *scenarios.CellResult, opts HTMLOptions) error {
	pageDir := filepath.Dir(page)
	v := cellView{CSS: template.CSS(css), Scenario: c.Scenario, Lock: c.Lock, Expect: string(c.Expect),
		Verdict: orDash(string(c.Verdict)), Outcome: string(c.Outcome), OutcomeNote: outcomeNotes[c.Outcome], Error: c.Error,
		Rerun: c.Rerun, RunSeed: c.RunSeed, CellSeed: c.CellSeed, Results: c.Results}
	v.IndexLink = relLink(pageDir, filepath.Join(dir, "index.html"))
	if sc, err := scenarios.Get(c.Scenario); err == nil {
		v.Description = sc.Description
	}
	var rep *checker.Report
	var h *history.History
	if c.History != "" {
		path := c.History
		if !filepath.IsAbs(path) {
			path = filepath.Join(opts.HistoryBase, path)
		}
		v.HistoryLink = relLink(pageDir, path)
		v.HistoryName = filepath.Base(path)
		var err error
		if h, err = history.LoadFile(path); err != nil {
			v.Recheck = "the history could not be read: " + err.Error()
			h = nil
		}
	}
	if h != nil {
		v.Events = len(h.Events)
		rep = checker.Check(context.Background(), h, checker.Options{Budget: opts.Budget, InfoLimit: opts.InfoLimit, Lock: c.Lock})
		if c.Verdict != "" && rep.Verdict != c.Verdict {
			v.Recheck = fmt.Sprintf("re-checking the history for this page gave %s, the run said %s", rep.Verdict, c.Verdict)
		}
		v.Results = rep.Results
		tl := buildTimeline(h, rep)
		v.Timeline = tl.svg(0, h.End, opts.Width)
		for _, w := range zoomWindows(rep, h.End) {
			v.Zooms = append(v.Zooms, zoomView{Title: w.title, SVG: tl.svg(w.from, w.to, opts.Width)})
		}
		v.Porcupine = writePorcupine(page, rep, tl)
	}
	// Decisive properties first: they are the verdict.
	for _, decisive := range []bool{true, false} {
		for _, r := range v.Results {
			if r.Decisive != decisive || r.ViolationCount == 0 {
				continue
			}
			g := violationGroup{Property: string(r.Property), Decisive: r.Decisive, Count: r.ViolationCount, RestStart: 6}
			for i, viol := range r.Violations {
				vv := violationView{At: history.Seconds(viol.At), Summary: viol.Summary}
				if i < 5 {
					g.First = append(g.First, vv)
				} else {
					g.Rest = append(g.Rest, vv)
				}
			}
			g.Uncounted = r.ViolationCount - len(r.Violations)
			v.Groups = append(v.Groups, g)
		}
	}
	st := c.Stats
	if rep != nil {
		st = rep.Stats
	}
	v.Stats = statRows(st, c)
	var buf bytes.Buffer
	if err := cellTmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("reports: cell %s/%s: %w", c.Scenario, c.Lock, err)
	}
	return writeFile(page, buf.Bytes())
}

func statRows(st checker.Stats, c *scenarios.CellResult) []statRow {
	ms := func(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }
	rows := []statRow{
		{"duration", history.Seconds(st.Duration)},
		{"clients", fmt.Sprint(st.Clients)},
		{"acquisitions ok / refused / indefinite", fmt.Sprintf("%d / %d / %d", st.AcquireOK, st.AcquireRefused, st.AcquireIndefinite)},
		{"cycles (per second)", fmt.Sprintf("%d (%.0f/s)", st.Cycles, st.CyclesPerSecond)},
		{"acquire latency p50 / p99", ms(st.AcquireP50) + " / " + ms(st.AcquireP99)},
		{"reads / writes accepted", fmt.Sprintf("%d / %d", st.Reads, st.Writes)},
		{"stale fences rejected", fmt.Sprint(st.StaleFence)},
		{"releases that found no lease", fmt.Sprint(st.ReleasesNotHeld)},
		{"renewals ok / failed", fmt.Sprintf("%d / %d", st.RenewalsOK, st.RenewalsFailed)},
		{"overlapping holds", fmt.Sprint(st.Overlaps)},
		{"longest free while someone was trying", fmt.Sprintf("%s (key %s at %s)", ms(st.LongestFree), orDash(st.LongestFreeKey), history.Seconds(st.LongestFreeAt))},
		{"fault windows", fmt.Sprint(c.Faults)},
		{"cell wall time", c.Elapsed.Round(time.Millisecond).String()},
	}
	if st.FirstViolation >= 0 {
		rows = append(rows, statRow{"time to first violation", history.Seconds(st.FirstViolation)})
	}
	return rows
}

type window struct {
	from, to int64
	title    string
}

// zoomWindows returns up to six windows, one per episode: violations
// (decisive ones, or all when none is decisive) whose moments lie within
// 100 ms of each other form one episode, shown from shortly before its
// first moment to shortly after its last, at most 700 ms wide.
func zoomWindows(rep *checker.Report, end int64) []window {
	const (
		gap    = 100_000_000
		before = 80_000_000
		after  = 40_000_000
		widest = 700_000_000
	)
	var vs []checker.Violation
	for _, decisive := range []bool{true, false} {
		for _, r := range rep.Results {
			if r.Decisive == decisive {
				vs = append(vs, r.Violations...)
			}
		}
		if len(vs) > 0 {
			break
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].At < vs[j].At })
	type episode struct {
		first, last int64
		n           int
		lead        string
	}
	var eps []episode
	for _, v := range vs {
		if n := len(eps); n > 0 && v.At-eps[n-1].last <= gap {
			eps[n-1].last = v.At
			eps[n-1].n++
			continue
		}
		eps = append(eps, episode{first: v.At, last: v.At, n: 1, lead: v.Summary})
	}
	var out []window
	for i, e := range eps {
		if i == 6 {
			break
		}
		from := max(e.first-before, 0)
		to := min(e.last+after, end, from+widest)
		title := fmt.Sprintf("episode %d, %s to %s: %d violation(s); first: %s", i+1, history.Seconds(from), history.Seconds(to), e.n, e.lead)
		out = append(out, window{from: from, to: to, title: title})
	}
	return out
}

// writePorcupine writes porcupine's visualization of each property that
// has linearization info, with the fault windows drawn as annotations.
func writePorcupine(page string, rep *checker.Report, tl *timeline) []porcupineLink {
	var out []porcupineLink
	base := strings.TrimSuffix(page, ".html")
	for _, r := range rep.Results {
		if r.Info == nil || r.Model == nil {
			continue
		}
		var ann []porcupine.Annotation
		for _, f := range tl.faults {
			ann = append(ann, porcupine.Annotation{Tag: "faults", Start: f.start, End: f.end, Description: f.name,
				Details: f.targets, BackgroundColor: "#fde3b5"})
		}
		r.Info.AddAnnotations(ann)
		path := fmt.Sprintf("%s-porcupine-%s.html", base, r.Property)
		f, err := os.Create(path)
		if err != nil {
			continue
		}
		err = porcupine.Visualize(*r.Model, *r.Info, f)
		f.Close()
		if err != nil {
			os.Remove(path)
			continue
		}
		note := "every operation, with the longest linearizable prefix highlighted"
		if r.Operations > 5000 {
			note = "the failing segments only (the history is too long to draw whole)"
		}
		out = append(out, porcupineLink{Name: string(r.Property), Link: filepath.Base(path), Note: note})
	}
	return out
}

func relLink(fromDir, target string) string {
	absFrom, err1 := filepath.Abs(fromDir)
	absTarget, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(target)
	}
	rel, err := filepath.Rel(absFrom, absTarget)
	if err != nil {
		return filepath.ToSlash(absTarget)
	}
	return filepath.ToSlash(rel)
}
