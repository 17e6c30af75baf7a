package margins

import (
	"context"
	"fmt"

	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// seedRound is how many of a batch's seeds run before the batch looks at
// its context again. scenarios.RunMatrix hands out every run of a batch
// even after an interrupt, each then ending at once: a probe of 100,000
// seeds took 4.5 s to notice SIGTERM. A batch of the default 20 seeds is
// one round, as before. A variable for the tests.
var seedRound = 1024

// runSeeds runs cell on mo.Repeat seeds from mo.Seed, in rounds of at
// most seedRound, and stops between rounds once ctx is done. A round
// after the first keeps its own first history where DropMetHistories
// drops the others (one in seedRound).
func runSeeds(ctx context.Context, cell scenarios.Cell, mo scenarios.MatrixOptions) []*results.Cell {
	seeds, first := max(mo.Repeat, 1), mo.Seed
	if first == 0 {
		first = 1 // RunMatrix's default seed
	}
	var out []*results.Cell
	for done := 0; done < seeds && (done == 0 || ctx.Err() == nil); {
		round := mo
		round.Repeat = min(seedRound, seeds-done)
		round.Seed = first + int64(done)
		if round.Repeat == 1 && seeds > 1 {
			// RunMatrix names a history by its seed only in a sweep: the
			// last round's one run keeps the sweep's naming.
			round.HistoryName = fmt.Sprintf("history-seed%d.jsonl", round.Seed)
		}
		out = append(out, scenarios.RunMatrix(ctx, []scenarios.Cell{cell}, round)...)
		done += round.Repeat
	}
	return out
}
