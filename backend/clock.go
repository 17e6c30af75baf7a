package backend

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

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
