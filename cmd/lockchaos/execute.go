package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/internal/progress"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/verify"
)

// session is one run of the matrix: what was asked (cfg), the cells it
// selected, the command line that asked, the backends the cells run and
// replay on, and where it reports.
type session struct {
	cfg            runConfig
	cells          []scenarios.Cell
	args           []string // after "run", for summary.json
	be             backend.Backend
	redisVersion   string
	replay         backend.Backend // --replay-on, or nil
	replayVersion  string
	stdout, stderr io.Writer
	progress       *progress.Progress
	stream         *reports.Stream // --json, or nil
	notStarted     int             // runs an interrupt kept from starting
}

// execute runs the selected cells on the backend, replays their findings,
// writes every report and returns the exit code.
// The output directory was made and checked before (claimOut, outdir.Claim). An
// interrupt (SIGINT, SIGTERM) at any point, calibration included, ends in
// the summary of what ran and exit 130 or 143.
func (s *session) execute() int {
	ctx, stop, caught := interrupt.Context()
	defer stop()
	// Last line of defence: whatever happens, no redis-server outlives us.
	defer backend.KillAll()

	started := time.Now()
	t, err := scenarios.MeasureTiming(ctx, s.be, s.cfg.timeScale)
	switch {
	case ctx.Err() != nil:
		// Interrupted while measuring: what failed is the measurement
		// the signal cut short, not the harness.
		t = interruptedTiming(s.cfg.timeScale)
	case err != nil:
		fmt.Fprintf(s.stderr, "lockchaos run: %v\n", err)
		return exitHarness
	case t.Measured:
		fmt.Fprintf(s.stderr, "lockchaos: machine now: %s\n", t.Calibration)
	}
	on := target{be: s.be, Timing: t, named: s.cfg.rerunBackend(s.be)}
	var ran []*results.Cell
	if ctx.Err() == nil {
		ran = s.runMatrix(ctx, on)
	} else {
		s.notStarted = len(s.cells) * s.cfg.repeat
	}
	if s.notStarted > 0 {
		fmt.Fprintf(s.stderr, "lockchaos run: %d run(s) not started (interrupted)\n", s.notStarted)
	}
	matrixTime := time.Since(started)
	var replays []results.Replay
	if s.replay != nil && ctx.Err() == nil {
		replays = s.replayFindings(ctx, ran)
	}
	sum := s.summary(on, started, matrixTime, ran, replays, ctx.Err() != nil)
	reportErr := s.report(sum)
	return s.exit(caught(), sum, reportErr)
}

// interruptedTiming is the timing of a run interrupted while calibrating:
// the scale given, else none (0), with the reason: no cell ran, and a
// "time scale 1.00" would claim a measurement that never finished.
func interruptedTiming(given float64) scenarios.Timing {
	if given != 0 {
		return scenarios.Timing{Scale: given}
	}
	return scenarios.Timing{Calibration: reports.CalibrationInterrupted}
}

// runMatrix runs the cells on t, showing progress on stderr and, with
// --json, streaming on stdout.
func (s *session) runMatrix(ctx context.Context, on target) []*results.Cell {
	c := s.cfg
	runs := len(s.cells) * c.repeat
	// No more goroutines than runs: --parallel 1000 for one cell is one.
	parallel := max(1, min(c.parallel, runs))
	s.progress = progress.New(s.stderr, runs)
	if c.asJSON {
		s.stream = reports.NewStream(s.stdout)
	}
	fmt.Fprintf(s.stderr, "lockchaos %s: %d cell(s) x %d, seed %d, backend %s, redis-server %s, parallel %d, time scale %.2f, out %s\n",
		version, len(s.cells), c.repeat, c.seed, s.be.Name(), s.redisVersion, parallel, on.Scale, c.out)
	s.stream.Emit(reports.StreamEvent{
		Type: "start", Version: version, Backend: s.be.Name(), Cells: len(s.cells), Repeat: c.repeat, Seed: c.seed, Simulated: on.Virtual,
	})
	ran := scenarios.RunMatrix(ctx, s.cells, scenarios.MatrixOptions{
		Options:  c.cellOptions(on, func(msg string) { fmt.Fprintln(s.stderr, msg) }),
		Parallel: parallel, Repeat: c.repeat, SameSeed: c.sameSeed,
		// A simulated run comes back from its seed; a real one does not.
		DropMetHistories: on.Virtual && !c.keepHistories,
		Progress:         s.finished,
		Started: func(name string, seed int64) {
			if ctx.Err() != nil {
				return // it will not start (notStarted)
			}
			s.progress.Started(name, seed)
			s.stream.Emit(reports.StreamEvent{Type: "cell-started", Cell: name, RunSeed: seed})
		},
	})
	s.progress.Done()
	return ran
}

// finished shows a cell run that finished, and keeps less of it in a
// sweep.
//
// A run the interrupt kept from starting is only counted (the run prints
// one line for them all): a --repeat sweep interrupted early would
// otherwise print a line for each of thousands.
func (s *session) finished(r *results.Cell, done, total int) {
	if r.NotStarted() {
		s.notStarted++
		s.progress.Forget(r)
		return
	}
	s.progress.Cell(r, done, total)
	s.stream.Emit(reports.StreamEvent{
		Type: "cell-finished", Cell: r.Name(), RunSeed: r.RunSeed, Result: r, Done: done, Total: total,
	})
	if total > scenarios.KeepInMemory && (r.History != "" || r.HistoryDropped) {
		scenarios.ForgetDetail(r)
	}
}

// summary is summary.json's content: the cells that ran on t in
// matrixTime, and the replays of their findings.
func (s *session) summary(
	on target, started time.Time, matrixTime time.Duration, ran []*results.Cell, replays []results.Replay, interrupted bool,
) *reports.Summary {
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: version,
		GoVersion: runtime.Version(), RedisVersion: s.redisVersion, Backend: s.be.Name(), Seed: s.cfg.seed, Repeat: s.cfg.repeat,
		Shard: s.cfg.shard, Started: started, Elapsed: time.Since(started), Command: commandLine(s.args), Rerun: s.rerunAll(on),
		Interrupted: interrupted, Cells: ran, TimeScale: on.Scale, Calibration: on.Calibration, Simulated: on.Virtual, Replays: replays}
	sum.Tally()
	if len(replays) > 0 {
		// Schedules per second are the matrix's, not the replays' (real
		// Redis, real time).
		sum.SchedulesPerSecond *= sum.Elapsed.Seconds() / matrixTime.Seconds()
	}
	return sum
}

// rerunAll is the line that reruns the whole run on: the command as
// typed with the seed, the time scale (none in virtual time, nor when
// calibration did not finish) and the shard it ran with.
func (s *session) rerunAll(on target) string {
	pins := [][2]string{{"seed", strconv.FormatInt(s.cfg.seed, 10)}}
	if !on.Virtual && on.Scale != 0 {
		pins = append(pins, [2]string{"time-scale", fmt.Sprintf("%.2f", on.Scale)})
	}
	if s.cfg.shard != "" {
		pins = append(pins, [2]string{"shard", s.cfg.shard})
	}
	return rerunLine(s.args, pins)
}

// report writes summary.json, junit.xml and the HTML pages, and shows the
// outcome: the table on stdout, or the summary line of the JSON stream. It
// names only the files it wrote, and returns why any other was not.
func (s *session) report(sum *reports.Summary) error {
	out := s.cfg.out
	wrote, html, err := reports.WriteAll(out, sum, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	if err != nil {
		fmt.Fprintf(s.stderr, "lockchaos run: writing reports: %v\n", err)
	}
	if html != nil {
		for _, u := range html.Unread {
			fmt.Fprintf(s.stderr, "lockchaos run: writing reports: %v\n", u)
		}
	}
	if s.cfg.asJSON {
		s.stream.Emit(reports.StreamEvent{Type: "summary", Summary: sum})
		return err
	}
	w := s.stdout
	reports.WriteText(w, sum, reports.UseColour(w))
	if html != nil {
		wrote = append(wrote, pagesNote(html, sum, out))
	}
	if len(wrote) > 0 {
		fmt.Fprintf(w, "\nwrote %s\n", strings.Join(wrote, ", "))
	}
	return err
}

// pagesNote is what the run says of the HTML it wrote: the index, how
// many cell pages, and why some runs have none.
func pagesNote(html *reports.HTMLResult, sum *reports.Summary, out string) string {
	note := fmt.Sprintf("%s (+%d cell pages, rendered in %s", html.Index, len(html.Pages), html.Elapsed.Round(time.Millisecond))
	if dropped := sum.DroppedHistories(); html.Unpaged > 0 && dropped > 0 {
		note += fmt.Sprintf("; %d met runs without one, %d of whose histories were not kept: --keep-histories", html.Unpaged, dropped)
	} else if html.Unpaged > 0 {
		note += fmt.Sprintf("; %d met runs without one: lockchaos report --all-pages %s", html.Unpaged, out)
	}
	return note + ")"
}

// exit is the run's exit code: the signal's that interrupted it, else
// its outcomes' (reports.Summary.ExitCode).
func (s *session) exit(sig os.Signal, sum *reports.Summary, reportErr error) int {
	written := "partial results written"
	if reportErr != nil {
		written = "partial results not all written (see above)"
	}
	switch code := interrupt.Code(sig); code {
	case 130:
		fmt.Fprintf(s.stderr, "lockchaos run: interrupted (SIGINT); every node stopped, %s\n", written)
		return code
	case 143:
		fmt.Fprintf(s.stderr, "lockchaos run: terminated (SIGTERM); every node stopped, %s\n", written)
		return code
	}
	if reportErr == nil && sum.NothingRan() {
		// A backend that cannot run a shard's cells, or a selection of
		// n/a cells only, tested nothing.
		fmt.Fprintf(s.stderr, "lockchaos run: inconclusive: every cell was skipped (%d), nothing was tested; "+
			"the table says why each was\n", len(sum.Cells))
	}
	return sum.ExitCode(reportErr == nil)
}
