package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/scenarios"
)

// What `lockchaos run` checks before anything starts: every error names
// the flag at fault and what it wants, and exits 2 (a usage error) before
// a backend is chosen, a node started or the machine calibrated.

// check says what is wrong with the values before anything starts.
func (c runConfig) check() error {
	if err := c.checkCounts(); err != nil {
		return err
	}
	// The ranges of the options are scenarios' (bind's types refuse a
	// zero or negative --duration, --clients, --max-duration and
	// --part-length before); each error is named by its flag.
	opts := c.settings()
	opts.TimeScale = c.timeScale
	if err := opts.Validate(); err != nil {
		return namedFlag(err)
	}
	switch {
	case c.budget <= 0:
		return fmt.Errorf("--budget %v: want a positive duration", c.budget)
	case c.duration > 0 && c.maxDuration > 0 && c.maxDuration < c.duration:
		return fmt.Errorf("--max-duration %v is shorter than --duration %v: a cell always runs its duration", c.maxDuration, c.duration)
	case !isBackend(c.backend):
		return fmt.Errorf("unknown backend %q (valid: %s)", c.backend, backendNames())
	}
	for _, check := range []func() error{c.checkSim, c.checkToxiproxy, c.checkBackendFlags} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// namedFlag names the flag of a library's out-of-range option: a
// FieldError's field is the flag's name.
func namedFlag(err error) error {
	var fe *scenarios.FieldError
	if errors.As(err, &fe) {
		return errors.New("--" + fe.Flagless())
	}
	return err
}

// checkCounts checks --repeat, --parallel and the seeds they make.
func (c runConfig) checkCounts() error {
	if err := scenarios.CheckRuns(c.repeat, c.parallel, 0); err != nil {
		return namedFlag(err)
	}
	// Each run's seed is --seed plus its repeat (all --seed with
	// --same-seed); 0 is a random seed, drawn small and positive later.
	repeats := c.repeat
	if c.sameSeed {
		repeats = 1
	}
	if err := scenarios.SeedsFor(c.seed, repeats); err != nil {
		return fmt.Errorf("--seed: %w (--repeat %d)", err, c.repeat)
	}
	return nil
}

// checkToxiproxy checks --toxiproxy-api.
func (c runConfig) checkToxiproxy() error {
	if c.toxAPI == "" {
		return nil
	}
	if err := (netfault.ProxiesConfig{APIAddr: c.toxAPI}).Validate(); err != nil {
		return fmt.Errorf("--toxiproxy-api: %w", err)
	}
	return nil
}

// checkToxiproxyRuns checks a fixed --toxiproxy-api port against the runs
// that would go at once: one cell (once) never shares it, whatever
// --parallel says.
func (c runConfig) checkToxiproxyRuns(runs int) error {
	_, port, _ := net.SplitHostPort(c.toxAPI)
	if c.toxAPI == "" || port == "0" || min(c.parallel, runs) < 2 {
		return nil
	}
	return fmt.Errorf("--toxiproxy-api %s: a fixed port serves one cell at a time, and %d runs would go %d at once; "+
		"add --parallel 1, or use port 0", c.toxAPI, runs, min(c.parallel, runs))
}

// checkBackendFlags checks the flags that go with one backend only.
func (c runConfig) checkBackendFlags() error {
	if (c.backend == "external") != (len(c.addrs) > 0 || c.pgURL != "") {
		return errors.New("--redis-addr and --postgres-url go with --backend external, and --backend external needs " +
			"--redis-addr, --postgres-url or both")
	}
	if err := external.CheckAddrs(c.addrs); err != nil {
		return err
	}
	if c.pgURL != "" {
		if err := external.CheckPostgresURL(c.pgURL); err != nil {
			return err
		}
	}
	if c.image != "" && (c.backend == "process" || c.backend == "external") {
		return fmt.Errorf("--redis-image with --backend %s: an image is for the docker backend (--backend docker, or auto)", c.backend)
	}
	if c.keepHistories && (!c.simulated() || c.repeat < 2) {
		return errors.New("--keep-histories goes with --backend sim and --repeat N (N >= 2): " +
			"only a simulated sweep drops histories (a real run keeps every one)")
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
	case "", "docker", "auto":
	case "process":
		if c.image != "" {
			return errors.New("--redis-image with --replay-on process: an image is for the docker backend (--replay-on docker, or auto)")
		}
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

// checkCells checks what depends on the selected cells: how many runs
// they make, and that --max-duration is at least each one's duration.
func (c runConfig) checkCells(cells []scenarios.Cell) error {
	if err := scenarios.CheckRuns(c.repeat, c.parallel, len(cells)); err != nil {
		return namedFlag(err)
	}
	if err := c.checkToxiproxyRuns(len(cells) * c.repeat); err != nil {
		return err
	}
	if c.maxDuration == 0 {
		return c.checkPlans(cells)
	}
	for _, cell := range cells {
		d := cell.Scenario.WithDefaults().Duration
		if c.duration > 0 {
			d = c.duration
		}
		if c.maxDuration < d {
			return fmt.Errorf("--max-duration %v is shorter than %s's duration %v: a cell always runs its duration; "+
				"want %v or more (or --duration)", c.maxDuration, cell.Name(), d, d)
		}
	}
	return c.checkPlans(cells)
}

// checkPlans plans every selected cell as the run will (the time scale
// aside, which moves no bound) and returns the first plan that is too
// large: a cell cut into too many parts (--part-length) or able to open
// too many fault windows (its gaps over its length).
func (c runConfig) checkPlans(cells []scenarios.Cell) error {
	t := target{be: process.Backend{}} // the default backend's timing, as before a backend is chosen
	if c.simulated() {
		t.be = sim.New(nil) // planning enters no bubble
	}
	return scenarios.FirstTooLarge(cells, c.cellOptions(t, nil))
}
