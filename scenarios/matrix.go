package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"

	"github.com/lockchaos/lockchaos/internal/safefile"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// Select returns the cells of the chosen scenarios and locks (all when a
// list is empty), scenarios in list order and locks in registry order.
// Unknown names are an error listing the valid ones. A lock named
// explicitly runs where a scenario has no expectation for it when it is
// in-process (no exclusion across pods: unsafe everywhere), or when no
// scenario has one for it at all (a lock new to the catalog, from
// --lock-driver: reported, not gated, as "either").
func Select(list []Scenario, scenarioNames, lockNames []string) ([]Cell, error) {
	byName := map[string]bool{}
	for _, s := range list {
		byName[s.Name] = true
	}
	for _, n := range scenarioNames {
		if !byName[n] {
			_, err := find(list, n)
			return nil, err
		}
	}
	for _, n := range lockNames {
		if _, err := lockimpl.Lookup(n); err != nil {
			return nil, err
		}
	}
	wantScenario := set(scenarioNames)
	wantLock := set(lockNames)
	known := map[string]bool{} // locks some scenario has an expectation for
	for _, s := range list {
		for l := range s.Expect {
			known[l] = true
		}
	}
	var cells []Cell
	for _, s := range list {
		if len(wantScenario) > 0 && !wantScenario[s.Name] {
			continue
		}
		for _, lock := range lockimpl.Specs() {
			if len(wantLock) > 0 && !wantLock[lock.Name] {
				continue
			}
			e, ok := s.Expect[lock.Name]
			switch {
			case ok || !wantLock[lock.Name]:
			case lock.Nodes == 0:
				e, ok = andLive(Unsafe), true // an in-process lock is unsafe everywhere
			case !known[lock.Name]:
				e, ok = Expect{Safety: Either, Liveness: Either}, true // not gated, in either group
			}
			if !ok {
				continue
			}
			cells = append(cells, Cell{Scenario: s, Lock: lock, Expect: e})
		}
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("%w: no cell matches scenarios %v and locks %v", ErrInvalid, scenarioNames, lockNames)
	}
	return cells, nil
}

func set(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Shard keeps the cells of shard i (1-based) of n: a CI matrix or an
// indexed Kubernetes Job splits the cells across machines with it.
func Shard(cells []Cell, i, n int) ([]Cell, error) {
	if n < 1 || i < 1 || i > n {
		return nil, fmt.Errorf("%w %d/%d (want i/n with 1 <= i <= n)", ErrInvalidShard, i, n)
	}
	var out []Cell
	for k, c := range cells {
		if k%n == i-1 {
			out = append(out, c)
		}
	}
	return out, nil
}

// MatrixOptions say how to run many cells.
type MatrixOptions struct {
	Options
	// Parallel is how many cells run at once. Default DefaultParallel.
	Parallel int
	// Repeat runs every cell this many times with seeds Seed, Seed+1, ...
	// Default 1.
	Repeat int
	// SameSeed gives every repeat the seed Seed: the same fault schedule
	// each time, so the repeats measure how often a seed reproduces its
	// verdict (on the simulation, goroutines runnable at one virtual
	// instant run in no fixed order; on real Redis, timing varies).
	SameSeed bool
	// Progress, if set, is called after each cell (from one goroutine at a
	// time) with the number done and the total.
	Progress func(r *results.Cell, done, total int)
	// Started, if set, is called as each cell run starts (from one
	// goroutine at a time), with its name and seed.
	Started func(name string, seed int64)
	// DropMetHistories deletes, in a sweep (Repeat > 1), the history of
	// every run that met its expectation, except each cell's first, as
	// soon as it is judged (Cell.HistoryDropped says so). A night's
	// simulated sweep would otherwise write hundreds of gigabytes (7 MB
	// per run of the matrix) of histories nobody reads. Only for a
	// backend whose runs come back from their seed (the simulation); a
	// real run's history cannot be had again.
	DropMetHistories bool
	// Admit, if set, is called before each run starts, from the worker
	// that will run it, and may wait (it must return once ctx ends): the
	// run starts when it returns, and done is called when the run ends.
	// Two matrices that share a machine use it to share their slots.
	Admit func(ctx context.Context) (done func())
}

// RunMatrix runs cells (each Repeat times) with Parallel at once. Results
// come back in cell order, repeats of a cell together.
func RunMatrix(ctx context.Context, cells []Cell, mo MatrixOptions) []*results.Cell {
	mo = mo.withDefaults()
	repeats := mo.Repeat
	if mo.SameSeed {
		repeats = 1
	}
	// Seeds that would wrap make every run a harness error saying so,
	// rather than run seeds nobody asked for.
	seedErr := SeedsFor(mo.Seed, repeats)
	type job struct{ cell, rep int }
	total := len(cells) * mo.Repeat
	out := make([]*results.Cell, total)
	jobs := make(chan job)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range mo.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				opts := mo.runOptions(j.rep)
				release := func() {}
				if mo.Admit != nil {
					release = mo.Admit(ctx)
				}
				if mo.Started != nil {
					mu.Lock()
					mo.Started(cells[j.cell].Name(), opts.Seed)
					mu.Unlock()
				}
				p := NewPlan(cells[j.cell], opts)
				if seedErr != nil {
					p.Err = seedErr
				}
				r := Execute(ctx, p, opts)
				release()
				if mo.DropMetHistories && mo.Repeat > 1 && j.rep > 0 {
					dropMetHistory(r)
				}
				mu.Lock()
				out[j.cell*mo.Repeat+j.rep] = r
				done++
				if mo.Progress != nil {
					mo.Progress(r, done, total)
				}
				mu.Unlock()
			}
		}()
	}
	// Repeats go round by round, so a short --repeat run covers every
	// cell early.
	for rep := range mo.Repeat {
		for c := range cells {
			jobs <- job{c, rep}
		}
	}
	close(jobs)
	wg.Wait()
	return out
}

// withDefaults fills the zero fields: one cell per core, one run, seed 1.
func (mo MatrixOptions) withDefaults() MatrixOptions {
	if mo.Parallel <= 0 {
		mo.Parallel = DefaultParallel()
	}
	if mo.Repeat <= 0 {
		mo.Repeat = 1
	}
	if mo.Seed == 0 {
		mo.Seed = 1
	}
	return mo
}

// runOptions are the options of a cell's rep-th run: the next seed (or
// the same one) and, when a cell runs more than once, a history file per
// run.
func (mo MatrixOptions) runOptions(rep int) Options {
	opts := mo.Options
	opts.Seed = mo.Seed + int64(rep)
	if mo.Repeat > 1 {
		opts.HistoryName = fmt.Sprintf("history-seed%d.jsonl", opts.Seed)
	}
	if mo.SameSeed {
		opts.Seed = mo.Seed
		opts.HistoryName = fmt.Sprintf("history-run%d.jsonl", rep+1)
	}
	return opts
}

// dropMetHistory deletes the history file of a run that met its
// expectation. A file that cannot be removed is kept and still named.
func dropMetHistory(r *results.Cell) {
	if r.Outcome != results.Met || r.History == "" {
		return
	}
	if err := safefile.Remove(r.History); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	r.History, r.HistoryDropped = "", true
}

// DefaultParallel is one cell per core. Cells mostly wait on timers and
// Redis, but each runs a dozen redis-server, proxy and client goroutines:
// three cells on two cores starved Redlock's per-node timeouts even on an
// idle machine (8 of 20 node-restart runs detected, 20 of 20 with one
// cell at a time); one per core holds under two CPU burners per core.
func DefaultParallel() int { return max(1, runtime.NumCPU()) }
