package choose

import (
	"context"
	"testing"
	"time"
)

// TestLongCellsTakeTheSlotsShortOnesNoLongerNeed: with 4 at once and 2
// short cells' worth of work to come, 2 long cells run; each short run
// that ends with fewer than 2 still to come frees a slot for a long one,
// and once every short run has ended the long ones take all 4.
func TestLongCellsTakeTheSlotsShortOnesNoLongerNeed(t *testing.T) {
	s := newSlots(4, 2, 3)
	ctx := context.Background()
	var longDone []func()
	admitted := make(chan func(), 8)
	for range 5 {
		go func() { admitted <- s.admitLong(ctx) }()
	}
	take := func(want int) {
		t.Helper()
		for range want {
			select {
			case d := <-admitted:
				longDone = append(longDone, d)
			case <-time.After(5 * time.Second):
				t.Fatalf("%d long cells running, want %d more", len(longDone), want)
			}
		}
		select {
		case <-admitted:
			t.Fatalf("a long cell started beyond the %d allowed", len(longDone))
		case <-time.After(50 * time.Millisecond):
		}
	}
	take(2)             // 3 short runs to come: 2 slots kept for them
	s.admitShort(ctx)() // 2 to come: still 2 kept
	take(0)
	s.admitShort(ctx)() // 1 to come: 1 kept
	take(1)
	s.admitShort(ctx)() // none: every slot
	take(1)             // 4 running, the fifth waits
	longDone[0]()       // one ends
	take(1)
	for _, d := range longDone[1:] {
		d()
	}
}

// TestAWaitingLongCellGivesUpWhenTheRunEnds: an interrupt must not leave a
// worker waiting for a slot forever.
func TestAWaitingLongCellGivesUpWhenTheRunEnds(t *testing.T) {
	s := newSlots(2, 2, 2) // both slots kept for the short runs to come
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.admitLong(ctx)(); close(done) }()
	select {
	case <-done:
		t.Fatal("a long cell started while the short runs needed every slot")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting long cell did not give up when ctx ended")
	}
}
