package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRunCmd(cl *cli) *cobra.Command {
	c := &runConfig{}
	cmd := &cobra.Command{
		Use: "run", Short: "run the scenario matrix (the CI gate)", Long: usage("run"),
		Args: cobra.ArbitraryArgs, // run says itself that it takes no arguments
		RunE: func(_ *cobra.Command, rest []string) error {
			return done(cmdRun(*c, rest, cl.argsAfter("run"), cl.stdout, cl.stderr))
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.bind(cmd.Flags())
	c.complete(cmd)
	return cmd
}

// cmdRun runs the cells the flags select; args is the command line as
// typed after "run", recorded in summary.json.
func cmdRun(flags runConfig, rest, args []string, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockchaos run: "+format+"\n", a...)
		return exitUsage
	}
	if len(rest) > 0 {
		return usageErr("unexpected argument %q (run takes flags only)", rest[0])
	}
	c, err := resolveRun(flags, time.Now())
	if err != nil {
		return usageErr("%v", err)
	}
	cells, err := c.selectCells(os.Getenv, stderr)
	if err == nil {
		err = c.checkCells(cells)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	release, err := claimOut(c.out)
	if err != nil {
		return usageErr("%v", err)
	}
	defer release()
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			return usageErr("--cpuprofile: %v", err)
		}
		defer stop()
	}
	return withBackends(c, stderr, func(be, replay backend.Backend, redisVersion, replayVersion string) int {
		return execute(c, cells, args, be, replay, redisVersion, replayVersion, stdout, stderr)
	})
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

// withBackends runs fn on the backend c names, with the real backend
// --replay-on names (nil without it), and closes both after. The
// simulated backend lives inside sim.Host: every cell runs in a synctest
// bubble, which needs the testing.T that sim.Host makes.
func withBackends(c runConfig, stderr io.Writer, fn func(be, replay backend.Backend, redisVersion, replayVersion string) int) int {
	sweepContainers(stderr)
	if !c.simulated() {
		be, redisVersion, err := chooseBackend(c.backend, c.image, external.Config{RedisAddrs: c.addrs, PostgresURL: c.pgURL})
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos run: %v\n", err)
			return exitHarness
		}
		defer closeBackend(be)
		return fn(be, nil, redisVersion, "")
	}
	replay, replayVersion, err := replayBackend(c.replayOn, c.image)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos run: --replay-on: %v\n", err)
		return exitHarness
	}
	defer closeBackend(replay)
	if os.Getenv("GOGC") == "" {
		// Simulated cells are CPU-bound and make short-lived garbage
		// (miniredis builds a Lua state per EVALSHA): a larger heap
		// target cut their CPU time by a quarter for ~50 MB more
		// (baseline token and fenced, 20 runs: 5.4 -> 4.3 s).
		debug.SetGCPercent(300)
	}
	return sim.Host(func(b sim.Backend) int { return fn(b, replay, sim.ServerVersion(), replayVersion) })
}

// closeBackend closes a backend that holds resources (a Docker client).
func closeBackend(be backend.Backend) {
	if c, ok := be.(io.Closer); ok {
		_ = c.Close()
	}
}

// selectCells is the cells c names, kept to the wanted expectations and
// to this shard: --shard, else the one the CI's variables (getenv) assign,
// which becomes c's.
func (c *runConfig) selectCells(getenv func(string) string, stderr io.Writer) ([]scenarios.Cell, error) {
	sel := scenarios.Selection{Files: c.files, LockDrivers: c.lockDrivers, Scenarios: c.scen, Locks: c.locks, Expects: c.expects,
		Services: c.services}
	cells, err := sel.Cells()
	if errors.Is(err, lockimpl.ErrUnknownLock) {
		return nil, fmt.Errorf("%w; declare a lock of your own with --lock-driver NAME=COMMAND "+
			"or in a --scenarios-file (docs/driver-protocol.md)", err)
	}
	if err != nil {
		return nil, namedFlag(err)
	}
	if c.shard == "" {
		env, from, err := scenarios.ShardFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		if env != "" {
			c.shard = env
			fmt.Fprintf(stderr, "lockchaos: shard %s from %s\n", env, from)
		}
	}
	if c.shard == "" {
		return cells, nil
	}
	if cells, err = scenarios.ShardOf(cells, c.shard); err != nil {
		return nil, namedFlag(err)
	}
	if len(cells) == 0 {
		fmt.Fprintf(stderr, "lockchaos run: shard %s has no cells\n", c.shard)
	}
	return cells, nil
}
