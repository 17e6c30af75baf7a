package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/faults/sim"
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

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var scen, locks, files stringList
	fs.Var(&scen, "scenario", "scenarios to run, comma separated (default: all)")
	fs.Var(&locks, "lock", "locks to run, comma separated (default: every lock a scenario lists)")
	fs.Var(&files, "scenarios-file", "YAML file of extra scenarios and driver locks (repeatable)")
	var lockDrivers multiList
	fs.Var(&lockDrivers, "lock-driver", "a lock served by a driver process, NAME=COMMAND (repeatable; docs/driver-protocol.md); name it in --lock")
	var expects stringList
	fs.Var(&expects, "expect", "only cells with these expectations (safe, unsafe, either, n/a), e.g. --expect safe for a false-positive soak")
	seed := fs.Int64("seed", 0, "run seed (default: random, printed); replays each cell's fault schedule")
	duration := fs.Duration("duration", 0, "override each scenario's duration")
	clients := fs.Int("clients", 0, "override each scenario's number of clients")
	backend := fs.String("backend", "auto", "where Redis runs: auto (process if redis-server is installed, else docker), process, docker, external, or sim (simulated: miniredis in virtual time, for fast sweeps; not real Redis)")
	var addrs stringList
	fs.Var(&addrs, "redis-addr", "your own Redis servers for --backend external (host:port, comma separated; 3 for redlock)")
	image := fs.String("redis-image", "", redisImageUsage)
	out := fs.String("out", "out/chaos", "output directory")
	repeat := fs.Int("repeat", 1, "run every cell K times (seeds N, N+1, ...) and report detection rates")
	replayOn := fs.String("replay-on", "", "with --backend sim: rerun every cell the simulation found violated on this real backend (process, docker or auto), same seed, one seed per cell, and report whether it reproduces")
	sameSeed := fs.Bool("same-seed", false, "with --repeat: give every run the seed N (the same fault schedule), to measure how often a seed reproduces its verdict")
	parallel := fs.Int("parallel", scenarios.DefaultParallel(), "cells to run at once (default: one per core; more starve each other's timing)")
	shard := fs.String("shard", "", "run shard i of n (\"i/n\") of the cells, for CI matrices (default: from CI_NODE_INDEX/CI_NODE_TOTAL, or JOB_COMPLETION_INDEX with LOCKCHAOS_SHARD_TOTAL)")
	asJSON := fs.Bool("json", false, "print JSON lines on stdout as the run goes: start, cell-started, cell-finished, summary (schema: docs/schema/run-stream.v1.json)")
	budget := fs.Duration("budget", 30*time.Second, "checker budget per property")
	toxAPI := fs.String("toxiproxy-api", "", "serve each cell's toxiproxy HTTP API on this loopback address (port 0: a free one, printed), to poke a long run with toxiproxy-cli")
	timeScale := fs.Float64("time-scale", 0, "stretch every scenario time by this factor (0: measure the machine and choose; 1: as designed)")
	maxDuration := fs.Duration("max-duration", 0, "how long a cell below its evidence floor may run on (default 5x its duration)")
	partLength := fs.Duration("part-length", 0, "a cell longer than this runs in parts, each recorded and checked on its own, in flat memory (default 2m)")
	var floor scenarios.FloorOverride
	fs.Func("min-exercised", "evidence floor: fault windows that must reach their dangerous moment (default 3; a scenario may set its own)", intPtr(&floor.MinExercised))
	fs.Func("min-cycles", "evidence floor: completed acquire-release cycles (default 20)", intPtr(&floor.MinCycles))
	fs.Func("max-indefinite", "evidence floor: largest share of acquires outside fault windows that may time out, 0..1 (default 0.5)", floatPtr(&floor.MaxIndefinite))
	fs.Usage = func() { fmt.Fprint(stderr, runUsage); fs.PrintDefaults() }
	rest, code, ok := parseArgs(fs, args, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "lockchaos run: unexpected argument %q (run takes flags only)\n", rest[0])
		return exitUsage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockchaos run: "+format+"\n", a...)
		return exitUsage
	}
	if *repeat < 1 || *parallel < 1 || *duration < 0 || *clients < 0 || *budget <= 0 {
		return usageErr("--repeat, --parallel and --budget must be positive; --duration and --clients not negative")
	}
	if *timeScale < 0 || *timeScale > 0 && *timeScale < 0.1 || *timeScale > 100 {
		return usageErr("--time-scale %v: want 0 (measure) or a factor in 0.1..100", *timeScale)
	}
	if err := (scenarios.Options{Duration: *duration, Clients: *clients, MaxDuration: *maxDuration, Floor: floor, PartLength: *partLength}).Validate(); err != nil {
		return usageErr("%v", err)
	}
	switch *backend {
	case "auto", "process", "docker", "external":
	case sim.Name:
		switch *replayOn {
		case "", "process", "docker", "auto":
		default:
			return usageErr("--replay-on %q: want a real backend that can kill nodes (process, docker, auto)", *replayOn)
		}
		if *timeScale != 0 && *timeScale != 1 {
			return usageErr("--time-scale %v with --backend sim: virtual time needs no stretching (leave it out, or 1)", *timeScale)
		}
		if *toxAPI != "" {
			return usageErr("--toxiproxy-api with --backend sim: simulated links are not toxiproxy's")
		}
	default:
		return usageErr("unknown backend %q (valid: auto, process, docker, external, sim)", *backend)
	}
	if *replayOn != "" && *backend != sim.Name {
		return usageErr("--replay-on goes with --backend sim (it replays simulated findings on real Redis)")
	}
	if *toxAPI != "" {
		if err := (faults.ProxiesConfig{APIAddr: *toxAPI}).Validate(); err != nil {
			return usageErr("--toxiproxy-api: %v", err)
		}
		if _, port, _ := net.SplitHostPort(*toxAPI); port != "0" && *parallel > 1 {
			return usageErr("--toxiproxy-api %s: a fixed port serves one cell at a time; add --parallel 1, or use port 0", *toxAPI)
		}
	}
	if (*backend == "external") != (len(addrs) > 0) {
		return usageErr("--redis-addr goes with --backend external, and --backend external needs --redis-addr")
	}
	catalog, err := loadCatalog(files, lockDrivers)
	if err != nil {
		return usageErr("%v", err)
	}
	cells, err := scenarios.Select(catalog, scen, locks)
	if err != nil {
		return usageErr("%v", err)
	}
	if len(expects) > 0 {
		want := map[string]bool{}
		for _, e := range expects {
			switch e {
			case "safe", "unsafe", "either", "n/a":
				want[e] = true
			default:
				return usageErr("--expect %q (valid: safe, unsafe, either, n/a)", e)
			}
		}
		var kept []scenarios.Cell
		for _, c := range cells {
			if want[string(c.Expect)] {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return usageErr("no cell has expectation %v", expects)
		}
		cells = kept
	}
	shardLabel := ""
	if *shard == "" {
		env, from, err := shardFromEnv(os.Getenv)
		if err != nil {
			return usageErr("%v", err)
		}
		if env != "" {
			*shard = env
			fmt.Fprintf(stderr, "lockchaos: shard %s from %s\n", env, from)
		}
	}
	if *shard != "" {
		i, n, err := parseShard(*shard)
		if err != nil {
			return usageErr("%v", err)
		}
		if cells, err = scenarios.Shard(cells, i, n); err != nil {
			return usageErr("%v", err)
		}
		shardLabel = *shard
		if len(cells) == 0 {
			fmt.Fprintf(stderr, "lockchaos run: shard %s has no cells\n", *shard)
		}
	}
	set := runSettings{args: args, cells: cells, seed: *seed, out: *out, repeat: *repeat, sameSeed: *sameSeed, parallel: *parallel, asJSON: *asJSON,
		duration: *duration, clients: *clients, budget: *budget, files: files, toxAPI: *toxAPI, timeScale: *timeScale,
		maxDuration: *maxDuration, partLength: *partLength, floor: floor, shard: shardLabel}
	if *backend == sim.Name {
		replay, replayVersion, err := replayBackend(*replayOn, *image)
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
		// Every cell runs in a synctest bubble, which needs a testing.T:
		// the whole run goes inside sim.Host, which makes one.
		return sim.Host(func(b sim.Backend) int { return execute(set, b, sim.ServerVersion(), stdout, stderr) })
	}
	be, redisVersion, err := chooseBackend(*backend, *image, addrs)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
		return exitHarness
	}
	if c, ok := be.(io.Closer); ok {
		defer c.Close()
	}
	return execute(set, be, redisVersion, stdout, stderr)
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

func printMatrix(w io.Writer, s *reports.Summary) {
	colour := useColour(w)
	if s.Simulated {
		fmt.Fprintf(w, "\nSIMULATED: backend %s, miniredis in virtual time; these are not results from real Redis (replay a finding on real Redis with --backend process)\n", s.Backend)
	}
	fmt.Fprintf(w, "\n%-22s %-15s %-7s %-8s %-13s %-24s %s\n", "SCENARIO", "LOCK", "EXPECT", "VERDICT", "OUTCOME", "EVIDENCE", "DETAILS")
	for _, c := range s.Cells {
		detail := ""
		switch {
		case c.Error != "":
			detail = c.Error
		case c.Violations > 0:
			detail = fmt.Sprintf("%d incident(s), %d violation(s), first at %.3f s", len(c.Incidents), c.Violations, float64(c.Stats.FirstViolation)/1e9)
		case c.Outcome == results.Inconclusive:
			detail = strings.Join(c.Evidence.Short, "; ")
		default:
			detail = fmt.Sprintf("ran %.1f s", c.Ran.Seconds())
		}
		verdict := string(c.Verdict)
		if verdict == "" {
			verdict = "-"
		}
		evidence := "-"
		if c.Verdict != "" {
			evidence = c.Evidence.Summary()
		}
		seed := ""
		if s.Repeat > 1 {
			seed = fmt.Sprintf(" [seed %d]", c.RunSeed)
		}
		fmt.Fprintf(w, "%-22s %-15s %-7s %-8s %s %-24s %s%s\n", c.Scenario, c.Lock, c.Expect, verdict, paint(colour, c.Outcome, string(c.Outcome), 13), evidence, detail, seed)
	}
	if s.Repeat > 1 {
		fmt.Fprintf(w, "\n%-22s %-15s %-7s %-14s %-12s %s\n", "SCENARIO", "LOCK", "EXPECT", "DETECTED", "INCONCLUSIVE", "MEDIAN FIRST VIOLATION")
		for _, a := range s.Aggregates {
			med := "-"
			if a.MedianFirstViolation >= 0 {
				med = a.MedianFirstViolation.Round(time.Millisecond).String()
			}
			fmt.Fprintf(w, "%-22s %-15s %-7s %4d/%-9s %-12d %s\n", a.Scenario, a.Lock, a.Expect, a.Failed, fmt.Sprintf("%d decisive", a.Decisive), a.Inconclusive, med)
		}
		printSameSeed(w, s.Aggregates)
	}
	fmt.Fprintf(w, "\nseed %d, backend %s, time scale %.2f, %s: %s; %.1f schedules/s\n", s.Seed, backendText(s), s.TimeScale,
		s.Elapsed.Round(time.Millisecond), totalsText(s.Totals), s.SchedulesPerSecond)
	for _, c := range s.Cells {
		if c.Failed() {
			fmt.Fprintf(w, "rerun %s/%s: %s\n", c.Scenario, c.Lock, c.Rerun)
		}
	}
}

// totalsText renders outcome counts for people, worst first:
// "1 regression, 3 met".
func totalsText(t map[string]int) string {
	order := []results.Outcome{results.Regression, results.Missed, results.HarnessError, results.Unknown,
		results.Inconclusive, results.Interrupted, results.Skipped, results.Met}
	var parts []string
	seen := map[string]bool{}
	for _, o := range order {
		if n := t[string(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
		seen[string(o)] = true
	}
	var rest []string
	for k, n := range t {
		if !seen[k] && n > 0 {
			rest = append(rest, fmt.Sprintf("%d %s", n, k))
		}
	}
	sort.Strings(rest)
	parts = append(parts, rest...)
	if len(parts) == 0 {
		return "no cells"
	}
	return strings.Join(parts, ", ")
}

// backendText names the backend, marked when it is a simulation.
func backendText(s *reports.Summary) string {
	if s.Simulated {
		return s.Backend + " (simulated)"
	}
	return s.Backend
}

// printSameSeed shows, for runs that shared a seed (--same-seed), how
// often the seed reproduced its verdict and its evidence counts.
func printSameSeed(w io.Writer, aggs []results.Aggregate) {
	header := false
	for _, a := range aggs {
		if a.SameSeedRuns < 2 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\n%-22s %-15s %-16s %s\n", "SCENARIO", "LOCK", "SAME VERDICT", "SAME VERDICT AND EVIDENCE COUNTS")
			header = true
		}
		fmt.Fprintf(w, "%-22s %-15s %-16s %s\n", a.Scenario, a.Lock, fmt.Sprintf("%d/%d", a.SameVerdict, a.SameSeedRuns),
			fmt.Sprintf("%d/%d", a.SameEvidence, a.SameSeedRuns))
	}
}
