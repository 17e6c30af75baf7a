package lockchaostest

import (
	"context"
	"sync"
	"testing"

	"github.com/lockchaos/lockchaos/scenarios"
)

// calibrations holds one measurement per backend for the test binary: the
// CLI measures once per run, and a test binary is one run; measuring again
// for each of a package's Runs would cost a second or two apiece.
var calibrations struct {
	sync.Mutex
	byBackend map[string]*calibration
}

type calibration struct {
	once sync.Once
	on   scenarios.Timing
	err  error
}

// timingFor resolves Options.TimeScale as the CLI does
// (scenarios.MeasureTiming: virtual time needs no stretching, a given
// factor is used as it is, 0 measures the machine), measuring once per
// backend for the test binary, and logs a measurement.
func timingFor(t testing.TB, o Options) scenarios.Timing {
	t.Helper()
	be := o.Backend
	if o.TimeScale != 0 { // nothing to measure
		on, err := scenarios.MeasureTiming(context.Background(), be, o.TimeScale)
		if err != nil {
			t.Fatalf("lockchaostest: %v", err)
		}
		return on
	}
	calibrations.Lock()
	if calibrations.byBackend == nil {
		calibrations.byBackend = map[string]*calibration{}
	}
	c := calibrations.byBackend[be.Name()]
	if c == nil {
		c = &calibration{}
		calibrations.byBackend[be.Name()] = c
	}
	calibrations.Unlock()
	c.once.Do(func() { c.on, c.err = scenarios.MeasureTiming(context.Background(), be, 0) })
	if c.err != nil {
		t.Fatalf("lockchaostest: measuring the machine for the time scale (pass Options{TimeScale: 1} to skip it): %v", c.err)
	}
	if c.on.Measured {
		t.Logf("lockchaostest: %s (measured once for this test binary; Options{TimeScale: %.2f} pins it)", c.on.Calibration,
			c.on.Scale)
	}
	return c.on
}
