package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/flagvalue"
	"github.com/lockchaos/lockchaos/scenarios"
)

// bindSelection binds the flags that narrow the cells beyond --scenario
// and --lock.
func (c *runConfig) bindSelection(fs *pflag.FlagSet) {
	fs.Var(&c.services, "service", "only locks on these lock services, comma separated: redis, postgres "+
		"(default: all)")
	fs.Var(&c.expects, "expect", "only cells with these expectations (safety: safe, "+
		"unsafe, either, n/a; liveness: live, stuck), e.g. --expect safe for a false-positive soak")
}

// bind binds run's flags to c and sets their defaults, which are
// runConfig's.
func (c *runConfig) bind(fs *pflag.FlagSet) {
	fs.Var(&c.scen, "scenario", "scenarios to run, comma separated (default: all)")
	fs.Var(&c.locks, "lock", "locks to run, comma separated (default: every lock a scenario lists)")
	fs.Var(&c.files, "scenarios-file", "YAML `file` of extra scenarios and driver locks (repeatable); "+
		"a file's lock runs in the scenarios its expect lists, gated")
	fs.Var(&c.lockDrivers, "lock-driver", "a lock served by a driver process, "+
		"NAME=COMMAND (repeatable; docs/driver-protocol.md); runs only when named in --lock, "+
		"then in every scenario, reported as either (not gated)")
	fs.Int64Var(&c.seed, "seed", 0, "run seed (default: random, printed); replays each cell's fault schedule; "+
		"with --repeat K the runs take seeds N..N+K-1, which must not pass the largest int64 nor 0")
	fs.Var(flagvalue.PositiveDuration(&c.duration), "duration", "override each scenario's duration (positive, at most 720h; "+
		"default: each scenario's own)")
	fs.Var(flagvalue.PositiveInt(&c.clients, scenarios.MaxClients), "clients", fmt.Sprintf("override each scenario's number of clients, "+
		"1..%d (default: each scenario's own)", scenarios.MaxClients))
	c.bindBackend(fs)
	fs.StringVar(&c.out, "out", "out/chaos", "output directory")
	fs.IntVar(&c.repeat, "repeat", 1, fmt.Sprintf("run every cell K times (seeds N, N+1, ...) and report detection rates; "+
		"at most %d runs in all (cells x K): split a larger sweep by --seed or --shard", scenarios.MaxRuns))
	fs.StringVar(&c.replayOn, "replay-on", "", "with --backend sim: rerun every cell the simulation found violated on "+
		"this real backend (process, docker or auto), same seed, one seed per cell, and report whether it reproduces")
	fs.BoolVar(&c.keepHistories, "keep-histories", false, "with --backend sim and --repeat only: keep every run's history (default: "+
		"only the runs that missed their expectation and each cell's first; the others rerun from their seed; a real run keeps all)")
	fs.BoolVar(&c.sameSeed, "same-seed", false, "with --repeat: "+
		"give every run the seed N (the same fault schedule), to measure how often a seed reproduces its verdict")
	fs.IntVar(&c.parallel, "parallel", scenarios.DefaultParallel(), fmt.Sprintf("cells to run at once, 1..%d, "+
		"never more than there are runs (default: one per core; more starve each other's timing)", scenarios.MaxParallel()))
	fs.StringVar(&c.shard, "shard", "", "run shard i of n (\"i/n\") of the cells, for CI matrices (default: "+
		"from CI_NODE_INDEX/CI_NODE_TOTAL, or JOB_COMPLETION_INDEX with LOCKCHAOS_SHARD_TOTAL)")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON lines on stdout as the run goes: "+
		"start, cell-started, cell-finished, summary (schema: docs/schema/run-stream.v1.json)")
	fs.DurationVar(&c.budget, "budget", scenarios.DefaultBudget, "checker budget per property (positive)")
	fs.StringVar(&c.toxAPI, "toxiproxy-api", "", "serve each cell's toxiproxy HTTP API on this "+
		"loopback address (port 0: a free one, printed), to poke a long run with toxiproxy-cli")
	fs.Float64Var(&c.timeScale, "time-scale", 0, "stretch every scenario time by this factor "+
		"(0: measure the machine and choose; 1: as designed)")
	fs.Var(flagvalue.PositiveDuration(&c.maxDuration), "max-duration", "how long a cell below its evidence floor may run on "+
		"(default 5x its duration); at least every selected cell's duration, and raised to a cell's duration "+
		"where the time scale stretches that further")
	fs.Var(flagvalue.PositiveDuration(&c.recoverWithin), "recover-within", "deadlock-free's recovery bound for every cell: after a holder "+
		"crashes, hangs or is cut off, another pod must acquire its key within it (default: each scenario's recover_within, "+
		"else twice its TTL plus 60ms of retry slack)")
	fs.Var(flagvalue.PositiveDuration(&c.nodeTimeout), "node-timeout", "cluster-node-timeout of every cell on "+
		"Redis Cluster, as given (default: each scenario's node_timeout, else 500ms stretched with the cell; Redis's own is 15s)")
	fs.Var(flagvalue.PositiveDuration(&c.partLength), "part-length", "a cell longer than this is long: "+
		"one history, judged and checked in chunks as it grows, in flat memory (default 2m; 100ms or more, "+
		"at most 100000 parts a cell)")
	fs.BoolVar(&c.noWitness, "no-witness", false, "run without the witness on the servers (to measure what it costs): "+
		"every lease end is then assumed from the TTL, and every sentence says so")
	fs.BoolVar(&c.inParts, "in-parts", false, "run a long cell in parts of --part-length instead, "+
		"each with its own pods, history and check, a TTL's pause between")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the whole run "+
		"to this `file` (go tool pprof), e.g. to see what a simulated sweep spends its time on")
	c.bindSelection(fs)
	fs.Var(flagvalue.OptInt(&c.floor.MinExercised), "min-exercised", "evidence floor: "+
		"fault windows that must reach their dangerous moment (default 3; a scenario may set its own)")
	fs.Var(flagvalue.OptInt(&c.floor.MinCycles), "min-cycles", "evidence floor: completed acquire-release cycles (default 20)")
	fs.Var(flagvalue.OptFloat(&c.floor.MaxIndefinite), "max-indefinite", "evidence floor: "+
		"largest share of acquires outside fault windows that may time out, 0..1 (default 0.5)")
}

// bindBackend binds where the servers run: --backend and what goes with it.
func (c *runConfig) bindBackend(fs *pflag.FlagSet) {
	fs.StringVar(&c.backend, "backend", "auto", "where Redis runs: auto (process if redis-server is installed, else docker), "+
		"process, docker, external, or sim (simulated: miniredis in virtual time, for fast sweeps; not real Redis)")
	fs.Var(&c.addrs, "redis-addr", "your own Redis servers for --backend external (host:port, comma separated, "+
		"each a different server; 3 for redlock)")
	fs.StringVar(&c.pgURL, "postgres-url", "", "your own PostgreSQL server for --backend external (postgres://USER@HOST:PORT/DATABASE; "+
		"the role needs CREATE on the database: each cell works in a schema lockchaos_<n> of its own, dropped when it ends; "+
		"a password is never printed: give it in PGPASSWORD or ~/.pgpass to rerun)")
	fs.StringVar(&c.image, "redis-image", "", redisImageUsage)
}

// complete registers the values shells may offer for run's flags: names
// from the registries (and from the --scenarios-file and --lock-driver
// already typed), file and directory names where a flag takes one, and
// nothing (rather than file names) for the other flags.
func (c *runConfig) complete(cmd *cobra.Command) {
	list := func(names func() []scenarios.Choice) cobra.CompletionFunc {
		return cobrakit.List(func() []cobra.Completion { return choices(names()) })
	}
	cobrakit.Must(cmd.RegisterFlagCompletionFunc("scenario", list(func() []scenarios.Choice { return scenarios.ScenarioChoices(c.files) })))
	cobrakit.Must(cmd.RegisterFlagCompletionFunc("lock", list(func() []scenarios.Choice {
		return scenarios.LockChoices(c.files, c.lockDrivers)
	})))
	cobrakit.Must(cmd.RegisterFlagCompletionFunc("expect", list(scenarios.ExpectationChoices)))
	cobrakit.Must(cmd.RegisterFlagCompletionFunc("backend", cobrakit.Choices(func() []cobra.Completion {
		return choices(backends)
	})))
	cobrakit.Must(cmd.RegisterFlagCompletionFunc("replay-on", cobrakit.Choices(func() []cobra.Completion {
		return []cobra.Completion{"process", "docker", "auto"}
	})))
	cobrakit.Must(cmd.MarkFlagFilename("scenarios-file", "yaml", "yml"))
	cobrakit.Must(cmd.MarkFlagDirname("out"))
	cobrakit.Must(cmd.MarkFlagFilename("cpuprofile"))
	cobrakit.NoFilesForTheRest(cmd)
}
