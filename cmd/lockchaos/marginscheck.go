package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lockchaos/lockchaos/margins"
	"github.com/lockchaos/lockchaos/scenarios"
)

// What `lockchaos margins` checks before anything starts, by the rules
// run follows (runcheck.go): every error names the flag, the value and
// what it wants, and exits 2 before a backend is chosen or a probe runs.
// A flag given 0 is an error, not its default: the default is the flag
// left out.

// check says what is wrong with the flags' values before anything starts.
func (c marginsConfig) check() error {
	for _, check := range []func() error{c.checkNames, c.checkRanges, c.checkMarkdown} {
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

// checkRanges checks the numbers, by margins' own ranges, each error
// named by its flag.
func (c marginsConfig) checkRanges() error {
	if c.cfg.Parallel < 1 || c.cfg.Parallel > scenarios.MaxParallel() {
		return fmt.Errorf("--parallel %d: want 1..%d cells at once (more starve each other's timing)",
			c.cfg.Parallel, scenarios.MaxParallel())
	}
	if err := margins.CheckRanges(c.cfg, scenarios.MaxRuns, c.recoveryTTLs); err != nil {
		return namedFlag(err)
	}
	if c.cfg.TimeScale != 0 && c.backend == "sim" && c.confirmOn == "none" {
		return fmt.Errorf("--time-scale %v with --backend sim and --confirm-on none: nothing runs on real Redis, "+
			"and virtual time needs no stretching (leave it out)", c.cfg.TimeScale)
	}
	return nil
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
