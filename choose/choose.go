package choose

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/progress"
	"github.com/lockchaos/lockchaos/margins"
	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/service"
)

// Defaults of a table.
const (
	DefaultSeeds       = 3 // runs of every cell in the full table
	DefaultMarginSeeds = 6 // seeds per probe of the margins search
	DefaultCostSamples = 200
	QuickCostSamples   = 100
)

// QuickRows are the short form's rows when the user names no lock: one
// of each design on each service (a lock that expires, one that renews,
// a quorum, a fence; a database row and an advisory lock with their
// timeouts; etcd's mutex and its fenced form), and the token lock on
// Redis Cluster. It runs in about 3 minutes on 2 cores.
var QuickRows = []string{"token", "token @ Redis Cluster", "token-watchdog", "redlock", "fenced", "pg-row-tuned",
	"pg-advisory-tuned", "etcd-mutex", "etcd-fenced"}

// Options are what one table is made of and how.
type Options struct {
	// Cells are the matrix cells the table lays out (scenarios.Select's).
	Cells []scenarios.Cell
	// Quick keeps one scenario per row and family and skips the margins
	// search (a given Margins still fills the table).
	Quick bool
	// Rows, when set, keeps only the built-in rows of these names
	// (QuickRows is the short form's); a user's rows always stay.
	Rows []string
	// Seeds runs per cell (seeds Seed, Seed+1, ...), Parallel cells at
	// once.
	Seeds    int
	Seed     int64
	Parallel int
	// Backend runs every cell and cost; TimeScale 0 measures the machine.
	Backend   backend.Backend
	TimeScale float64
	// CellOptions are every cell's options at timing t (Seed, Backend and
	// the time scale set from it; rerun lines included).
	CellOptions func(t scenarios.Timing) scenarios.Options
	// Sim searches the margins (the simulation), or nil: no search.
	// Margins, when given, are used instead (a margins.json).
	Sim         backend.Backend
	Margins     *margins.Report
	MarginsFrom string // where Margins came from, in words
	MarginSeeds int
	// CostSamples uncontended cycles and floors per row; NoCost skips
	// the cost (its contended cells too).
	CostSamples int
	NoCost      bool
	// Version, Command and Servers go into the table as they are.
	Version, Command string
	Servers          []string
	// Stderr shows progress: a bar with the time left on a terminal,
	// lines in CI.
	Stderr io.Writer
}

// Run makes the table: calibration, the matrix (every cell Seeds times),
// the contended cells, each row's cost, the margins; then the figures,
// the sentences and the gate. The runs come back too, for their reports.
// An interrupt (ctx) ends it with what ran, Interrupted set.
func Run(ctx context.Context, o Options) (*Table, []*results.Cell, error) {
	o = o.withDefaults()
	start := time.Now()
	t := &Table{Format: FormatVersion, Tool: "lockchaos", Version: o.Version, Started: start, Command: o.Command,
		Backend: o.Backend.Name(), Servers: o.Servers, Seed: o.Seed, Seeds: o.Seeds, Quick: o.Quick,
		Phases: map[string]time.Duration{}}
	at := time.Now()
	timing, err := scenarios.MeasureTiming(ctx, o.Backend, o.TimeScale, services(o.Cells)...)
	if err != nil {
		return nil, nil, err
	}
	t.TimeScale, t.Calibration = timing.Scale, timing.Calibration
	t.Phases["calibration"] = time.Since(at)
	if timing.Measured {
		fmt.Fprintf(o.Stderr, "lockchaos choose: machine now: %s\n", timing.Calibration)
	}
	cellOpts := o.CellOptions(timing)
	p, err := o.plan(t, cellOpts)
	if err != nil {
		return nil, nil, err
	}
	runs := o.runAll(ctx, t, p, cellOpts)
	if !o.NoCost && ctx.Err() == nil {
		at = time.Now()
		// The benches' files (a driver's stderr) go beside the runs',
		// never over them.
		costOpts := cellOpts
		if costOpts.OutDir != "" {
			costOpts.OutDir = filepath.Join(costOpts.OutDir, "cost")
		}
		for i, row := range p.Rows {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(o.Stderr, "lockchaos choose: cost %d/%d: %s\n", i+1, len(p.Rows), row.Name)
			row.Cost = measureCost(ctx, p.Cost[row.Name], costOpts, o.CostSamples).withContended(row.Cost)
		}
		t.Phases["cost"] = time.Since(at)
	}
	t.MarginsFrom = o.MarginsFrom
	rep := o.Margins
	if rep == nil && ctx.Err() == nil {
		rep = o.search(ctx, p, t)
	}
	if rep != nil {
		t.MarginFamilies = p.addMargins(rep)
	}
	p.finish()
	t.Rows, t.Families = p.Rows, Columns(p.Rows)
	t.Interrupted = ctx.Err() != nil
	t.Elapsed = time.Since(start)
	return t, runs, nil
}

// plan lays the cells the backend can run out as the table's rows; a
// cell it cannot run (a Redis lock of a driver on an etcd scenario, etcd
// on a backend without it) has no place in the table: left out, and
// said in t.
func (o Options) plan(t *Table, cellOpts scenarios.Options) (*Plan, error) {
	var cells []scenarios.Cell
	for _, c := range o.Cells {
		if c.Expect.Safety == results.NotApplicable {
			continue // the catalog gives the lock no place here: not a skip
		}
		if skip := scenarios.NewPlan(c, cellOpts).Skip; skip != "" {
			t.Skipped = append(t.Skipped, c.Name()+": "+skip)
			continue
		}
		cells = append(cells, c)
	}
	p := NewPlan(cells, o.Quick)
	if len(o.Rows) > 0 {
		p.keep(o.Rows)
	}
	switch {
	case len(p.Cells) == 0 && len(o.Rows) > 0:
		return nil, fmt.Errorf("%w: no cell of the short form's rows (%s) is selected: name locks with --lock",
			scenarios.ErrInvalid, strings.Join(o.Rows, ", "))
	case len(p.Cells) == 0:
		return nil, fmt.Errorf("%w: no cell the backend can run (%d skipped: %v)", scenarios.ErrInvalid,
			len(t.Skipped), t.Skipped)
	}
	return p, nil
}

// runAll runs the matrix, then each row's contended cell, under one
// progress bar, and folds every run into the table. It returns the runs.
func (o Options) runAll(ctx context.Context, t *Table, p *Plan, cellOpts scenarios.Options) []*results.Cell {
	var contended []scenarios.Cell
	if !o.NoCost {
		for _, row := range p.Rows {
			contended = append(contended, p.contended(row))
		}
	}
	total := len(p.Cells)*o.Seeds + len(contended)
	fmt.Fprintf(o.Stderr, "lockchaos choose: %d row(s), %d cell(s) x %d seed(s) + %d contended, seed %d, backend %s, "+
		"parallel %d, time scale %.2f\n", len(p.Rows), len(p.Cells), o.Seeds, len(contended), o.Seed, o.Backend.Name(),
		o.Parallel, cellOpts.TimeScale)
	bar := progress.New(o.Stderr, total)
	var mu sync.Mutex // two matrices run at once
	done := 0
	mo := scenarios.MatrixOptions{Options: cellOpts, Parallel: o.Parallel, Repeat: o.Seeds,
		Started: func(name string, seed int64) {
			mu.Lock()
			defer mu.Unlock()
			bar.Started(name, seed)
		},
		Progress: func(r *results.Cell, _, _ int) {
			mu.Lock()
			defer mu.Unlock()
			done++
			if r.NotStarted() {
				bar.Forget(r)
				return
			}
			bar.Cell(r, done, total)
		}}
	at := time.Now()
	runs := runSplit(ctx, p.Cells, mo, o.Parallel)
	t.Phases["matrix"] = time.Since(at)
	var costRuns []*results.Cell
	if len(contended) > 0 && ctx.Err() == nil {
		at = time.Now()
		// No faults, so nothing here hangs on timing: the cost is the
		// machine's real time, not stretched for its load, and one cell
		// at a time, so no row's throughput depends on its neighbours.
		mo.TimeScale, mo.Repeat, mo.Parallel = 1, 1, 1
		costRuns = scenarios.RunMatrix(ctx, contended, mo)
		t.Phases["contended"] = time.Since(at)
	}
	bar.Done()
	for _, r := range runs {
		if d := p.Add(r); d != nil {
			t.Disagreements = append(t.Disagreements, *d)
		}
		t.count(r)
	}
	for i, r := range costRuns {
		t.count(r)
		p.Rows[i].Cost = contendedCost(r)
		// A contended run is a no-fault run too: two holders there show
		// in the row's no-fault cell, and fail the gate like any other.
		if d := p.Add(r); d != nil {
			t.Disagreements = append(t.Disagreements, *d)
		}
	}
	return append(runs, costRuns...)
}

// search runs the margins search when it can, saying in the table why
// not otherwise.
func (o Options) search(ctx context.Context, p *Plan, t *Table) *margins.Report {
	locks := marginLocks(p.Rows, p.Specs)
	switch {
	case o.Quick:
		t.MarginsFrom = "not searched in --quick (give --margins FILE, a margins.json)"
		return nil
	case o.Sim == nil:
		t.MarginsFrom = "not searched: no simulation to search in"
		return nil
	case len(locks) == 0:
		t.MarginsFrom = "not searched: no row's lock is one the simulation searches (the built-in Redis locks); " +
			"lockchaos margins on real servers, then --margins FILE"
		return nil
	}
	at := time.Now()
	fmt.Fprintf(o.Stderr, "lockchaos choose: margins of %d lock(s) in the simulation (%d seeds per probe)\n", len(locks),
		o.MarginSeeds)
	dir := ""
	if out := o.CellOptions(scenarios.Timing{Scale: 1}).OutDir; out != "" {
		dir = filepath.Join(out, "margins")
	}
	rep, err := searchMargins(ctx, o.Sim, locks, o.MarginSeeds, o.Parallel, o.Seed, dir)
	t.Phases["margins"] = time.Since(at)
	if err != nil {
		t.MarginsFrom = "the search failed: " + err.Error()
		return nil
	}
	t.MarginsFrom = fmt.Sprintf("searched here in the simulation at TTL %v, %d seeds per probe, step 0.1 TTL "+
		"(lockchaos margins for every family and lock)", rep.TTL, rep.Seeds)
	return rep
}

// count adds a run to the table's totals.
func (t *Table) count(r *results.Cell) {
	if r.NotStarted() {
		return
	}
	t.Runs++
	if undecided(r) {
		t.Undecided++
	}
}

// quickTTL splits the matrix: cells whose TTL is shorter are timed in
// hundreds of milliseconds, and starve each other on a small machine.
const quickTTL = time.Second

// runSplit runs cells as two matrices at once: those with a TTL under
// quickTTL (the Redis and PostgreSQL rows: 300 ms), at most one per core
// at a time, as lockchaos run does, since more starve each other's timing
// (at 4 at once on 2 cores, Redlock's liveness under a cut-off node failed
// in 3 of 4 tables); the others (Redis Cluster, etcd, a standby's
// promotion: seconds, mostly waiting on elections and leases) fill the
// rest of parallel, and all of it once the short cells are done (before,
// the long ones kept to the rest while the short ones' slots stood idle:
// they ran on alone for minutes). It returns the runs in cells' order,
// repeats together, as RunMatrix does.
func runSplit(ctx context.Context, cells []scenarios.Cell, mo scenarios.MatrixOptions, parallel int) []*results.Cell {
	var short, long []int
	for i, c := range cells {
		if c.Scenario.WithDefaults().TTL < quickTTL {
			short = append(short, i)
		} else {
			long = append(long, i)
		}
	}
	pick := func(idx []int) []scenarios.Cell {
		out := make([]scenarios.Cell, len(idx))
		for i, j := range idx {
			out[i] = cells[j]
		}
		return out
	}
	fast := min(runtime.NumCPU(), parallel)
	if len(long) == 0 || len(short) == 0 || parallel <= fast {
		return scenarios.RunMatrix(ctx, cells, mo)
	}
	sl := newSlots(parallel, fast, len(short)*max(mo.Repeat, 1))
	slow := mo
	mo.Parallel, slow.Parallel = fast, parallel
	mo.Admit, slow.Admit = sl.admitShort, sl.admitLong
	var shortRuns, longRuns []*results.Cell
	var wg sync.WaitGroup
	wg.Go(func() { shortRuns = scenarios.RunMatrix(ctx, pick(short), mo) })
	wg.Go(func() { longRuns = scenarios.RunMatrix(ctx, pick(long), slow) })
	wg.Wait()
	out := make([]*results.Cell, len(cells)*mo.Repeat)
	for k, runs := range map[*[]int][]*results.Cell{&short: shortRuns, &long: longRuns} {
		for i, j := range *k {
			copy(out[j*mo.Repeat:(j+1)*mo.Repeat], runs[i*mo.Repeat:(i+1)*mo.Repeat])
		}
	}
	return out
}

// slots shares parallel cells at once between runSplit's two matrices:
// the short cells run at most fast at once (their own matrix's workers),
// and a long cell starts only while the long ones going leave room for
// the short runs still to come, so the short ones never wait and the
// long ones take every slot the short ones no longer need.
type slots struct {
	mu             sync.Mutex
	cond           *sync.Cond
	parallel, fast int
	shortLeft      int // short runs not yet ended
	long           int // long runs going
}

func newSlots(parallel, fast, shortRuns int) *slots {
	s := &slots{parallel: parallel, fast: fast, shortLeft: shortRuns}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// admitShort admits a short run at once; its end may free a slot.
func (s *slots) admitShort(context.Context) func() {
	return func() {
		s.mu.Lock()
		s.shortLeft--
		s.mu.Unlock()
		s.cond.Broadcast()
	}
}

// admitLong waits for a slot the short runs do not need (or for ctx's
// end: the run then sees its ctx ended).
func (s *slots) admitLong(ctx context.Context) func() {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cond.Broadcast()
	})
	defer stop()
	s.mu.Lock()
	for s.long >= s.parallel-min(s.fast, s.shortLeft) && ctx.Err() == nil {
		s.cond.Wait()
	}
	s.long++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.long--
		s.mu.Unlock()
		s.cond.Broadcast()
	}
}

// contendedCost is a contended run's figure, or why there is none.
func contendedCost(r *results.Cell) *Cost {
	c := &Cost{ContendedScenario: r.Scenario, Ceiling: contendedCeiling}
	switch {
	case r.Outcome == results.HarnessError || r.Outcome == results.Skipped:
		c.Error = "contended: " + r.Error
	case r.Stats.CyclesPerSecond == 0:
		c.Error = "contended: no cycle completed: " + r.Why
	default:
		c.Contended = r.Stats.CyclesPerSecond
		c.Share = c.Contended / c.Ceiling
	}
	return c
}

func (o Options) withDefaults() Options {
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
		if o.Quick {
			o.Seeds = 1
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.NumCPU()
	}
	if o.MarginSeeds <= 0 {
		o.MarginSeeds = DefaultMarginSeeds
	}
	if o.CostSamples <= 0 {
		o.CostSamples = DefaultCostSamples
		if o.Quick {
			o.CostSamples = QuickCostSamples
		}
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return o
}

// services are the cells' lock services.
func services(cells []scenarios.Cell) []service.Name {
	var out []service.Name
	for _, c := range cells {
		if s := c.Lock.Service.Or(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ExitCode is the table's gate: 1 when a run disagreed with its lock's
// expectation, 3 when no run decided anything (the harness could not
// run), 4 when some cell of the table decided nothing in any run (a hole
// the table cannot fill: Holes names them), else 0.
func (t *Table) ExitCode() int {
	switch {
	case len(t.Disagreements) > 0:
		return reports.ExitViolation
	case t.Runs == t.Undecided:
		return reports.ExitHarness
	case len(t.Holes()) > 0:
		return reports.ExitInconclusive
	}
	return reports.ExitOK
}

// Holes are the cells ("row [family]") none of whose runs decided its
// expectation.
func (t *Table) Holes() []string {
	var out []string
	for _, r := range t.Rows {
		for _, c := range r.Safety {
			if c.Decided == 0 {
				out = append(out, fmt.Sprintf("%s [%s]", r.Name, c.Family))
			}
		}
	}
	return out
}
