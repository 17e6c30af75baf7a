package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/backend"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// runSettings is what cmdRun resolved from its flags.
type runSettings struct {
	args                      []string
	cells                     []scenarios.Cell
	seed                      int64
	out                       string
	repeat, parallel, clients int
	asJSON, sameSeed          bool
	keepHistories             bool
	duration, budget          time.Duration
	maxDuration, partLength   time.Duration
	inParts                   bool
	files                     []string
	toxAPI                    string
	timeScale                 float64
	floor                     scenarios.FloorOverride
	shard                     string
	replay                    backend.Backend // --replay-on, or nil
	replayVersion             string
}

// keepInMemory is how many cell runs keep their histories in memory for
// the HTML pages; beyond it, pages re-read each history from its file.
const keepInMemory = 200

// sweepViolations is how many violations per property each run of a sweep
// past keepInMemory keeps for summary.json and JUnit (violation_count
// keeps the total; a page re-checks the history and lists them all).
const sweepViolations = 3

// execute runs the selected cells on a backend and writes every report;
// it returns the exit code.
func execute(s runSettings, be backend.Backend, redisVersion string, stdout, stderr io.Writer) int {
	if s.seed == 0 {
		s.seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
		return exitHarness
	}

	ctx, stop, caught := signalContext()
	defer stop()
	// Last line of defence: whatever happens, no redis-server outlives us.
	defer backend.KillAll()

	started := time.Now()
	scale, calibration, nodeOp := s.timeScale, "", time.Duration(0)
	_, virtual := backend.Virtual(be)
	if virtual {
		// Virtual time: load cannot stretch a cell, so nothing is measured
		// and nothing is scaled.
		scale, calibration = 1, "virtual time: no calibration, time scale 1"
	}
	if scale == 0 {
		cal, err := scenarios.Calibrate(ctx, be)
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
			return exitHarness
		}
		scale, calibration, nodeOp = cal.Scale, cal.String(), cal.NodeOp
		fmt.Fprintf(stderr, "lockchaos: machine now: %s\n", calibration)
	}
	progress := newProgress(stderr, len(s.cells)*s.repeat)
	var stream *jsonStream
	if s.asJSON {
		stream = newJSONStream(stdout)
	}
	fmt.Fprintf(stderr, "lockchaos %s: %d cell(s) x %d, seed %d, backend %s, redis-server %s, parallel %d, time scale %.2f, out %s\n",
		version, len(s.cells), s.repeat, s.seed, be.Name(), redisVersion, s.parallel, scale, s.out)
	stream.emit(streamEvent{Type: "start", Version: version, Backend: be.Name(), Cells: len(s.cells), Repeat: s.repeat, Seed: s.seed, Simulated: virtual})
	ran := scenarios.RunMatrix(ctx, s.cells, scenarios.MatrixOptions{
		Options: scenarios.Options{Seed: s.seed, OutDir: s.out, Duration: s.duration, Clients: s.clients,
			Budget: s.budget, Backend: be, RerunFlags: rerunFlags(s.duration, s.clients, s.files) + backendFlag(be) + fmt.Sprintf(" --time-scale %.2f", scale),
			ToxiproxyAPI: s.toxAPI, Notify: func(s string) { fmt.Fprintln(stderr, s) },
			TimeScale: scale, NodeOpTime: nodeOp, MaxDuration: s.maxDuration, Floor: s.floor, PartLength: s.partLength, InParts: s.inParts},
		Parallel: s.parallel, Repeat: s.repeat, SameSeed: s.sameSeed,
		// A simulated run comes back from its seed; a real one does not.
		DropMetHistories: virtual && !s.keepHistories,
		Progress: func(r *results.Cell, done, total int) {
			progress.cell(r, done, total)
			stream.emit(streamEvent{Type: "cell-finished", Cell: r.Scenario + "/" + r.Lock, RunSeed: r.RunSeed, Result: r, Done: done, Total: total})
			if total > keepInMemory && (r.History != "" || r.HistoryDropped) {
				// A sweep keeps each run's numbers, not its events or
				// porcupine's visualization data (~300 KB a run): its page
				// re-checks the history file (measured: 3400 simulated
				// runs peaked at 2.3-2.5 GB RSS keeping them).
				// Nor all its violations: they were most of summary.json
				// (145 of 220 MB for 29,000 runs). The counts stay.
				r.Events, r.Report = nil, nil
				for i := range r.Results {
					r.Results[i].Model, r.Results[i].Info = nil, nil
					if v := r.Results[i].Violations; len(v) > sweepViolations {
						r.Results[i].Violations = append([]checker.Violation(nil), v[:sweepViolations]...)
					}
				}
			}
		},
		Started: func(name string, seed int64) {
			progress.started(name, seed)
			stream.emit(streamEvent{Type: "cell-started", Cell: name, RunSeed: seed})
		},
	})
	progress.done()
	matrixTime := time.Since(started)
	var replays []results.Replay
	if s.replay != nil && ctx.Err() == nil {
		replays = replayFindings(ctx, s, ran, stderr)
	}
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: version,
		GoVersion: runtime.Version(), RedisVersion: redisVersion, Backend: be.Name(), Seed: s.seed, Repeat: s.repeat,
		Shard: s.shard, Started: started, Elapsed: time.Since(started), Command: commandLine(s.args),
		Interrupted: ctx.Err() != nil, Cells: ran, TimeScale: scale, Calibration: calibration, Simulated: virtual, Replays: replays}
	sum.Tally()
	if len(replays) > 0 {
		// Schedules per second are the matrix's, not the replays' (real
		// Redis, real time).
		sum.SchedulesPerSecond *= sum.Elapsed.Seconds() / matrixTime.Seconds()
	}
	reports.RelativeHistories(s.out, sum)
	jsonPath, errJSON := reports.WriteJSON(s.out, sum)
	junitPath, errJUnit := reports.WriteJUnit(s.out, sum)
	html, errHTML := reports.WriteHTML(s.out, sum, reports.HTMLOptions{})
	if err := errors.Join(errJSON, errJUnit, errHTML); err != nil {
		fmt.Fprintf(stderr, "lockchaos run: writing reports: %v\n", err)
	}
	if s.asJSON {
		stream.emit(streamEvent{Type: "summary", Summary: sum})
	} else {
		printMatrix(stdout, sum)
		printReplays(stdout, sum.Replays)
		fmt.Fprintf(stdout, "\nwrote %s, %s", jsonPath, junitPath)
		if html != nil {
			fmt.Fprintf(stdout, ", %s (+%d cell pages, rendered in %s", html.Index, len(html.Pages), html.Elapsed.Round(time.Millisecond))
			if dropped := droppedHistories(ran); html.Unpaged > 0 && dropped > 0 {
				fmt.Fprintf(stdout, "; %d met runs without one, %d of whose histories were not kept: --keep-histories", html.Unpaged, dropped)
			} else if html.Unpaged > 0 {
				fmt.Fprintf(stdout, "; %d met runs without one: lockchaos report --all-pages %s", html.Unpaged, s.out)
			}
			fmt.Fprint(stdout, ")")
		}
		fmt.Fprintln(stdout)
	}
	switch sig := caught(); sig {
	case syscall.SIGINT:
		fmt.Fprintln(stderr, "lockchaos run: interrupted (SIGINT); every node stopped, partial results written")
		return 130
	case syscall.SIGTERM:
		fmt.Fprintln(stderr, "lockchaos run: terminated (SIGTERM); every node stopped, partial results written")
		return 143
	}
	return runExit(sum)
}

// backendFlag is the --backend a cell's rerun line needs: none for the
// real backends (the rerun finds Redis as the run did), --backend sim for
// the simulation, so a simulated cell reruns simulated (and says so).
func backendFlag(be backend.Backend) string {
	if _, virtual := backend.Virtual(be); virtual {
		return " --backend " + be.Name()
	}
	return ""
}

// droppedHistories counts the met runs of a simulated sweep whose history
// files were deleted (scenarios.MatrixOptions.DropMetHistories).
func droppedHistories(ran []*results.Cell) int {
	n := 0
	for _, r := range ran {
		if r.HistoryDropped {
			n++
		}
	}
	return n
}
