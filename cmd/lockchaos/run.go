package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const runUsage = `Usage: lockchaos run [flags]

Runs the scenario matrix (scenario x lock) on real Redis with faults, checks
every cell's history and compares it with its expectation: a safe cell must
pass, an unsafe cell must be detected. Writes summary.json, junit.xml and
each cell's history under --out.

Examples:
  lockchaos run                                   # the default matrix
  lockchaos run --scenario gc-pause --lock token  # one cell
  lockchaos run --seed 42 --repeat 20             # detection rate per cell
  lockchaos run --shard 2/4 --out out/shard2      # a quarter of the cells
  lockchaos run --scenarios-file my.yaml          # add or override scenarios

Exit codes: 0 every cell met its expectation; 1 a safe cell failed or an
unsafe cell was not detected; 2 usage or config error; 3 the harness could
not run; 4 a cell was inconclusive; 130/143 interrupted (partial results are
written).

Flags:
`

func newRunCmd(cl *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use: "run", Short: "run the scenario matrix (the CI gate)", Long: runUsage,
		Args: cobra.ArbitraryArgs, // run says itself that it takes no arguments
		RunE: func(_ *cobra.Command, rest []string) error {
			return done(cmdRun(f, rest, cl.argsAfter("run"), cl.stdout, cl.stderr))
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	f.bind(c.Flags())
	f.complete(c)
	return c
}

// cmdRun runs the cells the flags select; args is the command line as
// typed after "run", recorded in summary.json.
func cmdRun(f *runFlags, rest, args []string, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockchaos run: "+format+"\n", a...)
		return exitUsage
	}
	if len(rest) > 0 {
		return usageErr("unexpected argument %q (run takes flags only)", rest[0])
	}
	if err := f.check(); err != nil {
		return usageErr("%v", err)
	}
	cells, shardLabel, err := selectCells(f, stderr)
	if err != nil {
		return usageErr("%v", err)
	}
	return execute(f, cells, shardLabel, args, stdout, stderr)
}

// check says what is wrong with the flags' values before anything starts.
func (f *runFlags) check() error {
	if f.repeat < 1 || f.parallel < 1 || f.duration < 0 || f.clients < 0 || f.budget <= 0 {
		return errors.New("--repeat, --parallel and --budget must be positive; --duration and --clients not negative")
	}
	if f.timeScale < 0 || f.timeScale > 0 && f.timeScale < 0.1 || f.timeScale > 100 {
		return fmt.Errorf("--time-scale %v: want 0 (measure) or a factor in 0.1..100", f.timeScale)
	}
	if err := (scenarios.Options{Duration: f.duration, Clients: f.clients, MaxDuration: f.maxDuration, Floor: f.floor, PartLength: f.partLength}).Validate(); err != nil {
		return err
	}
	if !isBackend(f.backend) {
		return fmt.Errorf("unknown backend %q (valid: %s)", f.backend, backendNames())
	}
	if f.toxAPI != "" {
		if err := (faults.ProxiesConfig{APIAddr: f.toxAPI}).Validate(); err != nil {
			return fmt.Errorf("--toxiproxy-api: %w", err)
		}
		if _, port, _ := net.SplitHostPort(f.toxAPI); port != "0" && f.parallel > 1 {
			return fmt.Errorf("--toxiproxy-api %s: a fixed port serves one cell at a time; add --parallel 1, or use port 0", f.toxAPI)
		}
	}
	if (f.backend == "external") != (len(f.addrs) > 0) {
		return errors.New("--redis-addr goes with --backend external, and --backend external needs --redis-addr")
	}
	return nil
}

// selectCells is the cells the flags name, kept to the wanted
// expectations and to this shard (from --shard or the CI's variables).
func selectCells(f *runFlags, stderr io.Writer) ([]scenarios.Cell, string, error) {
	catalog, err := loadCatalog(f.files, f.lockDrivers)
	if err != nil {
		return nil, "", err
	}
	cells, err := scenarios.Select(catalog, f.scen, f.locks)
	if err != nil {
		return nil, "", err
	}
	if cells, err = keepExpected(cells, f.expects); err != nil {
		return nil, "", err
	}
	if f.shard == "" {
		env, from, err := shardFromEnv(os.Getenv)
		if err != nil {
			return nil, "", err
		}
		if env != "" {
			f.shard = env
			fmt.Fprintf(stderr, "lockchaos: shard %s from %s\n", env, from)
		}
	}
	if f.shard == "" {
		return cells, "", nil
	}
	i, n, err := parseShard(f.shard)
	if err != nil {
		return nil, "", err
	}
	if cells, err = scenarios.Shard(cells, i, n); err != nil {
		return nil, "", err
	}
	if len(cells) == 0 {
		fmt.Fprintf(stderr, "lockchaos run: shard %s has no cells\n", f.shard)
	}
	return cells, f.shard, nil
}

// keepExpected keeps the cells whose expectation --expect names (all
// when it names none).
func keepExpected(cells []scenarios.Cell, expects []string) ([]scenarios.Cell, error) {
	if len(expects) == 0 {
		return cells, nil
	}
	want := map[results.Expectation]bool{}
	for _, e := range expects {
		if !results.Expectation(e).Valid() {
			return nil, fmt.Errorf("--expect %q (valid: %s)", e, expectationNames())
		}
		want[results.Expectation(e)] = true
	}
	var kept []scenarios.Cell
	for _, c := range cells {
		if want[c.Expect] {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no cell has expectation %v", expects)
	}
	return kept, nil
}

// execute runs the cells and writes the reports; the exit code says how
// the cells went, or why they could not run.
func execute(f *runFlags, cells []scenarios.Cell, shardLabel string, args []string, stdout, stderr io.Writer) int {
	be, redisVersion, err := chooseBackend(f.backend, f.image, f.addrs)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
		return exitHarness
	}
	if c, ok := be.(io.Closer); ok {
		defer c.Close()
	}
	if f.seed == 0 {
		f.seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
		return exitHarness
	}

	ctx, stop, caught := signalContext()
	defer stop()
	// Last line of defence: whatever happens, no redis-server outlives us.
	defer faults.KillAll()

	started := time.Now()
	scale, calibration, nodeOp := f.timeScale, "", time.Duration(0)
	if scale == 0 {
		cal, err := scenarios.Calibrate(ctx, be)
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
			return exitHarness
		}
		scale, calibration, nodeOp = cal.Scale, cal.String(), cal.NodeOp
		fmt.Fprintf(stderr, "lockchaos: machine now: %s\n", calibration)
	}
	progress := newProgress(stderr, len(cells)*f.repeat)
	var stream *jsonStream
	if f.asJSON {
		stream = newJSONStream(stdout)
	}
	fmt.Fprintf(stderr, "lockchaos %s: %d cell(s) x %d, seed %d, backend %s, redis-server %s, parallel %d, time scale %.2f, out %s\n",
		version, len(cells), f.repeat, f.seed, be.Name(), redisVersion, f.parallel, scale, f.out)
	stream.emit(streamEvent{Type: "start", Version: version, Backend: be.Name(), Cells: len(cells), Repeat: f.repeat, Seed: f.seed})
	results := scenarios.RunMatrix(ctx, cells, scenarios.MatrixOptions{
		Options: scenarios.Options{Seed: f.seed, OutDir: f.out, Duration: f.duration, Clients: f.clients,
			Budget: f.budget, Backend: be, RerunFlags: rerunFlags(f.duration, f.clients, f.files) + fmt.Sprintf(" --time-scale %.2f", scale),
			ToxiproxyAPI: f.toxAPI, Notify: func(s string) { fmt.Fprintln(stderr, s) },
			TimeScale: scale, NodeOpTime: nodeOp, MaxDuration: f.maxDuration, Floor: f.floor, PartLength: f.partLength},
		Parallel: f.parallel, Repeat: f.repeat,
		Progress: func(r *results.Cell, done, total int) {
			progress.cell(r, done, total)
			stream.emit(streamEvent{Type: "cell-finished", Cell: r.Scenario + "/" + r.Lock, RunSeed: r.RunSeed, Result: r, Done: done, Total: total})
		},
		Started: func(name string, seed int64) {
			progress.started(name, seed)
			stream.emit(streamEvent{Type: "cell-started", Cell: name, RunSeed: seed})
		},
	})
	progress.done()
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: version,
		GoVersion: runtime.Version(), RedisVersion: redisVersion, Backend: be.Name(), Seed: f.seed, Repeat: f.repeat,
		Shard: shardLabel, Started: started, Elapsed: time.Since(started), Command: commandLine(args),
		Interrupted: ctx.Err() != nil, Cells: results, TimeScale: scale, Calibration: calibration}
	sum.Tally()
	reports.RelativeHistories(f.out, sum)
	jsonPath, errJSON := reports.WriteJSON(f.out, sum)
	junitPath, errJUnit := reports.WriteJUnit(f.out, sum)
	html, errHTML := reports.WriteHTML(f.out, sum, reports.HTMLOptions{})
	if err := errors.Join(errJSON, errJUnit, errHTML); err != nil {
		fmt.Fprintf(stderr, "lockchaos run: writing reports: %v\n", err)
	}
	if f.asJSON {
		stream.emit(streamEvent{Type: "summary", Summary: sum})
	} else {
		printMatrix(stdout, sum)
		fmt.Fprintf(stdout, "\nwrote %s, %s", jsonPath, junitPath)
		if html != nil {
			fmt.Fprintf(stdout, ", %s (+%d cell pages, rendered in %s)", html.Index, len(html.Pages), html.Elapsed.Round(time.Millisecond))
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

// runExit maps outcomes to the documented exit codes, worst first.
func runExit(s *reports.Summary) int {
	switch {
	case s.Totals[string(results.Regression)]+s.Totals[string(results.Missed)] > 0:
		return exitViolation
	case s.Totals[string(results.HarnessError)] > 0:
		return exitHarness
	case s.Totals[string(results.Unknown)]+s.Totals[string(results.Inconclusive)] > 0:
		return exitInconclusive
	}
	return exitOK
}

// signalContext is cancelled on SIGINT or SIGTERM; caught reports which.
func signalContext() (context.Context, func(), func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case got = <-ch:
			cancel()
		case <-done:
		}
	}()
	stop := func() {
		signal.Stop(ch)
		select {
		case <-done:
		default:
			close(done)
		}
		cancel()
	}
	caught := func() os.Signal {
		if ctx.Err() == nil {
			return nil
		}
		select {
		case <-done:
		default:
		}
		return got
	}
	return ctx, stop, caught
}
