package scenarios

import (
	"fmt"
	"runtime"
)

// MaxRuns bounds the runs of one matrix (cells x repeats): every run's
// result stays in memory until the summary is written (a --repeat 1000
// sweep of the default matrix, 34,000 runs, peaked at 809 MB RSS). A
// larger sweep is several runs, by seed or shard.
const MaxRuns = 100_000

// MaxParallel bounds the cells run at once: each runs its own nodes,
// proxies and pods (a dozen processes and goroutines), and more cells
// than cores only starve each other's timing.
func MaxParallel() int { return max(256, 4*runtime.NumCPU()) }

// CheckRuns checks a matrix's repeats and cells at once, given (0 is no
// default here), each bound a FieldError by its flag; cells (0: not yet
// known) bounds the runs they make in all.
func CheckRuns(repeat, parallel, cells int) error {
	switch {
	case repeat < 1:
		return invalid("repeat", repeat, "want 1 or more")
	case repeat > MaxRuns:
		return invalid("repeat", repeat, fmt.Sprintf("at most %d runs in all (cells x --repeat); "+
			"split a larger sweep by --seed or --shard", MaxRuns))
	case parallel < 1:
		return invalid("parallel", parallel, "want 1 or more")
	case parallel > MaxParallel():
		return invalid("parallel", parallel, fmt.Sprintf("at most %d cells at once "+
			"(default: one per core; more starve each other's timing)", MaxParallel()))
	case cells*repeat > MaxRuns:
		return invalid("repeat", repeat, fmt.Sprintf("%d cell(s) x %d is %d runs, more than the %d a run holds "+
			"(every run's result stays in memory for summary.json); split the sweep by --seed or --shard",
			cells, repeat, cells*repeat, MaxRuns))
	}
	return nil
}
