package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/lockchaos/lockchaos/netfault"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const runUsage = `Usage: lockchaos run [flags]

Runs the scenario matrix (scenario x lock) on real Redis with faults (or,
with --backend sim, simulated: miniredis in virtual time, for sweeps; never
the gate), checks every cell's history and compares it with its
expectation: a safe cell must pass, an unsafe cell must be detected. Writes
summary.json, junit.xml and each cell's history under --out.

Examples:
  lockchaos run                                   # the default matrix
  lockchaos run --scenario gc-pause --lock token  # one cell
  lockchaos run --seed 42 --repeat 20             # detection rate per cell
  lockchaos run --shard 2/4 --out out/shard2      # a quarter of the cells
  lockchaos run --scenarios-file my.yaml          # add or override scenarios
  lockchaos run --backend sim --repeat 1000       # a simulated seed sweep
  lockchaos run --backend sim --replay-on process # ... its findings rerun on real Redis

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
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos run: --cpuprofile: %v\n", err)
			return exitHarness
		}
		defer stop()
	}
	set := runSettings{args: args, cells: cells, seed: f.seed, out: f.out, repeat: f.repeat, sameSeed: f.sameSeed, keepHistories: f.keepHistories, parallel: f.parallel, asJSON: f.asJSON,
		duration: f.duration, clients: f.clients, budget: f.budget, files: f.files, toxAPI: f.toxAPI, timeScale: f.timeScale,
		maxDuration: f.maxDuration, partLength: f.partLength, inParts: f.inParts, floor: f.floor, shard: shardLabel}
	if f.backend == sim.Name {
		return runSimulated(f, set, stdout, stderr)
	}
	be, redisVersion, err := chooseBackend(f.backend, f.image, f.addrs)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
		return exitHarness
	}
	if c, ok := be.(io.Closer); ok {
		defer c.Close()
	}
	return execute(set, be, redisVersion, stdout, stderr)
}

// startCPUProfile profiles the process's CPU into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		_ = fh.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = fh.Close()
	}, nil
}

// runSimulated runs the cells on the simulated backend, with the real
// backend --replay-on names to replay what it finds.
func runSimulated(f *runFlags, set runSettings, stdout, stderr io.Writer) int {
	replay, replayVersion, err := replayBackend(f.replayOn, f.image)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos run: --replay-on: %v\n", err)
		return exitHarness
	}
	if c, ok := replay.(io.Closer); ok {
		defer c.Close()
	}
	set.replay, set.replayVersion = replay, replayVersion
	if os.Getenv("GOGC") == "" {
		// Simulated cells are CPU-bound and make short-lived garbage
		// (miniredis builds a Lua state per EVALSHA): a larger heap
		// target cut their CPU time by a quarter for ~50 MB more
		// (baseline token and fenced, 20 runs: 5.4 -> 4.3 s).
		debug.SetGCPercent(300)
	}
	// Every cell runs in a synctest bubble, which needs a testing.T: the
	// whole run goes inside sim.Host, which makes one.
	return sim.Host(func(b sim.Backend) int { return execute(set, b, sim.ServerVersion(), stdout, stderr) })
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
	if err := f.checkSim(); err != nil {
		return err
	}
	if f.toxAPI != "" {
		if err := (netfault.ProxiesConfig{APIAddr: f.toxAPI}).Validate(); err != nil {
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

// checkSim says what does not go with the simulated backend, or with
// --replay-on without it.
func (f *runFlags) checkSim() error {
	if f.sameSeed && f.repeat < 2 {
		return errors.New("--same-seed goes with --repeat N (N >= 2): it reruns one seed N times")
	}
	if f.backend != sim.Name {
		if f.replayOn != "" {
			return errors.New("--replay-on goes with --backend sim (it replays simulated findings on real Redis)")
		}
		return nil
	}
	switch f.replayOn {
	case "", "process", "docker", "auto":
	default:
		return fmt.Errorf("--replay-on %q: want a real backend that can kill nodes (process, docker, auto)", f.replayOn)
	}
	if f.timeScale != 0 && f.timeScale != 1 {
		return fmt.Errorf("--time-scale %v with --backend sim: virtual time needs no stretching (leave it out, or 1)", f.timeScale)
	}
	if f.toxAPI != "" {
		return errors.New("--toxiproxy-api with --backend sim: simulated links are not toxiproxy's")
	}
	if f.image != "" && f.replayOn == "" {
		return errors.New("--redis-image with --backend sim: the simulation runs no image (it is for --replay-on docker)")
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
