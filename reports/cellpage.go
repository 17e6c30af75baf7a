package reports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"html/template"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/safefile"
	"github.com/lockchaos/lockchaos/results"
)

type cellView struct {
	CSS                                                              template.CSS
	IndexLink, Scenario, Lock, Description, Expect, Verdict, Outcome string
	Safety, Liveness                                                 string // each group's verdict (expected)
	OutcomeNote, Error, Rerun, HistoryLink, HistoryName, Recheck     string
	RunSeed, CellSeed                                                int64
	Events                                                           int
	Results                                                          []resultRow
	Groups                                                           []violationGroup
	Timeline                                                         template.HTML
	Legend                                                           liveLegend
	ServerLegend                                                     serverLegend
	Server                                                           *serverSection
	LiveSection                                                      *livenessView
	Zooms                                                            []zoomView
	Stats                                                            []statRow
	Porcupine                                                        []porcupineLink
	Evidence                                                         *checker.Evidence
	Proof                                                            checker.Proof
	Incidents                                                        []checker.Incident
	TimeScale                                                        float64
	Planned, Ran                                                     time.Duration
	Simulated                                                        bool
	Backend                                                          string
	// Partial says the checkers read what a harness error left: no verdict,
	// and no property shown as passing.
	Partial bool
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

var outcomeNotes = map[results.Outcome]string{
	results.Met:          "(the cell did what its expectation says)",
	results.Regression:   "(a safe or live cell failed, or a property not allowed to: a regression)",
	results.Missed:       "(an unsafe or stuck cell passed: the harness missed a known bug)",
	results.Unknown:      "(the checker could not decide within its budget)",
	results.Inconclusive: "(a pass below the evidence floor: the dangerous moment did not happen often enough to mean anything)",
	results.HarnessError: "(the harness could not run this cell)",
	results.Skipped:      "(not run)",
	results.Interrupted:  "(the run was interrupted; the partial history was checked)",
}

// outcomeNote explains the outcome, with the cell's why.
func outcomeNote(c *results.Cell) string {
	if c.Why != "" {
		return outcomeNotes[c.Outcome] + " " + c.Why
	}
	return outcomeNotes[c.Outcome]
}

// HistoryError is a cell page built without its history, which could
// not be read (missing, unreadable, malformed): the page says why instead
// of showing the run, and `lockchaos report` fails once every page is
// written.
type HistoryError struct {
	Page, History string
	Err           error
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("%s: the history %s could not be read: %v", e.Page, e.History, e.Err)
}

func (e *HistoryError) Unwrap() error { return e.Err }

// writeCellPage writes c's page; unread says its history could not be
// read (the page was written all the same), err that it was not written.
func writeCellPage(page, dir string, s *Summary, c *results.Cell, opts HTMLOptions) (unread *HistoryError, err error) {
	pageDir := filepath.Dir(page)
	v := cellView{CSS: template.CSS(css), Simulated: c.Simulated, Backend: c.Backend, Scenario: c.Scenario, Lock: c.Lock,
		Expect: c.Expected().String(), Verdict: verdictWord(c), Outcome: string(c.Outcome), OutcomeNote: outcomeNote(c),
		Error: c.Error, Rerun: c.Rerun, RunSeed: c.RunSeed, CellSeed: c.CellSeed,
		Safety: c.SafetyText(), Liveness: c.LivenessText()}
	rs := c.Results
	v.IndexLink = relLink(pageDir, filepath.Join(dir, "index.html"))
	v.Description = c.Description
	v.TimeScale, v.Planned, v.Ran = max(c.TimeScale, 1), c.Planned, c.Ran.Round(time.Millisecond)
	h, rep, err := cellEvidence(c, opts)
	if opts.Context != nil && opts.Context.Err() != nil {
		// A check cut short says unknown where the run said otherwise:
		// no page rather than a wrong one.
		return nil, opts.Context.Err()
	}
	if errors.As(err, &unread) {
		unread.Page = page
	}
	if c.History != "" {
		path := historyPath(c, opts)
		v.HistoryLink, v.HistoryName = relLink(pageDir, path), filepath.Base(path)
	}
	switch {
	case unread != nil:
		v.Recheck = "the history could not be read: " + unread.Err.Error()
	case err != nil:
		v.Recheck = err.Error()
	}
	if h != nil && rep != nil {
		rs = rep.Results
		if err := v.showRun(page, c, h, rep, opts); err != nil {
			return unread, err
		}
	}
	v.Groups = violationGroups(rs)
	if c.Outcome == results.HarnessError {
		v.Partial, rs = true, withoutPasses(rs)
	}
	v.Results = resultRows(rs)
	st := c.Stats
	if rep != nil {
		st = rep.Stats
	}
	v.Stats = statRows(st, c)
	var buf bytes.Buffer
	if err := cellTmpl.Execute(&buf, v); err != nil {
		return unread, fmt.Errorf("reports: cell %s/%s: %w", c.Scenario, c.Lock, err)
	}
	return unread, writeFile(page, buf.Bytes())
}

// showRun fills in what the history and its report show: the evidence,
// incidents, liveness, the timeline and its zooms, the server's view, and
// porcupine's pages (written beside the page).
func (v *cellView) showRun(page string, c *results.Cell, h *history.History, rep *checker.Report, opts HTMLOptions) error {
	v.Events = len(h.Events)
	if c.Verdict != "" && rep.Verdict != c.Verdict {
		v.Recheck = fmt.Sprintf("re-checking the history for this page gave %s, the run said %s", rep.Verdict, c.Verdict)
	}
	v.Evidence = &rep.Evidence
	v.Proof = rep.Evidence.Against(rep.Results)
	v.Incidents = rep.Incidents
	v.LiveSection = livenessSection(rep, h.Header, or(h.Header.TTL, c.TTL))
	tl := buildTimeline(h, rep)
	v.Timeline, v.Legend, v.ServerLegend = tl.svg(0, h.End, opts.Width), tl.legend(), tl.serverLegend()
	v.Server = serverSectionOf(tl, h.End)
	for _, w := range zoomWindows(rep, h.End) {
		v.Zooms = append(v.Zooms, zoomView{Title: w.title, SVG: tl.svg(w.from, w.to, opts.Width)})
	}
	links, err := writePorcupine(page, c.Name(), v.IndexLink, rep, tl, opts.InfoLimit)
	v.Porcupine = links
	return err
}

// violationGroups lists each property's violations, decisive properties
// first: they are the verdict.
func violationGroups(rs []checker.Result) []violationGroup {
	var out []violationGroup
	for _, decisive := range []bool{true, false} {
		for _, r := range rs {
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
			out = append(out, g)
		}
	}
	return out
}

// Verifier checks the history file at path as every other reader of a
// history does (verify.ForPages): its unjudged windows judged, an empty
// history unknown. It returns the history read, for the page to draw.
type Verifier func(ctx context.Context, path string, opts checker.Options) (*history.History, *checker.Report, error)

// cellEvidence returns the cell's history and the checker's report on it:
// the ones the run kept in memory (the checker ran once, during the run),
// or, for `lockchaos report DIR`, the saved history verified again.
func cellEvidence(c *results.Cell, opts HTMLOptions) (*history.History, *checker.Report, error) {
	if c.Checked != nil && c.Report != nil {
		return c.Checked, c.Report, nil
	}
	if c.HistoryDropped {
		return nil, nil, errors.New("the history was not kept: the sweep deleted it once the run met its " +
			"expectation (--keep-histories keeps every run's); the rerun line below runs it again")
	}
	if c.History == "" {
		return nil, nil, nil
	}
	if opts.Verify == nil {
		return nil, nil, errors.New("the history was not re-checked: no verifier was given (reports.HTMLOptions.Verify)")
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	path := historyPath(c, opts)
	h, rep, err := opts.Verify(ctx, path, checker.Options{Budget: opts.Budget, InfoLimit: opts.InfoLimit, Lock: c.Lock})
	if err != nil {
		return nil, nil, &HistoryError{History: path, Err: err}
	}
	return h, rep, nil
}

func historyPath(c *results.Cell, opts HTMLOptions) string {
	if filepath.IsAbs(c.History) {
		return c.History
	}
	return filepath.Join(opts.HistoryBase, c.History)
}

func statRows(st checker.Stats, c *results.Cell) []statRow {
	ms := func(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }
	rows := []statRow{
		{"duration", history.Seconds(st.Duration)},
		{"clients", fmt.Sprint(st.Clients)},
		{"acquisitions ok / refused / indefinite", fmt.Sprintf("%d / %d / %d", st.AcquireOK, st.AcquireRefused, st.AcquireIndefinite)},
		{"cycles (per second)", fmt.Sprintf("%d (%s)", st.Cycles, CycleRate(st.Cycles, st.Duration))},
		{"acquire latency p50 / p99", ms(st.AcquireP50) + " / " + ms(st.AcquireP99)},
		{"reads / writes accepted", fmt.Sprintf("%d / %d", st.Reads, st.Writes)},
		{"stale fences rejected", fmt.Sprint(st.StaleFence)},
		{"releases that found no lease", fmt.Sprint(st.ReleasesNotHeld)},
		{"renewals ok / failed", fmt.Sprintf("%d / %d", st.RenewalsOK, st.RenewalsFailed)},
		{"overlapping holds", fmt.Sprint(st.Overlaps)},
		{"longest free while someone was trying", fmt.Sprintf("%s (key %s at %s)",
			ms(st.LongestFree), orDash(st.LongestFreeKey), history.Seconds(st.LongestFreeAt))},
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

// zoomWindows returns a window for each of the first six incidents: the
// checker's grouping of the violations (by the fault window they
// followed), the one the page's incident list shows, so a zoom and its
// incident name the same violations and the same span. Each is drawn from
// shortly before the incident's start to shortly after its end, at most
// 700 ms wide (a longer incident's title says how much is shown).
func zoomWindows(rep *checker.Report, end int64) []window {
	const (
		before = 80_000_000
		after  = 40_000_000
		widest = 700_000_000
	)
	var out []window
	for i, in := range rep.Incidents {
		if i == 6 {
			break
		}
		from := max(in.Start-before, 0)
		to := max(min(in.End+after, end, from+widest), from)
		title := fmt.Sprintf("incident %d, %s to %s: %d violation(s)", i+1, history.Seconds(in.Start), history.Seconds(in.End),
			in.Violations)
		if in.Fault != "" {
			title += " after " + in.Fault
		}
		if to < in.End {
			title += fmt.Sprintf(" (shown to %s)", history.Seconds(to))
		}
		out = append(out, window{from: from, to: to, title: title})
	}
	return out
}

// writePorcupine writes porcupine's visualization of each property that
// has linearization info, with the fault windows drawn as annotations.
func writePorcupine(page, cellName, indexLink string, rep *checker.Report, tl *timeline, infoLimit int) ([]porcupineLink, error) {
	var out []porcupineLink
	base := strings.TrimSuffix(page, ".html")
	// The cell page itself is written after this: make its folder now.
	if err := safefile.MkdirAll(filepath.Dir(page)); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
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
		f, err := safefile.Create(path)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		var buf bytes.Buffer
		err = porcupine.Visualize(*r.Model, *r.Info, &buf)
		if err == nil {
			_, err = f.Write(dressPorcupine(buf.Bytes(), cellName, string(r.Property), filepath.Base(page), indexLink))
		}
		err = errors.Join(err, f.Close())
		if err != nil {
			_ = safefile.Remove(path)
			return nil, fmt.Errorf("reports: porcupine view of %s: %w", r.Property, err)
		}
		note := "every operation, with the longest linearizable prefix highlighted"
		if r.Operations > infoLimit {
			note = "the failing segments only (the history is too long to draw whole)"
		}
		out = append(out, porcupineLink{Name: string(r.Property), Link: filepath.Base(path), Note: note})
	}
	return out, nil
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

// dressPorcupine gives porcupine's page a title naming the cell and the
// property, a link back to the cell's page and the matrix, and opens it at
// the first error (porcupine's own "jump to first error" link, clicked
// once the drawing is done).
func dressPorcupine(page []byte, cell, property, cellPage, indexLink string) []byte {
	title := html.EscapeString(fmt.Sprintf("%s: %s (porcupine)", cell, property))
	page = bytes.Replace(page, []byte("<title>Porcupine</title>"), []byte("<title>"+title+"</title>"), 1)
	back := fmt.Sprintf(`<body>
    <p style="font-family: sans-serif; font-size: 13px"><a href="%s">&larr; %s</a> &middot; <a href="%s">the matrix</a> &middot; %s</p>`,
		html.EscapeString(cellPage), html.EscapeString(cell), html.EscapeString(indexLink), html.EscapeString(property))
	page = bytes.Replace(page, []byte("<body>"), []byte(back), 1)
	jump := `<script>window.addEventListener('load', () => setTimeout(() => {
  const j = document.querySelector('#jump-link'); if (j) j.dispatchEvent(new MouseEvent('click', {bubbles: true}))
}, 0))</script>
  </body>`
	if i := bytes.LastIndex(page, []byte("</body>")); i >= 0 {
		page = append(page[:i:i], append([]byte(jump), page[i+len("</body>"):]...)...)
	}
	return page
}

// withoutPasses copies a harness error's property results with each pass
// blanked (shown "-"): a history cut short by a broken harness passes
// nothing, though the violations it holds are real and stay.
func withoutPasses(rs []checker.Result) []checker.Result {
	out := make([]checker.Result, len(rs))
	for i, r := range rs {
		if r.Status == checker.Pass {
			r.Status = ""
		}
		out[i] = r
	}
	return out
}
