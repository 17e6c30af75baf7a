package reports

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"html/template"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/results"
)

//go:embed templates
var templatesFS embed.FS

var (
	css       = mustRead("templates/style.css")
	indexTmpl = template.Must(template.New("index").Parse(mustRead("templates/index.html.tmpl")))
	cellFuncs = template.FuncMap{"pct": func(f float64) float64 { return 100 * f }, "secs": history.Seconds,
		"sub": func(a, b int) int { return a - b }}
	cellTmpl = template.Must(template.New("cell").Funcs(cellFuncs).Parse(mustRead("templates/cell.html.tmpl")))
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
	// Budget for re-checking a saved history (`lockchaos report DIR`: the
	// pages need porcupine's linearization info, which summary.json does
	// not keep). Default: the checker's. Cells fresh from a run carry their
	// report and are not checked again.
	Budget time.Duration
	// InfoLimit: histories up to this many operations get porcupine's view
	// of the whole run; larger ones, of their failing segments. Default
	// checker.ReportInfoLimit.
	InfoLimit int
	// Width of the timelines in pixels. Default 1200.
	Width int
	// HistoryBase resolves relative history paths. Default: the output dir.
	HistoryBase string
	// AllPages writes a page for every run. By default a sweep (Repeat >
	// 1) gets pages for the runs that did not meet their expectation and
	// for the first run of each cell: pages for thousands of passing
	// schedules cost gigabytes and a tenth of a sweep's CPU, and `lockchaos
	// report --all-pages DIR` renders them from the histories later.
	AllPages bool
	// Context, when set, ends the pages early: a page not yet begun is
	// not written once it is done, no index is written, and WriteHTML
	// returns its error (lockchaos report on SIGINT). Nil: never.
	Context context.Context
	// Verify re-checks a saved history for its page: verify.ForPages, the
	// one verification path, handed in by the caller (reports stays below
	// faults, whose dangerous moments judging a window needs). Nil: a page
	// whose cell carries no report says its history was not re-checked.
	Verify Verifier
}

// HTMLResult lists what WriteHTML wrote.
type HTMLResult struct {
	Index   string
	Pages   []string
	Elapsed time.Duration
	// Unpaged counts the met runs of a sweep given no page (see
	// HTMLOptions.AllPages).
	Unpaged int
	// Unread are the pages written without their history, which could
	// not be read; each page says why.
	Unread []*HistoryError
}

// WriteHTML writes index.html (the matrix) and one page per cell run under
// dir/cells, with porcupine's visualizations beside them. Every page is
// self-contained: no network, no scripts of ours (porcupine's pages carry
// their own inline script).
func WriteHTML(dir string, s *Summary, opts HTMLOptions) (*HTMLResult, error) {
	start := time.Now()
	if opts.InfoLimit == 0 {
		opts.InfoLimit = checker.ReportInfoLimit
	}
	if opts.Width == 0 {
		opts.Width = 1200
	}
	if opts.HistoryBase == "" {
		opts.HistoryBase = dir
	}
	res := &HTMLResult{}
	todo := pagedCells(s, opts, res)
	pages, unread, err := writeCellPages(dir, s, todo, opts)
	if err != nil {
		return nil, err
	}
	links := map[*results.Cell]string{}
	for i, c := range todo {
		links[c] = filepath.ToSlash(cellPageName(c, s.Repeat > 1))
		res.Pages = append(res.Pages, pages[i])
		if unread[i] != nil {
			res.Unread = append(res.Unread, unread[i])
		}
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

// pagedCells lists the cells that get a page: all of them but the skipped
// ones without a history and, in a repeated run without AllPages, the
// later runs of a cell that met its claim (counted in res.Unpaged).
func pagedCells(s *Summary, opts HTMLOptions, res *HTMLResult) []*results.Cell {
	var todo []*results.Cell
	seen := map[[2]string]bool{}
	for _, c := range s.Cells {
		if c.Outcome == results.Skipped && c.History == "" {
			continue
		}
		first := !seen[[2]string{c.Scenario, c.Lock}]
		seen[[2]string{c.Scenario, c.Lock}] = true
		if s.Repeat > 1 && !opts.AllPages && c.Outcome == results.Met && !first {
			res.Unpaged++
			continue
		}
		todo = append(todo, c)
	}
	return todo
}

// writeCellPages writes the cells' pages and returns their paths and, for
// each, the history that could not be read (or nil), in the cells' order.
// Pages are independent (each re-reads and re-checks its history):
// written on every core, a sweep's thousands of pages take a fraction of
// the time.
func writeCellPages(dir string, s *Summary, todo []*results.Cell, opts HTMLOptions) ([]string, []*HistoryError, error) {
	pages := make([]string, len(todo))
	errs := make([]error, len(todo))
	unread := make([]*HistoryError, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for i := range next {
				if opts.Context != nil && opts.Context.Err() != nil {
					errs[i] = opts.Context.Err()
					continue
				}
				pages[i] = filepath.Join(dir, cellPageName(todo[i], s.Repeat > 1))
				unread[i], errs[i] = writeCellPage(pages[i], dir, s, todo[i], opts)
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return pages, unread, nil
}

// cellPageName is a file name safe whatever the scenario is called; a hash
// keeps two names that sanitise alike apart.
func cellPageName(c *results.Cell, withSeed bool) string {
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

type matrixCell struct {
	Present                                      bool
	Class, Outcome, Verdict, Detail, Title, Link string
	// Liveness is the liveness line: what liveness showed, and what was
	// expected of it ("" for an n/a cell).
	Liveness string
}

type matrixRow struct {
	Scenario, Description string
	Cells                 []matrixCell
}

type runRow struct {
	Link, Scenario, Lock, Safety, Liveness, Outcome, First string
	Seed                                                   int64
	Violations                                             int
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
	TimeScale                                                           string
	Reruns                                                              []string
	Interrupted, Simulated                                              bool
	Totals                                                              []total
	Locks                                                               []string
	Rows                                                                []matrixRow
	Runs                                                                []runRow
	Replays                                                             []results.Replay
}

func indexData(s *Summary, links map[*results.Cell]string) indexView {
	v := indexView{CSS: template.CSS(css), Title: template.CSS(fmt.Sprintf("seed %d", s.Seed)), Seed: s.Seed,
		LastSeed: s.Seed + int64(max(s.Repeat, 1)) - 1, Repeat: s.Repeat,
		Started: s.Started.Format(time.RFC3339), Elapsed: s.Elapsed.Round(time.Millisecond).String(), Version: s.Version,
		GoVersion: s.GoVersion, RedisVersion: orDash(s.RedisVersion), Backend: orDash(s.Backend), Shards: s.Shard,
		Reruns: strings.Split(cmp.Or(s.Rerun, s.Command), "\n"), Interrupted: s.Interrupted, Simulated: s.Simulated,
		TimeScale: timeScaleText(s), Replays: s.Replays}
	for k, n := range s.Totals {
		v.Totals = append(v.Totals, total{k, n})
	}
	sort.Slice(v.Totals, func(i, j int) bool { return v.Totals[i].Name < v.Totals[j].Name })
	// Columns and rows in the one order of every output (Order).
	scens, locks := Order(s)
	v.Locks = locks
	for _, sc := range scens {
		v.Rows = append(v.Rows, matrixRow{Scenario: sc})
	}
	// Repeats of a cell are folded into one.
	type agg struct{ runs []*results.Cell }
	cells := map[string]*agg{}
	for _, c := range s.Cells {
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
			v.Runs = append(v.Runs, runRow{Link: links[c], Scenario: c.Scenario, Lock: c.Lock, Safety: c.SafetyText(),
				Liveness: c.LivenessText(), Outcome: string(c.Outcome), First: first, Seed: c.RunSeed, Violations: c.Violations})
		}
	}
	return v
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeScaleText(s *Summary) string {
	t := s.TimeScaleText()
	if s.Calibration != "" && s.TimeScale != 0 {
		t += " (" + s.Calibration + ")"
	}
	return t
}
