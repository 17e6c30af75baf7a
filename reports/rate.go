package reports

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// CycleRate is a history's cycle rate in words, "1234 cycles/s", where
// its span supports one, and otherwise why none is shown: "rate not
// shown: the history spans only 4 µs". A rate over a few nanoseconds
// (one cycle in 45 ns is "22222222 cycles/s") is an extrapolation, not a
// measurement. It is shown over a second or more (then it is a count per
// second the history really lived through), or over 100 ms or more with
// at least 10 cycles (one cycle more or less then moves it by at most a
// tenth); below 100 ms a cell is mostly its start and its end.
func CycleRate(cycles int, span int64) string {
	const (
		long     = int64(time.Second)
		short    = int64(100 * time.Millisecond)
		enoughIn = 10 // cycles, over short..long
	)
	switch {
	case span >= long, span >= short && cycles >= enoughIn:
		return fmt.Sprintf("%.0f cycles/s", float64(cycles)/(float64(span)/1e9))
	case span >= short:
		return fmt.Sprintf("rate not shown: %d cycle(s) over %s", cycles, history.Span(time.Duration(span)))
	}
	return "rate not shown: the history spans only " + history.Span(time.Duration(span))
}
