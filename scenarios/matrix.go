package scenarios

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// Select returns the cells of the chosen scenarios and locks (all when a
// list is empty), in catalog order. Unknown names are an error listing the
// valid ones. A lock named explicitly runs even where the scenario has no
// expectation for it only if it is mutex (unsafe everywhere).
func Select(list []Scenario, scenarioNames, lockNames []string) ([]Cell, error) {
	byName := map[string]Scenario{}
	for _, s := range list {
		byName[s.Name] = s
	}
	for _, n := range scenarioNames {
		if _, ok := byName[n]; !ok {
			_, err := find(list, n)
			return nil, err
		}
	}
	for _, n := range lockNames {
		if !validLock(n) {
			return nil, fmt.Errorf("%w %q (valid: %s)", lockimpl.ErrUnknownLock, n, strings.Join(lockimpl.Names(), ", "))
		}
	}
	wantScenario := set(scenarioNames)
	wantLock := set(lockNames)
	var cells []Cell
	for _, s := range list {
		if len(wantScenario) > 0 && !wantScenario[s.Name] {
			continue
		}
		for _, lock := range lockimpl.Names() {
			if len(wantLock) > 0 && !wantLock[lock] {
				continue
			}
			e, ok := s.Expect[lock]
			if !ok && lock == lockimpl.NameMutex && wantLock[lock] && s.Topology != "primary-replica" {
				e, ok = Unsafe, true // a mutex per pod is unsafe everywhere
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
		return nil, fmt.Errorf("%w: shard %d/%d (want i/n with 1 <= i <= n)", ErrInvalid, i, n)
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
	// Parallel is how many cells run at once. Default 3 (tuned for 2
	// cores: cells mostly wait on timers and Redis).
	Parallel int
	// Repeat runs every cell this many times with seeds Seed, Seed+1, ...
	// Default 1.
	Repeat int
	// Progress, if set, is called after each cell (from one goroutine at a
	// time) with the number done and the total.
	Progress func(r *CellResult, done, total int)
}

// RunMatrix runs cells (each Repeat times) with Parallel at once. Results
// come back in cell order, repeats of a cell together.
func RunMatrix(ctx context.Context, cells []Cell, mo MatrixOptions) []*CellResult {
	if mo.Parallel <= 0 {
		mo.Parallel = 3
	}
	if mo.Repeat <= 0 {
		mo.Repeat = 1
	}
	if mo.Seed == 0 {
		mo.Seed = 1
	}
	type job struct{ cell, rep int }
	total := len(cells) * mo.Repeat
	results := make([]*CellResult, total)
	jobs := make(chan job)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range mo.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				opts := mo.Options
				opts.Seed = mo.Seed + int64(j.rep)
				if mo.Repeat > 1 {
					opts.HistoryName = fmt.Sprintf("history-seed%d.jsonl", opts.Seed)
				}
				r := RunCell(ctx, cells[j.cell], opts)
				mu.Lock()
				results[j.cell*mo.Repeat+j.rep] = r
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
	return results
}

// Aggregate summarises the repeats of one cell.
type Aggregate struct {
	Scenario string      `json:"scenario"`
	Lock     string      `json:"lock"`
	Expect   Expectation `json:"expectation"`
	Runs     int         `json:"runs"`
	Failed   int         `json:"failed"`  // runs whose verdict was fail
	Unknown  int         `json:"unknown"` // runs the checker could not decide
	Errors   int         `json:"errors"`  // runs the harness could not complete
	Met      int         `json:"met"`
	// MedianFirstViolation over the failing runs, or -1.
	MedianFirstViolation time.Duration `json:"median_first_violation_ns"`
}

// Aggregates groups results by cell, in order.
func Aggregates(results []*CellResult) []Aggregate {
	var out []Aggregate
	idx := map[string]int{}
	firsts := map[string][]int64{}
	for _, r := range results {
		k := r.Scenario + "/" + r.Lock
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Aggregate{Scenario: r.Scenario, Lock: r.Lock, Expect: r.Expect, MedianFirstViolation: -1})
		}
		a := &out[i]
		a.Runs++
		switch {
		case r.Outcome == HarnessError:
			a.Errors++
		case r.Verdict == "fail":
			a.Failed++
			firsts[k] = append(firsts[k], r.Stats.FirstViolation)
		case r.Verdict == "unknown":
			a.Unknown++
		}
		if r.Outcome == Met {
			a.Met++
		}
	}
	for k, fs := range firsts {
		sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
		out[idx[k]].MedianFirstViolation = time.Duration(fs[len(fs)/2])
	}
	return out
}
