package scenarios

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service"
)

// Timing is how a backend's cells stretch (Options.TimeScale and
// NodeOpTime) and, for a report, how that was found.
type Timing struct {
	Scale  float64
	NodeOp time.Duration
	// PostgresNodeOp: Calibration.PostgresNodeOp.
	PostgresNodeOp time.Duration
	// Calibration says how the scale was found ("" when it was given).
	Calibration string
	// Virtual: virtual time, nothing measured, scale 1. Measured:
	// Calibrate measured the scale just now.
	Virtual, Measured bool
}

// MeasureTiming is how cells stretch on be: not at all in virtual time
// (load cannot stretch a cell there), by the given scale, or by what
// Calibrate measures now when given is 0.
//
// services are the run's cells' services (see Calibrate).
func MeasureTiming(ctx context.Context, be backend.Backend, given float64, services ...service.Name) (Timing, error) {
	if _, virtual := backend.Virtual(be); virtual {
		return Timing{Scale: 1, Calibration: "virtual time: no calibration, time scale 1", Virtual: true}, nil
	}
	if given != 0 {
		return Timing{Scale: given}, nil
	}
	cal, err := Calibrate(ctx, be, services...)
	if err != nil {
		return Timing{}, err
	}
	return Timing{Scale: cal.Scale, NodeOp: cal.NodeOp, PostgresNodeOp: cal.PostgresNodeOp, Calibration: cal.String(),
		Measured: true}, nil
}
