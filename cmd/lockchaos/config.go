package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/internal/flagvalue"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/scenarios"
)

// runConfig is what `lockchaos run` was asked to do. Its flags bind to it
// directly (bind, runflags.go), resolveRun checks it and fills what the
// flags leave open, and from it come every cell's scenarios.Options
// (cellOptions) and the flags of every rerun line (rerunFlags): one value
// from the command line to the cells and back.
//
// The defaults are the flags' (bind): --repeat 1, --parallel one per core,
// --budget 30s (scenarios.DefaultBudget), --backend auto, --out out/chaos. A zero --seed is random
// (resolveRun chooses it); the other zero values keep each scenario's own.
type runConfig struct {
	// Which cells: scenarios and locks (default all), the files and
	// driver locks that add to them, the expectations kept, the shard
	// (default: from the CI's environment, see selectCells).
	scen, locks, files, expects flagvalue.List
	services                    flagvalue.List
	lockDrivers                 flagvalue.Multi
	shard                       string

	// How often: the run seed, runs per cell, cells at once.
	seed                    int64
	repeat, parallel        int
	sameSeed, keepHistories bool

	// Where Redis runs: --backend (chooseBackend, or the simulation), its
	// image and addresses, and the real backend that replays simulated
	// findings.
	backend, image, replayOn string
	addrs                    flagvalue.List
	pgURL                    string // --postgres-url: never printed whole (external.Redact)

	// Each cell's options (cellOptions). timeScale 0 measures the machine.
	duration, budget, maxDuration, partLength time.Duration
	recoverWithin                             time.Duration
	nodeTimeout                               time.Duration
	noWitness                                 bool
	clients                                   int
	inParts                                   bool
	timeScale                                 float64
	toxAPI                                    string
	floor                                     scenarios.FloorOverride

	// Output: where, whether as a JSON stream, a CPU profile.
	out, cpuProfile string
	asJSON          bool
}

// resolveRun checks c and fills the values the flags leave open (a zero
// seed becomes one drawn from now). Its errors name the flags at fault.
func resolveRun(c runConfig, now time.Time) (runConfig, error) {
	if err := c.check(); err != nil {
		return runConfig{}, err
	}
	if c.seed == 0 {
		c.seed = now.UnixNano()%1_000_000_000 + 1
	}
	return c, nil
}

// simulated says the cells run on the simulated backend.
func (c runConfig) simulated() bool { return c.backend == sim.Name }

// target is where cells run: the backend, how its times stretch, and the
// --backend their rerun lines name ("" when a rerun finds Redis as the
// run did, with --backend's default; see rerunBackend).
type target struct {
	be backend.Backend
	scenarios.Timing
	named string
}

// cellOptions are the options of every cell c runs on t, their rerun
// lines included; the run sets each cell's seed from Seed, a replay
// replaces Seed and OutDir per finding. notify gets the one-line notices
// (where a toxiproxy API listens), or is nil.
func (c runConfig) cellOptions(t target, notify func(string)) scenarios.Options {
	o := c.settings()
	o.Seed, o.OutDir, o.Backend, o.Rerun, o.ToxiproxyAPI, o.Notify = c.seed, c.out, t.be, c.rerun(t), c.toxAPI, notify
	o.TimeScale, o.NodeOpTime, o.PostgresNodeOpTime = t.Scale, t.NodeOp, t.PostgresNodeOp
	return o
}

// settings are the cell options the flags set that change what a cell
// does, as given (zero: each scenario's own).
func (c runConfig) settings() scenarios.Options {
	return scenarios.Options{Duration: c.duration, Clients: c.clients, Budget: c.budget, MaxDuration: c.maxDuration,
		Floor: c.floor, PartLength: c.partLength, InParts: c.inParts, RecoverWithin: c.recoverWithin, NoWitness: c.noWitness,
		NodeTimeout: c.nodeTimeout}
}

// rerunBackend is the --backend a rerun line of a cell run on be names:
// the simulation, or the backend --backend or --redis-image chose, so the
// rerun finds Redis where the run did; none when --backend auto chose
// (the rerun chooses as the run did, on whatever machine it runs).
func (c runConfig) rerunBackend(be backend.Backend) string {
	if _, virtual := backend.Virtual(be); !virtual && c.backend == "auto" && c.image == "" {
		return ""
	}
	return be.Name()
}

// rerun writes a cell's rerun line: `lockchaos run` with the cell's
// --scenario, --lock and --seed, the --lock-driver that declares its lock
// (if one does), and rerunFlags, every argument quoted for a shell
// (shellJoin), so a pasted line reruns that cell and does nothing else.
func (c runConfig) rerun(t target) func(p *scenarios.Plan) string {
	flags := c.rerunFlags(t)
	return func(p *scenarios.Plan) string {
		args := []string{"lockchaos", "run", "--scenario", p.Scenario.Name, "--lock", p.Lock.Name,
			"--seed", strconv.FormatInt(p.RunSeed, 10)}
		for _, v := range c.lockDrivers {
			if d, err := drivers.Parse(v); err == nil && d.Name == p.Lock.Name {
				args = append(args, "--lock-driver", v)
			}
		}
		return shellword.Join(append(args, flags...))
	}
}

// rerunFlags are what every rerun line of a run on t carries besides the
// cell and its driver: the scenario files, every setting that changes
// what a cell does, as given (scenarios.Options.RunFlags), where Redis ran (t's backend, with its
// image or addresses), and the time scale the cell ran at. rerunRoles in
// config_test.go lists every setting's role; the test there parses the
// lines back into c.
func (c runConfig) rerunFlags(t target) []string {
	var f []string
	add := func(flag, value string) { f = append(f, flag, value) }
	for _, file := range c.files {
		add("--scenarios-file", file)
	}
	f = append(f, c.settings().RunFlags()...)
	if t.named != "" {
		add("--backend", t.named)
	}
	if t.named == "docker" && c.image != "" {
		add("--redis-image", c.image)
	}
	if t.named == external.Name && len(c.addrs) > 0 {
		add("--redis-addr", strings.Join(c.addrs, ","))
	}
	if t.named == external.Name && c.pgURL != "" {
		add("--postgres-url", external.WithoutPassword(c.pgURL))
	}
	return append(f, "--time-scale", fmt.Sprintf("%.2f", t.Scale))
}
