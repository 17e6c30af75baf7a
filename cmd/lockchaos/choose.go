package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/choose"
	"github.com/lockchaos/lockchaos/internal/cobrakit"
	"github.com/lockchaos/lockchaos/internal/flagvalue"
	"github.com/lockchaos/lockchaos/internal/interrupt"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/margins"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/verify"
)

// chooseConfig is what `lockchaos choose` was asked to do: the cells as
// run selects them (runConfig, the flags choose shares with run), and
// what the table adds.
type chooseConfig struct {
	run         runConfig
	quick       bool
	noCost      bool
	markdown    flagvalue.Multi
	marginsFile string
}

func newChooseCmd(cl *cli) *cobra.Command {
	c := &chooseConfig{}
	cmd := &cobra.Command{
		Use: "choose", Short: "which lock to use: every lock under the same faults, with liveness, margins and cost, in one table",
		Long: usage("choose"), Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return done(cmdChoose(*c, cl.argsAfter("choose"), cl.stdout, cl.stderr))
		},
	}
	fs := cmd.Flags()
	r := &c.run
	fs.Var(&r.locks, "lock", "locks in the table, comma separated (default: every lock a scenario lists, "+
		"in-process ones aside); a --lock-driver lock named here runs in every scenario, not gated")
	fs.Var(&r.files, "scenarios-file", "YAML `file` of extra scenarios and driver locks (repeatable): drivers/libs.yaml "+
		"adds the library rows")
	fs.Var(&r.lockDrivers, "lock-driver", "your lock, served by a driver process, NAME=COMMAND (repeatable; "+
		"docs/driver-protocol.md); name it in --lock to put it in the table")
	fs.Var(&r.scen, "scenario", "only these scenarios, comma separated (default: all)")
	fs.Var(&r.services, "service", "only locks on these lock services, comma separated: redis, postgres, etcd (default: all)")
	fs.Int64Var(&r.seed, "seed", 0, "first run seed (default: random, printed); the same seed gives the same "+
		"fault schedules")
	fs.IntVar(&r.repeat, "seeds", 0, fmt.Sprintf("runs of every cell, seeds N, N+1, ... (default %d, 1 with --quick)",
		choose.DefaultSeeds))
	fs.IntVar(&r.parallel, "parallel", 4, fmt.Sprintf("cells at once, 1..%d (most cells wait on TTLs and elections, "+
		"so more than the cores)", scenarios.MaxParallel()))
	r.bindBackend(fs)
	fs.Float64Var(&r.timeScale, "time-scale", 0, "stretch every scenario time by this factor (0: measure the machine "+
		"and choose; 1: as designed); the cost is measured in real time whatever it is")
	fs.DurationVar(&r.budget, "budget", scenarios.DefaultBudget, "checker budget per property (positive)")
	fs.StringVar(&r.out, "out", "out/choose", "output directory")
	fs.BoolVar(&r.asJSON, "json", false, "print choose.json on stdout instead of the table (schema: docs/schema/choose.v1.json)")
	fs.BoolVar(&c.quick, "quick", false, "the short form, for CI: one scenario per row and family, one seed, "+
		"no margins search, fewer cost samples")
	fs.BoolVar(&c.noCost, "no-cost", false, "leave the cost out (its contended cells too)")
	fs.Var(&c.markdown, "markdown", "also write the table into this `file` (repeatable): the whole table between "+
		choose.FullStart+" and "+choose.FullEnd+", the short form between "+choose.ShortStart+" and "+choose.ShortEnd+
		" (checked before the run; written only when it was not interrupted)")
	fs.StringVar(&c.marginsFile, "margins", "", "fill the margins from this margins.json (lockchaos margins --out DIR "+
		"writes DIR/margins.json) instead of searching")
	cobrakit.Must(cmd.MarkFlagFilename("scenarios-file", "yaml", "yml"))
	cobrakit.Must(cmd.MarkFlagFilename("margins", "json"))
	cobrakit.Must(cmd.MarkFlagFilename("markdown", "md"))
	return cmd
}

// cmdChoose runs the table; args is the command line after "choose".
func cmdChoose(c chooseConfig, args []string, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockchaos choose: "+format+"\n", a...)
		return exitUsage
	}
	if c.run.backend == sim.Name {
		return usageErr("--backend sim: the table measures real servers in real time (recovery, cost); " +
			"use process, docker or external (the margins are searched in the simulation anyway)")
	}
	seeds := c.run.repeat
	if seeds < 0 || seeds > scenarios.MaxRuns {
		return usageErr("--seeds %d: want 1..%d runs of every cell (0: the default)", seeds, scenarios.MaxRuns)
	}
	if seeds == 0 {
		c.run.repeat = choose.DefaultSeeds
		if c.quick {
			c.run.repeat = 1
		}
	}
	run, err := resolveRun(c.run, time.Now())
	if err != nil {
		return usageErr("%v", err)
	}
	c.run = run
	cells, err := c.cells()
	if err == nil {
		err = c.run.checkCells(cells)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	given, err := c.readFiles()
	if err != nil {
		return usageErr("%v", err)
	}
	release, err := claimOut(c.run.out)
	if err != nil {
		return usageErr("%v", err)
	}
	defer release()
	sweepContainers(stderr)
	be, redisVersion, err := chooseBackend(c.run.backend, c.run.image, external.Config{RedisAddrs: c.run.addrs, PostgresURL: c.run.pgURL})
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos choose: %v\n", err)
		return exitHarness
	}
	defer closeBackend(be)
	o := c.options(cells, be, redisVersion, args, given, stderr)
	if given != nil || c.quick {
		return c.table(o, stdout, stderr)
	}
	return sim.Host(func(b sim.Backend) int {
		o.Sim = b
		return c.table(o, stdout, stderr)
	})
}

// readFiles checks the --markdown files before anything runs and reads
// the --margins file, if any.
func (c chooseConfig) readFiles() (*margins.Report, error) {
	for _, md := range c.markdown {
		if err := choose.CheckMarkdownFile(md); err != nil {
			return nil, fmt.Errorf("--markdown: %w", err)
		}
	}
	if c.marginsFile == "" {
		return nil, nil
	}
	given, err := choose.ReadMargins(c.marginsFile)
	if err != nil {
		return nil, fmt.Errorf("--margins: %w", err)
	}
	return given, nil
}

// options are the table's options: the cells on be, each cell's
// options as run would give them, the margins given (or nil: searched),
// the rows of the short form when it names no lock.
func (c chooseConfig) options(cells []scenarios.Cell, be backend.Backend, redisVersion string, args []string,
	given *margins.Report, stderr io.Writer) choose.Options {
	o := choose.Options{Cells: cells, Quick: c.quick, Seeds: c.run.repeat, Seed: c.run.seed, Parallel: c.run.parallel,
		Backend: be, TimeScale: c.run.timeScale, Margins: given, NoCost: c.noCost,
		Version: version, Command: chooseLine(args), Stderr: stderr,
		Servers: servers(redisVersion, postgresVersion(cells, be)),
		CellOptions: func(t scenarios.Timing) scenarios.Options {
			return c.run.cellOptions(target{be: be, Timing: t, named: c.run.rerunBackend(be)}, func(msg string) {
				fmt.Fprintln(stderr, msg)
			})
		}}
	if c.quick && len(c.run.locks) == 0 {
		o.Rows = choose.QuickRows
	}
	if given != nil {
		o.MarginsFrom = fmt.Sprintf("from %s (lockchaos margins at TTL %v, %d seeds per probe, on %s)", c.marginsFile,
			given.TTL, given.Seeds, given.Backend)
	}
	return o
}

// cells are the cells the table lays out: run's selection, in-process
// locks left out unless named (they hold no lock across pods).
func (c chooseConfig) cells() ([]scenarios.Cell, error) {
	sel := scenarios.Selection{Files: c.run.files, LockDrivers: c.run.lockDrivers, Scenarios: c.run.scen, Locks: c.run.locks,
		Services: c.run.services}
	cells, err := sel.Cells()
	if errors.Is(err, lockimpl.ErrUnknownLock) {
		return nil, fmt.Errorf("%w; declare a lock of your own with --lock-driver NAME=COMMAND "+
			"or in a --scenarios-file (docs/driver-protocol.md)", err)
	}
	if err != nil {
		return nil, namedFlag(err)
	}
	cells = slices.DeleteFunc(cells, func(cell scenarios.Cell) bool {
		return cell.Lock.Nodes == 0 && !slices.Contains(c.run.locks, cell.Lock.Name)
	})
	if len(cells) == 0 {
		return nil, errors.New("no cell left: the in-process locks run only when named in --lock")
	}
	return cells, nil
}

// table runs the table and writes every output; its exit code is the
// gate's.
func (c chooseConfig) table(o choose.Options, stdout, stderr io.Writer) int {
	ctx, stop, caught := interrupt.Context()
	defer stop()
	defer backend.KillAll()
	t, runs, err := choose.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "lockchaos choose: %v\n", err)
		if ic := interrupt.Code(caught()); ic != 0 {
			return ic
		}
		return exitHarness
	}
	wrote, werr := t.WriteFiles(c.run.out)
	sum := &reports.Summary{Format: reports.FormatVersion, Tool: "lockchaos", Version: version, Backend: o.Backend.Name(),
		Seed: o.Seed, Repeat: t.Seeds, Started: t.Started, Elapsed: t.Elapsed, Command: o.Command, Cells: runs,
		TimeScale: t.TimeScale, Calibration: t.Calibration, Interrupted: t.Interrupted}
	sum.Tally()
	more, _, rerr := reports.WriteAll(c.run.out, sum, reports.HTMLOptions{Verify: verify.Options{}.ForPages})
	wrote = append(wrote, more...)
	if !t.Interrupted {
		for _, md := range c.markdown {
			if err := t.WriteMarkdownInto(md); err != nil {
				werr = errors.Join(werr, err)
				continue
			}
			wrote = append(wrote, md)
		}
	}
	if c.run.asJSON {
		_ = t.WriteJSON(stdout)
	} else {
		t.WriteText(stdout)
	}
	fmt.Fprintf(stderr, "lockchaos choose: wrote %s\n", strings.Join(wrote, ", "))
	if ic := interrupt.Code(caught()); ic != 0 {
		fmt.Fprintf(stderr, "lockchaos choose: interrupted (%s); the table holds what ran\n", interrupt.Name(ic))
		return ic
	}
	if err := errors.Join(werr, rerr); err != nil {
		fmt.Fprintf(stderr, "lockchaos choose: writing: %v\n", err)
		if len(t.Disagreements) == 0 {
			return exitHarness
		}
	}
	return t.ExitCode()
}

// servers are the servers' versions a table names.
func servers(versions ...string) []string {
	return slices.DeleteFunc(versions, func(v string) bool { return v == "" })
}

// chooseLine is the command line as typed after "choose", quoted for a
// shell, a --postgres-url password never in it: it goes into every
// output, README and docs/choose.md among them.
func chooseLine(args []string) string {
	return external.Redact(shellword.Join(append([]string{"lockchaos", "choose"}, args...)))
}
