// Package reports turns run results into files: summary.json (every
// cell's verdict, outcome, stats, seed and rerun command), junit.xml (one
// test case per cell run, for CI), self-contained HTML pages (an index and
// one page per cell, with its timeline) and Markdown tables.
package reports

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/internal/safefile"
	"github.com/lockchaos/lockchaos/results"
)

// FormatVersion of summary.json. Format 2 (docs/schema/summary.v2.json)
// gave each cell an expectation and a verdict per property group (safety,
// liveness); ReadJSON still reads format 1, whose cells were all safety.
const FormatVersion = 2

// ErrMalformed wraps errors reading a summary.
var ErrMalformed = errors.New("reports: malformed summary")

// Summary is one run (or one shard of one).
type Summary struct {
	Format       int    `json:"format"`
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	GoVersion    string `json:"go_version"`
	RedisVersion string `json:"redis_version,omitempty"`
	// PostgresVersion is the PostgreSQL server's version, when PostgreSQL
	// cells ran.
	PostgresVersion string        `json:"postgres_version,omitempty"`
	Backend         string        `json:"backend"`
	Seed            int64         `json:"seed"`
	Repeat          int           `json:"repeat"`
	Shard           string        `json:"shard,omitempty"`
	Started         time.Time     `json:"started"`
	Elapsed         time.Duration `json:"elapsed_ns"`
	Command         string        `json:"command"`
	// Rerun reruns the whole run: Command with the seed, time scale and
	// shard the run had pinned (older summaries have none); merged shards
	// have one line per shard.
	Rerun       string `json:"rerun,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// TimeScale is the factor every cell's times were stretched by, and
	// Calibration the measurement it came from ("" when forced). No
	// scale (0) with CalibrationInterrupted: the run was interrupted
	// before calibration finished, and no cell ran.
	TimeScale   float64 `json:"time_scale,omitempty"`
	Calibration string  `json:"calibration,omitempty"`
	// Simulated says every cell ran in the simulation (virtual time,
	// miniredis), not on real Redis.
	Simulated bool `json:"simulated,omitempty"`
	// SchedulesPerSecond is how many cell runs (each one fault schedule)
	// that ran were decided per wall-clock second.
	SchedulesPerSecond float64 `json:"schedules_per_second,omitempty"`
	// Replays are simulated findings rerun on real Redis (run
	// --replay-on): whether each violation reproduced there.
	Replays    []results.Replay    `json:"replays,omitempty"`
	Totals     map[string]int      `json:"totals"`
	Cells      []*results.Cell     `json:"cells"`
	Aggregates []results.Aggregate `json:"aggregates,omitempty"`
}

// CalibrationInterrupted is a summary's Calibration when the run was
// interrupted before calibration measured the machine.
const CalibrationInterrupted = "not measured: the run was interrupted before calibration finished"

// TimeScaleText is the time scale for people: "1.00", or that it was not
// measured. A summary without one (older versions) ran as designed.
func (s *Summary) TimeScaleText() string {
	if s.TimeScale == 0 && s.Calibration != "" {
		return s.Calibration
	}
	return fmt.Sprintf("%.2f", max(s.TimeScale, 1))
}

// Tally fills Totals (outcome -> count), Aggregates and
// SchedulesPerSecond from Cells and Elapsed.
func (s *Summary) Tally() {
	s.Totals = map[string]int{}
	ran := 0
	for _, c := range s.Cells {
		s.Totals[string(c.Outcome)]++
		if c.Outcome != results.Skipped {
			ran++
		}
	}
	if s.Elapsed > 0 {
		s.SchedulesPerSecond = float64(ran) / s.Elapsed.Seconds()
	}
	s.Aggregates = results.Aggregates(s.Cells)
}

// WriteJSON writes dir/summary.json: what json.MarshalIndent writes,
// byte for byte, but one cell at a time. A sweep's summary is hundreds of
// megabytes (29,000 runs: 376 MB), and building it whole took the run
// from a few hundred megabytes to 5 GB of memory at its very end.
func WriteJSON(dir string, s *Summary) (string, error) {
	path := filepath.Join(dir, "summary.json")
	shell := *s
	shell.Cells = nil
	b, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	const hole = "\n  \"cells\": null"
	head, tail, ok := strings.Cut(string(b), hole)
	if !ok {
		return "", fmt.Errorf("reports: summary has no cells field to fill")
	}
	return path, writeStream(path, func(w *bufio.Writer) error {
		// A bufio.Writer keeps its first error and returns it from every
		// later write and from the Flush writeStream checks: the writes
		// below drop their errors on purpose.
		_, _ = w.WriteString(head)
		_, _ = w.WriteString("\n  \"cells\": ")
		if len(s.Cells) == 0 {
			_, _ = w.WriteString("[]")
		} else {
			_, _ = w.WriteString("[")
			for i, c := range s.Cells {
				cb, err := json.MarshalIndent(c, "    ", "  ")
				if err != nil {
					return fmt.Errorf("reports: cell %s: %w", c.Name(), err)
				}
				if i > 0 {
					_, _ = w.WriteString(",")
				}
				_, _ = w.WriteString("\n    ")
				_, _ = w.Write(cb)
			}
			_, _ = w.WriteString("\n  ]")
		}
		_, _ = w.WriteString(tail)
		return w.WriteByte('\n')
	})
}

// ReadJSON reads a summary.json written by WriteJSON.
func ReadJSON(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	// An editor on Windows may save the file with a byte order mark,
	// which encoding/json refuses ("invalid character 'ï'"): the JSON
	// after it is the summary all the same.
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, path, err)
	}
	if s.Format < 1 || s.Format > FormatVersion {
		return nil, fmt.Errorf("%w: %s: format %d, this lockchaos reads formats 1 to %d", ErrMalformed, path, s.Format, FormatVersion)
	}
	if err := checkOutcomes(&s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, path, err)
	}
	// Summaries of earlier versions gave a harness error the verdict of
	// the history it left (often an empty "pass"); a cell that did not run
	// has none (results.Cell.ShownVerdict).
	for _, c := range s.Cells {
		if c.Outcome == results.HarnessError {
			c.Verdict, c.SafetyVerdict, c.LivenessVerdict = "", "", ""
		}
	}
	if s.Format == 1 {
		upgradeFormat1(&s)
	}
	return &s, nil
}

// checkOutcomes refuses a cell or replay whose outcome is not one
// lockchaos writes: a null or missing "outcome" would read as "" and
// count as a cell that ran and passed (a null cell, as a crash). A
// group's outcome may be absent (not judged), not unknown.
func checkOutcomes(s *Summary) error {
	for i, c := range s.Cells {
		if c == nil {
			return fmt.Errorf("cells[%d] is null", i)
		}
		where := fmt.Sprintf("cells[%d] (%s/%s)", i, c.Scenario, c.Lock)
		if err := errors.Join(checkOutcome(where, "outcome", c.Outcome, false),
			checkOutcome(where, "safety_outcome", c.SafetyOutcome, true),
			checkOutcome(where, "liveness_outcome", c.LivenessOutcome, true)); err != nil {
			return err
		}
	}
	for i, r := range s.Replays {
		if err := checkOutcome(fmt.Sprintf("replays[%d] (%s/%s)", i, r.Scenario, r.Lock), "outcome", r.Outcome, false); err != nil {
			return err
		}
	}
	return nil
}

// checkOutcome says what is wrong with the outcome o in field name of
// where, if anything.
func checkOutcome(where, name string, o results.Outcome, optional bool) error {
	switch {
	case o == "" && optional, o.Valid():
		return nil
	case o == "":
		return fmt.Errorf("%s: %q is null or missing (want one of %s)", where, name, outcomeList())
	}
	return fmt.Errorf("%s: %q is %q, not an outcome (want one of %s)", where, name, o, outcomeList())
}

func outcomeList() string {
	var names []string
	for _, o := range results.Outcomes() {
		names = append(names, string(o))
	}
	return strings.Join(names, ", ")
}

// upgradeFormat1 reads a format 1 summary as format 2: every property
// was a safety one, so a cell's verdict and outcome were its safety
// group's, and nothing was judged of liveness (expected live, the only
// liveness there was). The aggregates are counted again, per group.
func upgradeFormat1(s *Summary) {
	for _, c := range s.Cells {
		c.Liveness = results.Live
		c.SafetyVerdict = c.Verdict
		switch c.Outcome {
		case results.Met, results.Regression, results.Missed, results.Unknown, results.Inconclusive:
			c.SafetyOutcome = c.Outcome
		}
	}
	s.Aggregates = results.Aggregates(s.Cells)
	s.Format = FormatVersion
}

// writeFile writes through a temp file and a rename, so a reader (or a
// crash) never sees half a report.
func writeFile(path string, data []byte) error {
	return writeStream(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeStream is writeFile for a report written piece by piece. The
// temporary file and the rename are safefile's: the folders on the way are
// never links, and a link at path is replaced, not written through.
func writeStream(path string, write func(*bufio.Writer) error) error {
	err := safefile.WriteAtomic(path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<16)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// Merge combines the summaries of several shards (or runs) into one
// matrix. Relative history paths are resolved against each summary's
// directory and made relative to outDir.
func Merge(outDir string, sums []*Summary, dirs []string) *Summary {
	if len(sums) == 0 {
		return &Summary{Format: FormatVersion, Tool: "lockchaos"}
	}
	m := *sums[0]
	m.Cells = nil
	m.Replays = append([]results.Replay(nil), sums[0].Replays...)
	var shards []string
	for i, s := range sums {
		if s.Shard != "" {
			shards = append(shards, s.Shard)
		}
		m.Elapsed = max(m.Elapsed, s.Elapsed)
		if s.Started.Before(m.Started) {
			m.Started = s.Started
		}
		m.Interrupted = m.Interrupted || s.Interrupted
		// One simulated part makes the merged matrix say so (each cell
		// keeps its own mark too).
		m.Simulated = m.Simulated || s.Simulated
		if i > 0 {
			m.Replays = append(m.Replays, s.Replays...)
		}
		for _, c := range s.Cells {
			cc := *c
			if cc.History != "" && !filepath.IsAbs(cc.History) {
				abs := filepath.Join(dirs[i], cc.History)
				if rel, err := filepath.Rel(outDir, abs); err == nil {
					cc.History = rel
				} else {
					cc.History = abs
				}
			}
			m.Cells = append(m.Cells, &cc)
		}
	}
	if len(sums) > 1 {
		m.Shard = strings.Join(shards, ", ")
		m.Rerun = mergedRerun(sums)
	}
	m.Tally()
	return &m
}

// mergedRerun is the rerun lines of the merged runs, one a line, each
// once: each shard's pins its own shard.
func mergedRerun(sums []*Summary) string {
	var lines []string
	for _, s := range sums {
		if l := cmp.Or(s.Rerun, s.Command); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// RelativeHistories rewrites each cell's history path relative to dir, so
// an output directory can be moved or archived whole.
func RelativeHistories(dir string, s *Summary) {
	for _, c := range s.Cells {
		if c.History == "" {
			continue
		}
		if rel, err := filepath.Rel(dir, c.History); err == nil && !strings.HasPrefix(rel, "..") {
			c.History = rel
		}
	}
}
