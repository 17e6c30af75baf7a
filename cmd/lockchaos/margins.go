package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/flagvalue"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/margins"
	"github.com/lockchaos/lockchaos/scenarios"
)

// marginsConfig is what `lockchaos margins` was asked to do: the search's
// numbers bind to cfg directly; its locks, families and backends are
// looked up and chosen later (searchConfig, cmdMargins).
type marginsConfig struct {
	cfg                margins.Config
	locks, families    []string
	lockDrivers, files []string
	seedsSet, resSet   bool
	backend, confirmOn string
	out                string
	asJSON             bool
	recoveryTTLs       []time.Duration
	markdown           string
}

func newMarginsCmd(cl *cli) *cobra.Command {
	c := &marginsConfig{}
	cmd := &cobra.Command{
		Use: "margins", Short: "find each lock's breaking point per fault family, checked against the theory", Long: usage("margins"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.seedsSet, c.resSet = cmd.Flags().Changed("seeds"), cmd.Flags().Changed("resolution")
			return done(cmdMargins(*c, cl.stdout, cl.stderr))
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&c.locks, "lock", []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameTokenWatchdog,
		lockimpl.NameRedlock, lockimpl.NameFenced}, "locks to search, comma separated")
	fs.StringSliceVar(&c.families, "family", nil,
		"fault families, comma separated (default: all: "+strings.Join(margins.FamilyNames(), ", ")+")")
	fs.Var((*flagvalue.Multi)(&c.lockDrivers), "lock-driver",
		"a lock served by a driver process, NAME=COMMAND (repeatable); searched on real Redis")
	fs.Var((*flagvalue.Multi)(&c.files), "scenarios-file", "YAML `file` whose driver locks --lock may name (repeatable); "+
		"searched on real Redis")
	cobrakit.Must(cmd.MarkFlagFilename("scenarios-file", "yaml", "yml"))
	fs.Float64Var(&c.cfg.TimeScale, "time-scale", 0, "stretch the real-Redis runs by this factor, 0.1..100 (default: calibrated "+
		"to the machine's load, as run does; the simulation never stretches)")
	fs.DurationVar(&c.cfg.TTL, "ttl", lockimpl.DefaultTTL, fmt.Sprintf("the TTL to search at, %v..%v (your production TTL; "+
		"every scenario time stretches with it)", margins.MinTTL, margins.MaxTTL))
	fs.IntVar(&c.cfg.Seeds, "seeds", 20, fmt.Sprintf("seeds per probe, 1..%d (default 20 in the simulation, --confirm-seeds "+
		"on real Redis)", scenarios.MaxRuns))
	fs.Int64Var(&c.cfg.Seed, "seed", 1, "first seed (the same seed gives the same margins in the simulation)")
	fs.Float64Var(&c.cfg.Resolution, "resolution", 0.05, fmt.Sprintf("the search's step, as a fraction of the TTL, %v..%v "+
		"(default 0.05 in the simulation, 0.1 on real Redis)", margins.MinResolution, margins.MaxResolution))
	fs.Float64Var(&c.cfg.Cap, "cap", 10, fmt.Sprintf("the largest magnitude tried, in TTLs, %v..%v", margins.MinCap, margins.MaxCap))
	fs.StringVar(&c.backend, "backend", "sim", "where the search runs: sim, or process or docker (fewer, wider probes: slower)")
	fs.StringVar(&c.confirmOn, "confirm-on", "process", "real Redis that confirms each boundary: process, docker, or none")
	fs.IntVar(&c.cfg.ConfirmSeeds, "confirm-seeds", 5, fmt.Sprintf("seeds per confirmation batch, 1..%d", scenarios.MaxRuns))
	fs.StringVar(&c.out, "out", "out/margins", "output directory")
	fs.IntVar(&c.cfg.Parallel, "parallel", 2, fmt.Sprintf("cells at once, 1..%d", scenarios.MaxParallel()))
	fs.BoolVar(&c.asJSON, "json", false, "print margins.json on stdout instead of the table")
	fs.StringVar(&c.markdown, "markdown", "", "also write the Markdown table between <!-- lockchaos:margins --> and "+
		"<!-- /lockchaos:margins --> of this file (docs/margins.md's; checked before the search)")
	fs.DurationSliceVar(&c.recoveryTTLs, "recovery-ttl", nil, "TTLs at which to measure how long a crashed holder's key stays "+
		"taken, each in --ttl's range (default: half, once and twice --ttl, those in it; 0 alone to skip)")
	return cmd
}

func cmdMargins(c marginsConfig, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockchaos margins: "+format+"\n", a...)
		return exitUsage
	}
	if c.backend != "sim" {
		// Real Redis: fewer, wider probes, unless asked otherwise.
		if !c.seedsSet {
			c.cfg.Seeds = c.cfg.ConfirmSeeds
		}
		if !c.resSet {
			c.cfg.Resolution = 0.1
		}
	}
	if err := c.check(); err != nil {
		return usageErr("%v", err)
	}
	cfg, err := c.searchConfig()
	if err != nil {
		return usageErr("%v", err)
	}
	// One signal context from the calibration to the last file: SIGINT
	// or SIGTERM at any point ends the search promptly, with 130 or 143.
	ctx, stop, caught := interrupt.Context()
	defer stop()
	// Last line of defence, as run's: whatever happens, no redis-server
	// outlives the search.
	defer backend.KillAll()
	run := func(be backend.Backend) int {
		cfg.Backend = be
		code := c.searchOn(ctx, cfg, stdout, stderr)
		if ic := interrupted(caught(), stderr); ic != 0 {
			return ic
		}
		return code
	}
	if c.backend == "sim" {
		return sim.Host(func(b sim.Backend) int { return run(b) })
	}
	be, _, err := chooseBackend(c.backend, "", external.Config{})
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos margins: %v\n", err)
		return exitHarness
	}
	defer closeBackend(be)
	return run(be)
}

// searchOn claims --out, chooses the confirming backend, calibrates and
// searches with cfg (its Backend chosen).
func (c marginsConfig) searchOn(ctx context.Context, cfg margins.Config, stdout, stderr io.Writer) int {
	// Once every flag is known good: a usage error makes no --out.
	release, err := claimOut(c.out)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos margins: %v\n", err)
		return exitUsage
	}
	defer release()
	if c.confirmOn != "none" {
		conf, _, err := chooseBackend(c.confirmOn, "", external.Config{})
		if err != nil {
			fmt.Fprintf(stderr, "lockchaos margins: --confirm-on: %v\n", err)
			return exitHarness
		}
		defer closeBackend(conf)
		cfg.Confirm = conf
	}
	on, calibration, err := margins.Calibrate(ctx, &cfg, c.cfg.TimeScale)
	if calibration != "" {
		fmt.Fprintf(stderr, "lockchaos margins: %s: %s\n", on.Name(), calibration)
	}
	if err != nil {
		if ctx.Err() != nil {
			return exitHarness // the caller says which signal and exits with its code
		}
		fmt.Fprintf(stderr, "lockchaos margins: calibration: %v\n", err)
		return exitHarness
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "lockchaos margins: %v\n", err)
		return exitUsage
	}
	return searchAndReport(ctx, cfg, c, stdout, stderr)
}

// searchConfig is the search the flags ask for, its locks and families
// looked up (the driver locks registered first); the backends are
// chosen later.
func (c marginsConfig) searchConfig() (margins.Config, error) {
	cfg := c.cfg
	cfg.OutDir = c.out + "/probes"
	if _, err := loadCatalog(c.files, c.lockDrivers); err != nil {
		return cfg, err
	}
	locks, err := margins.LocksNamed(c.locks, c.backend == "sim" && c.confirmOn == "none")
	if err != nil {
		return cfg, err
	}
	cfg.Locks = locks
	cfg.Families, err = margins.FamiliesNamed(c.families)
	return cfg, err
}

// interrupted says which signal cut the search short, and returns its
// exit code (0: none did).
func interrupted(sig os.Signal, stderr io.Writer) int {
	code := interrupt.Code(sig)
	if code != 0 {
		fmt.Fprintf(stderr, "lockchaos margins: interrupted (%s); what was found before it is written\n",
			interrupt.Name(code))
	}
	return code
}

func searchAndReport(ctx context.Context, cfg margins.Config, c marginsConfig, stdout, stderr io.Writer) int {
	start := time.Now()
	cfg.Progress = func(p margins.Probe) { fmt.Fprintf(stderr, "  %s\n", p) }
	rep, err := margins.Run(ctx, cfg, margins.LivenessTTLs(c.cfg.TTL, c.recoveryTTLs), func(found []margins.Margin) {
		replayCommands(found, c)
	})
	if c.asJSON {
		_ = rep.WriteJSON(stdout)
	} else {
		rep.WriteText(stdout)
	}
	wrote, werr := rep.WriteAll(c.out, c.markdown, ctx.Err() == nil)
	fmt.Fprintf(stderr, "lockchaos margins: %d margin(s) in %s; wrote %s\n", len(rep.Margins), time.Since(start).Round(time.Second),
		strings.Join(wrote, ", "))
	switch {
	case ctx.Err() != nil && werr == nil:
		return exitHarness // the caller says which signal and exits with its code
	case err != nil || werr != nil:
		fmt.Fprintf(stderr, "lockchaos margins: %v\n", cmp.Or(err, werr))
		return exitHarness
	case !rep.Agrees():
		return exitViolation
	}
	return exitOK
}
