package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/margins"
)

// What `lockchaos margins` checks before anything starts, by the rules
// run follows (runcheck.go): every error names the flag, the value and
// what it wants, and exits 2 before a backend is chosen or a probe runs.
// A flag given 0 is an error, not its default: the default is the flag
// left out.

// The TTLs margins searches at. Below 10 ms a scenario means nothing on a
// loaded machine (scenarios' own floor) and Redis counts in milliseconds.
// Virtual time is free, but a cell's history is not: the pods retry every
// 20 ms whatever the TTL, so a probe's history grows with it (fenced's
// one-way-loss up to 10x a 30 s TTL peaked at 650 MB with two cells at
// once, and took 6.5 min for 2 seeds); past a minute a search is hours
// and gigabytes.
const (
	minMarginsTTL = 10 * time.Millisecond
	maxMarginsTTL = time.Minute
)

// The search's step, as a share of the TTL. Below 1% the bisection
// splits hairs the runs cannot tell apart (a fault lands at a random
// moment of a critical section; a probe's magnitude rounds to 0.1 ms);
// above 50% it brackets nothing a ladder rung does not.
const (
	minResolution = 0.01
	maxResolution = 0.5
)

// The largest magnitude tried, in TTLs (margins.Config's bound).
const (
	minCap = 0.1
	maxCap = 100
)

// check says what is wrong with the flags' values before anything starts.
func (c marginsConfig) check() error {
	for _, check := range []func() error{c.checkNames, c.checkCounts, c.checkFloats, c.checkTTLs, c.checkMarkdown} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkNames checks the flags that take a name from a fixed list.
func (c marginsConfig) checkNames() error {
	switch c.backend {
	case "sim", "process", "docker":
	default:
		return fmt.Errorf("--backend %q: unknown (want sim, process or docker)", c.backend)
	}
	switch c.confirmOn {
	case "process", "docker", "none":
	default:
		// external is no choice here: a confirmation of restart-delay
		// kills and restarts the nodes, which only a Redis margins
		// started itself allows.
		return fmt.Errorf("--confirm-on %q: unknown (want process, docker or none)", c.confirmOn)
	}
	if len(c.locks) == 0 {
		return errors.New("--lock '': name at least one lock (lockchaos list shows them)")
	}
	// A name given twice is searched twice, its rows and plots written
	// over each other: a typo, said before an hour's search.
	for _, l := range []struct {
		flag  string
		names []string
	}{{"--lock", c.locks}, {"--family", c.families}} {
		seen := map[string]bool{}
		for _, n := range l.names {
			if n = strings.TrimSpace(n); seen[n] {
				return fmt.Errorf("%s %s: %s given twice", l.flag, strings.Join(l.names, ","), n)
			}
			seen[n] = true
		}
	}
	return nil
}

// checkCounts checks the whole-number flags: as run's --repeat and
// --parallel, each probe's runs stay in memory until it is counted.
func (c marginsConfig) checkCounts() error {
	for _, n := range []struct {
		flag string
		v    int
	}{{"--confirm-seeds", c.confirmSeeds}, {"--seeds", c.seeds}} { // --seeds defaults to --confirm-seeds on real Redis
		if n.v < 1 || n.v > maxRuns {
			return fmt.Errorf("%s %d: want 1..%d seeds a batch", n.flag, n.v, maxRuns)
		}
	}
	if c.parallel < 1 || c.parallel > maxParallel() {
		return fmt.Errorf("--parallel %d: want 1..%d cells at once (more starve each other's timing)", c.parallel, maxParallel())
	}
	return nil
}

// checkFloats checks the number flags: NaN and the infinities are out of
// every range (a NaN step bisected forever).
func (c marginsConfig) checkFloats() error {
	switch r, cp, ts := c.resolution, c.capTTL, c.timeScale; {
	case !(r >= minResolution && r <= maxResolution):
		return fmt.Errorf("--resolution %v: want a share of the TTL in %v..%v (the default: 0.05 in the simulation, "+
			"0.1 on real Redis)", r, minResolution, maxResolution)
	case !(cp >= minCap && cp <= maxCap):
		return fmt.Errorf("--cap %v: want a number of TTLs in %v..%v", cp, minCap, maxCap)
	case ts != 0 && !(ts >= 0.1 && ts <= 100):
		return fmt.Errorf("--time-scale %v: want 0 (measure) or a factor in 0.1..100", ts)
	case ts != 0 && c.backend == "sim" && c.confirmOn == "none":
		return fmt.Errorf("--time-scale %v with --backend sim and --confirm-on none: nothing runs on real Redis, "+
			"and virtual time needs no stretching (leave it out)", ts)
	}
	return nil
}

// checkTTLs checks --ttl and --recovery-ttl (0 alone skips the liveness
// margins).
func (c marginsConfig) checkTTLs() error {
	if err := ttlInRange("--ttl", c.ttl); err != nil {
		return err
	}
	if len(c.recoveryTTLs) == 1 && c.recoveryTTLs[0] == 0 {
		return nil
	}
	for _, d := range c.recoveryTTLs {
		if d == 0 {
			return fmt.Errorf("--recovery-ttl %s: 0 skips the liveness margins, alone; the others want %v..%v",
				joinDurations(c.recoveryTTLs), minMarginsTTL, maxMarginsTTL)
		}
		if err := ttlInRange("--recovery-ttl", d); err != nil {
			return err
		}
	}
	return nil
}

// livenessTTLs are the TTLs of the liveness margins: --recovery-ttl's
// (none for a lone 0), else half, once and twice --ttl, those of them in
// the range --recovery-ttl takes (at --ttl 10ms, half of it is no TTL a
// scenario runs at).
func (c marginsConfig) livenessTTLs() []time.Duration {
	if c.recoveryTTLs != nil {
		if len(c.recoveryTTLs) == 1 && c.recoveryTTLs[0] == 0 {
			return nil
		}
		return c.recoveryTTLs
	}
	var out []time.Duration
	for _, d := range []time.Duration{c.ttl / 2, c.ttl, 2 * c.ttl} {
		if ttlInRange("", d) == nil {
			out = append(out, d)
		}
	}
	return out
}

func ttlInRange(flag string, d time.Duration) error {
	if d < minMarginsTTL || d > maxMarginsTTL {
		return fmt.Errorf("%s %v: want a TTL in %v..%v", flag, d, minMarginsTTL, maxMarginsTTL)
	}
	return nil
}

func joinDurations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

// checkMarkdown checks the --markdown file the search will write its
// table into at the end: there, writable, with the markers, so an hour's
// search does not end in "no such file".
func (c marginsConfig) checkMarkdown() error {
	if c.markdown == "" {
		return nil
	}
	if err := margins.CheckMarkdownFile(c.markdown); err != nil {
		return fmt.Errorf("--markdown %s: %w", c.markdown, err)
	}
	return nil
}

// interruptCode is the exit code of a command a signal cut short: 130
// for SIGINT, 143 for SIGTERM (128 + the signal's number, as a shell
// reports it); 0 for none.
func interruptCode(sig os.Signal) int {
	switch sig {
	case syscall.SIGINT:
		return 130
	case syscall.SIGTERM:
		return 143
	}
	return 0
}

// signalName names the signal behind an interrupt's exit code.
func signalName(code int) string {
	return map[int]string{130: "SIGINT", 143: "SIGTERM"}[code]
}
