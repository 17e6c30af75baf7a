// Package session is one run of the matrix, as `lockchaos run` does it:
// calibrate the machine, run the selected cells with progress (and, with
// JSON, a stream), replay the simulation's findings on real Redis, build
// the summary, write every report and decide the exit code. It is the
// run a Go program or a test gets without the command line: the caller
// chooses the cells and backends, this package runs and reports them.
package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/internal/progress"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service"
)

// Options are what one run was asked to do, and where it says so.
type Options struct {
	Cells        []scenarios.Cell
	Backend      backend.Backend
	RedisVersion string
	// PostgresVersion is the PostgreSQL server's `postgres --version`,
	// for runs with PostgreSQL cells ("" otherwise).
	PostgresVersion         string
	Replay                  backend.Backend // real Redis that replays simulated findings, or nil
	ReplayVersion           string
	TimeScale               float64 // 0 measures the machine
	Seed                    int64
	Repeat, Parallel        int
	SameSeed, KeepHistories bool
	JSON                    bool // stream JSON on Stdout instead of the table
	// Shard, Out (the directory, claimed before), the tool's Version and
	// the Command line as typed go into the summary and the start line.
	Shard, Out, Version, Command string

	// CellOptions are the options of every cell run on be with timing
	// t, rerun lines included; notify gets one-line notices, or is nil.
	CellOptions func(be backend.Backend, t scenarios.Timing, notify func(string)) scenarios.Options
	// Rerun is the line that reruns the whole run at timing t.
	Rerun func(t scenarios.Timing) string

	Stdout, Stderr io.Writer
}

// session is a run under way: its options, and what it shows as it goes.
type session struct {
	Options
	progress   *progress.Progress
	stream     *reports.Stream // JSON, or nil
	notStarted int             // runs an interrupt kept from starting
}

// Run runs the selected cells on the backend, replays their findings,
// writes every report and returns the exit code.
// The output directory was made and checked before (outdir.Claim). An
// interrupt (SIGINT, SIGTERM) at any point, calibration included, ends in
// the summary of what ran and exit 130 or 143.
func Run(o Options) int {
	s := &session{Options: o}
	ctx, stop, caught := interrupt.Context()
	defer stop()
	// Last line of defence: whatever happens, no redis-server outlives us.
	defer backend.KillAll()

	started := time.Now()
	t, err := scenarios.MeasureTiming(ctx, s.Backend, s.TimeScale, cellServices(s.Cells)...)
	switch {
	case ctx.Err() != nil:
		// Interrupted while measuring: what failed is the measurement
		// the signal cut short, not the harness.
		t = interruptedTiming(s.TimeScale)
	case err != nil:
		fmt.Fprintf(s.Stderr, "lockchaos run: %v\n", err)
		return reports.ExitHarness
	case t.Measured:
		fmt.Fprintf(s.Stderr, "lockchaos: machine now: %s\n", t.Calibration)
	}
	var ran []*results.Cell
	if ctx.Err() == nil {
		ran = s.runMatrix(ctx, t)
	} else {
		s.notStarted = len(s.Cells) * s.Repeat
	}
	if s.notStarted > 0 {
		fmt.Fprintf(s.Stderr, "lockchaos run: %d run(s) not started (interrupted)\n", s.notStarted)
	}
	matrixTime := time.Since(started)
	var replays []results.Replay
	if s.Replay != nil && ctx.Err() == nil {
		replays = s.replayFindings(ctx, ran)
	}
	sum := s.summary(t, started, matrixTime, ran, replays, ctx.Err() != nil)
	reportErr := s.report(sum)
	return exit(s.Stderr, caught(), sum, reportErr)
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

// runMatrix runs the cells at timing on, showing progress on Stderr and,
// with JSON, streaming on Stdout.
func (s *session) runMatrix(ctx context.Context, on scenarios.Timing) []*results.Cell {
	runs := len(s.Cells) * s.Repeat
	// No more goroutines than runs: --parallel 1000 for one cell is one.
	parallel := max(1, min(s.Parallel, runs))
	s.progress = progress.New(s.Stderr, runs)
	if s.JSON {
		s.stream = reports.NewStream(s.Stdout)
	}
	servers := "redis-server " + s.RedisVersion
	if s.PostgresVersion != "" {
		servers += ", " + s.PostgresVersion
	}
	fmt.Fprintf(s.Stderr, "lockchaos %s: %d cell(s) x %d, seed %d, backend %s, %s, parallel %d, time scale %.2f, out %s\n",
		s.Version, len(s.Cells), s.Repeat, s.Seed, s.Backend.Name(), servers, parallel, on.Scale, s.Out)
	s.stream.Emit(reports.StreamEvent{
		Type: "start", Version: s.Version, Backend: s.Backend.Name(), Cells: len(s.Cells), Repeat: s.Repeat, Seed: s.Seed,
		Simulated: on.Virtual,
	})
	ran := scenarios.RunMatrix(ctx, s.Cells, scenarios.MatrixOptions{
		Options:  s.CellOptions(s.Backend, on, func(msg string) { fmt.Fprintln(s.Stderr, msg) }),
		Parallel: parallel, Repeat: s.Repeat, SameSeed: s.SameSeed,
		// A simulated run comes back from its seed; a real one does not.
		DropMetHistories: on.Virtual && !s.KeepHistories,
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

// summary is summary.json's content: the cells that ran at timing on in
// matrixTime, and the replays of their findings.
func (s *session) summary(
	on scenarios.Timing, started time.Time, matrixTime time.Duration, ran []*results.Cell, replays []results.Replay, interrupted bool,
) *reports.Summary {
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: s.Version,
		GoVersion: runtime.Version(), RedisVersion: s.RedisVersion, PostgresVersion: s.PostgresVersion,
		Backend: s.Backend.Name(), Seed: s.Seed, Repeat: s.Repeat,
		Shard: s.Shard, Started: started, Elapsed: time.Since(started), Command: s.Command, Rerun: s.Rerun(on),
		Interrupted: interrupted, Cells: ran, TimeScale: on.Scale, Calibration: on.Calibration, Simulated: on.Virtual, Replays: replays}
	sum.Tally()
	if len(replays) > 0 {
		// Schedules per second are the matrix's, not the replays' (real
		// Redis, real time).
		sum.SchedulesPerSecond *= sum.Elapsed.Seconds() / matrixTime.Seconds()
	}
	return sum
}

// exit is the run's exit code: the signal's that interrupted it, else
// its outcomes' (reports.Summary.ExitCode), said on stderr when it is
// not the outcomes'.
func exit(stderr io.Writer, sig os.Signal, sum *reports.Summary, reportErr error) int {
	written := "partial results written"
	if reportErr != nil {
		written = "partial results not all written (see above)"
	}
	switch code := interrupt.Code(sig); code {
	case 130:
		fmt.Fprintf(stderr, "lockchaos run: interrupted (SIGINT); every node stopped, %s\n", written)
		return code
	case 143:
		fmt.Fprintf(stderr, "lockchaos run: terminated (SIGTERM); every node stopped, %s\n", written)
		return code
	}
	if reportErr == nil && sum.NothingRan() {
		// A backend that cannot run a shard's cells, or a selection of
		// n/a cells only, tested nothing.
		fmt.Fprintf(stderr, "lockchaos run: inconclusive: every cell was skipped (%d), nothing was tested; "+
			"the table says why each was\n", len(sum.Cells))
	}
	return sum.ExitCode(reportErr == nil)
}

// cellServices are the services the cells' locks run on.
func cellServices(cells []scenarios.Cell) []service.Name {
	var out []service.Name
	for _, c := range cells {
		if svc := c.Lock.Service.Or(); !slices.Contains(out, svc) {
			out = append(out, svc)
		}
	}
	return out
}
