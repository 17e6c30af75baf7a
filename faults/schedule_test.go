package faults_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/faults"
)

// cancelAt is a fault that cancels the run as its nth injection ends (a
// SIGINT in the middle of a fault), and counts injections made after that.
type cancelAt struct {
	n, injected, late int
	cancel            context.CancelFunc
}

func (*cancelAt) Name() string { return "cancel-at" }

func (f *cancelAt) Inject(ctx context.Context, _ *faults.Env) error {
	if ctx.Err() != nil {
		f.late++
	}
	f.injected++
	if f.injected == f.n {
		f.cancel()
	}
	return nil
}

// TestScheduleStopsAtOnceWhenCancelled: once the run's context is
// cancelled, the schedule fires no further fault, however short its gap.
// (Before, a gap's sleep and the cancellation were both ready and Go
// picked one at random, so a 1 ns gap fired on; 200 runs make a lucky
// pass of the old loop a 2^-200 chance.)
func TestScheduleStopsAtOnceWhenCancelled(t *testing.T) {
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		f := &cancelAt{n: 3, cancel: cancel}
		s := faults.Schedule{Faults: []faults.Fault{f}, GapMin: 1, GapMax: 1}
		if err := s.Run(ctx, &faults.Env{Rand: rand.New(rand.NewPCG(uint64(i), 1))}); err != nil {
			t.Fatal(err)
		}
		cancel()
		if f.late > 0 || f.injected != f.n {
			t.Fatalf("run %d: %d injections, %d after the cancel; want %d, none after", i, f.injected, f.late, f.n)
		}
	}
}

// TestScheduleFiresAtMostMax: a schedule with a bound fires that many
// faults, then waits for the end of its run. In virtual time: a second of
// 1 ms gaps would fire a thousand.
func TestScheduleFiresAtMostMax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := &cancelAt{n: -1, cancel: cancel}
		done := make(chan error)
		s := faults.Schedule{Faults: []faults.Fault{f}, GapMin: time.Millisecond, GapMax: time.Millisecond, Max: 50}
		go func() { done <- s.Run(ctx, &faults.Env{Rand: rand.New(rand.NewPCG(1, 1))}) }()
		time.Sleep(time.Second)
		synctest.Wait()
		if f.injected != 50 {
			t.Errorf("%d injections in a second of 1 ms gaps, want Max (50)", f.injected)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
