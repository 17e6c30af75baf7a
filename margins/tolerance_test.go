package margins

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

// A silent minority's waits, judged against the design: live while the
// node timeout is inside the lease's validity (and a wait is at least one
// timeout), stuck once it is not.
func TestToleranceJudgesTheWaits(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	cell := func(free float64, stretches ...checker.Stretch) *results.Cell {
		return &results.Cell{LivenessFigures: &checker.Liveness{FreeWhileTrying: free, Stretches: stretches}}
	}
	redlock := spec(t, "redlock")
	waits := []*results.Cell{
		cell(0.9, checker.Stretch{Start: 0, End: ms(70)}, checker.Stretch{Start: ms(100), End: ms(300)}),
		cell(-1), // no minority fault judged in this run
		cell(0.8, checker.Stretch{Start: 0, End: ms(65)}),
	}
	got := tolerance(redlock, 300*time.Millisecond, nodeTimeout(redlock, 300*time.Millisecond, 250*time.Millisecond), waits)
	if got.NodeTimeout != 60*time.Millisecond || !got.Live || got.Windows != 2 || got.Waits != 3 ||
		got.Median != 70*time.Millisecond || got.Longest != 200*time.Millisecond || !got.Agrees {
		t.Errorf("live: %+v", got)
	}
	if got.FreeShare < 0.84 || got.FreeShare > 0.86 {
		t.Errorf("free share %v, want 0.85", got.FreeShare)
	}
	// Waits shorter than one node timeout cannot be: the silent node was
	// not waited out, a finding about the harness.
	short := tolerance(redlock, 300*time.Millisecond, 60*time.Millisecond, []*results.Cell{cell(0.5, checker.Stretch{End: ms(20)})})
	if short.Agrees {
		t.Errorf("waits under the node timeout agreed: %+v", short)
	}
	// A client timeout of 250 ms and a 150 ms lease: no attempt can win.
	token := spec(t, "token")
	token.Nodes = 3
	stuck := tolerance(token, 150*time.Millisecond, nodeTimeout(token, 150*time.Millisecond, 250*time.Millisecond),
		[]*results.Cell{cell(1, checker.Stretch{End: ms(900), Stuck: true})})
	if stuck.Live || stuck.Stuck != 1 || !stuck.Agrees {
		t.Errorf("stuck: %+v", stuck)
	}
	if none := tolerance(redlock, time.Second, 200*time.Millisecond, nil); none.Agrees {
		t.Errorf("nothing judged agreed: %+v", none)
	}
}
