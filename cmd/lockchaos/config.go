package main

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/scenarios"
)

// runConfig is what `lockchaos run` was asked to do. Its flags bind to it
// directly (bind, runflags.go), resolveRun checks it and fills what the
// flags leave open, and from it come every cell's scenarios.Options
// (cellOptions) and the flags of every rerun line (rerunFlags): one value
// from the command line to the cells and back.
//
// The defaults are the flags' (bind): --repeat 1, --parallel one per core,
// --budget 30s, --backend auto, --out out/chaos. A zero --seed is random
// (resolveRun chooses it); the other zero values keep each scenario's own.
type runConfig struct {
	// Which cells: scenarios and locks (default all), the files and
	// driver locks that add to them, the expectations kept, the shard
	// (default: from the CI's environment, see selectCells).
	scen, locks, files, expects stringList
	lockDrivers                 multiList
	shard                       string

	// How often: the run seed, runs per cell, cells at once.
	seed                    int64
	repeat, parallel        int
	sameSeed, keepHistories bool

	// Where Redis runs: --backend (chooseBackend, or the simulation), its
	// image and addresses, and the real backend that replays simulated
	// findings.
	backend, image, replayOn string
	addrs                    stringList

	// Each cell's options (cellOptions). timeScale 0 measures the machine.
	duration, budget, maxDuration, partLength time.Duration
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

// check says what is wrong with the values before anything starts.
func (c runConfig) check() error {
	if c.repeat < 1 || c.parallel < 1 || c.duration < 0 || c.clients < 0 || c.budget <= 0 {
		return errors.New("--repeat, --parallel and --budget must be positive; --duration and --clients not negative")
	}
	if c.timeScale < 0 || c.timeScale > 0 && c.timeScale < 0.1 || c.timeScale > 100 {
		return fmt.Errorf("--time-scale %v: want 0 (measure) or a factor in 0.1..100", c.timeScale)
	}
	// The options the flags give, before a backend or a scale is known
	// (--toxiproxy-api has its own check below).
	opts := scenarios.Options{
		Duration: c.duration, Clients: c.clients, MaxDuration: c.maxDuration, Floor: c.floor, PartLength: c.partLength,
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if !isBackend(c.backend) {
		return fmt.Errorf("unknown backend %q (valid: %s)", c.backend, backendNames())
	}
	if err := c.checkSim(); err != nil {
		return err
	}
	if c.toxAPI != "" {
		if err := (netfault.ProxiesConfig{APIAddr: c.toxAPI}).Validate(); err != nil {
			return fmt.Errorf("--toxiproxy-api: %w", err)
		}
		if _, port, _ := net.SplitHostPort(c.toxAPI); port != "0" && c.parallel > 1 {
			return fmt.Errorf("--toxiproxy-api %s: a fixed port serves one cell at a time; add --parallel 1, or use port 0", c.toxAPI)
		}
	}
	if (c.backend == "external") != (len(c.addrs) > 0) {
		return errors.New("--redis-addr goes with --backend external, and --backend external needs --redis-addr")
	}
	return nil
}

// checkSim says what does not go with the simulated backend, or with
// --replay-on without it.
func (c runConfig) checkSim() error {
	if c.sameSeed && c.repeat < 2 {
		return errors.New("--same-seed goes with --repeat N (N >= 2): it reruns one seed N times")
	}
	if !c.simulated() {
		if c.replayOn != "" {
			return errors.New("--replay-on goes with --backend sim (it replays simulated findings on real Redis)")
		}
		return nil
	}
	switch c.replayOn {
	case "", "process", "docker", "auto":
	default:
		return fmt.Errorf("--replay-on %q: want a real backend that can kill nodes (process, docker, auto)", c.replayOn)
	}
	if c.timeScale != 0 && c.timeScale != 1 {
		return fmt.Errorf("--time-scale %v with --backend sim: virtual time needs no stretching (leave it out, or 1)", c.timeScale)
	}
	if c.toxAPI != "" {
		return errors.New("--toxiproxy-api with --backend sim: simulated links are not toxiproxy's")
	}
	if c.image != "" && c.replayOn == "" {
		return errors.New("--redis-image with --backend sim: the simulation runs no image (it is for --replay-on docker)")
	}
	return nil
}

// target is where cells run: the backend, how its times stretch, and the
// --backend their rerun lines name ("" when a rerun finds Redis as the
// run did, with --backend's default).
type target struct {
	be backend.Backend
	timing
	named string
}

// timing is how a backend's cells stretch (scenarios.Options.TimeScale
// and NodeOpTime) and, for summary.json, how that was found.
type timing struct {
	scale       float64
	nodeOp      time.Duration
	calibration string // "" when --time-scale gave the scale
	virtual     bool   // virtual time: nothing measured, scale 1
	measured    bool   // Calibrate measured the scale just now
}

// cellOptions are the options of every cell c runs on t, their rerun
// lines included; the run sets each cell's seed from Seed, a replay
// replaces Seed and OutDir per finding. notify gets the one-line notices
// (where a toxiproxy API listens), or is nil.
func (c runConfig) cellOptions(t target, notify func(string)) scenarios.Options {
	return scenarios.Options{Seed: c.seed, OutDir: c.out, Duration: c.duration, Clients: c.clients, Budget: c.budget,
		Backend: t.be, RerunFlags: c.rerunFlags(t), ToxiproxyAPI: c.toxAPI, Notify: notify,
		TimeScale: t.scale, NodeOpTime: t.nodeOp, MaxDuration: c.maxDuration, Floor: c.floor, PartLength: c.partLength, InParts: c.inParts}
}

// rerunFlags are what a cell's rerun line adds to its --scenario, --lock
// and --seed (scenarios.Options.RerunFlags): --duration, --clients and
// --scenarios-file as given, --backend when t names one, and the time
// scale the cell ran at. config_test.go parses them back into c.
func (c runConfig) rerunFlags(t target) string {
	s := ""
	if c.duration > 0 {
		s += " --duration " + c.duration.String()
	}
	if c.clients > 0 {
		s += fmt.Sprintf(" --clients %d", c.clients)
	}
	for _, f := range c.files {
		s += " --scenarios-file " + f
	}
	if t.named != "" {
		s += " --backend " + t.named
	}
	return s + fmt.Sprintf(" --time-scale %.2f", t.scale)
}
