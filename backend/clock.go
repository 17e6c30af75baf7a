package backend

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// ShimClock is a node's offset under the clock shim (clockshim's Clock
// for a process, FileClock for a container): a pointer, nil until the
// node was started with Clock.
type ShimClock interface {
	comparable
	Shift(d time.Duration)
	Offset() time.Duration
}

// ShiftClock is ClockNode's ShiftClock for a node whose shim clock mu
// guards, written once for every backend that runs the shim: the node's
// wall clock moves by d on its next clock call (the offset is memory the
// shim reads).
func ShiftClock[C ShimClock](mu *sync.Mutex, clock *C, node string, d time.Duration) error {
	mu.Lock()
	defer mu.Unlock()
	var none C
	if *clock == none {
		return fmt.Errorf("%w: node %s was not started with Clock", ErrNoClockShim, node)
	}
	(*clock).Shift(d)
	return nil
}

// ClockOffset is ClockNode's ClockOffset for a node whose shim clock mu
// guards: 0 for a node started without Clock.
func ClockOffset[C ShimClock](mu *sync.Mutex, clock *C) time.Duration {
	mu.Lock()
	defer mu.Unlock()
	var none C
	if *clock == none {
		return 0
	}
	return (*clock).Offset()
}

// CheckClockMoves makes sure node n really runs under the clock shim: it
// moves n's clock an hour back (back, so no key expires meanwhile), reads
// TIME, and moves it forward again. A node whose clock did not move would
// make every clock fault a silent no-op, so its start fails instead.
func CheckClockMoves(ctx context.Context, n RedisNode) error {
	cn, ok := n.(ClockNode)
	if !ok {
		return fmt.Errorf("%w: node %s cannot move its clock on this backend", ErrNoClockShim, n.Name())
	}
	const probe = -time.Hour
	if err := cn.ShiftClock(probe); err != nil {
		return err
	}
	defer cn.ShiftClock(-probe) //nolint:errcheck // it succeeded a moment ago
	v, err := n.Do(ctx, "TIME")
	if err != nil {
		return err
	}
	parts, _ := v.([]any)
	var sec int64
	if len(parts) == 2 {
		s, _ := parts[0].(string)
		sec, _ = strconv.ParseInt(s, 10, 64)
	}
	if behind := time.Since(time.Unix(sec, 0)); behind < 50*time.Minute {
		return fmt.Errorf("%w: node %s's clock did not move when shifted (TIME %d): the clock shim did not load in it",
			ErrNoClockShim, n.Name(), sec)
	}
	return nil
}
