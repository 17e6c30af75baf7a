package lockchaostest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/scenarios"
)

// timing is how a Run's cells stretch: the factor and the node restart
// time scenarios that kill nodes stretch by (0: the backend's figure).
type timing struct {
	scale  float64
	nodeOp time.Duration
}

// calibrations holds one measurement per backend for the test binary: the
// CLI measures once per run, and a test binary is one run; measuring again
// for each of a package's Runs would cost a second or two apiece.
var calibrations struct {
	sync.Mutex
	byBackend map[string]*calibration
}

type calibration struct {
	once sync.Once
	cal  scenarios.Calibration
	err  error
}

// timingFor resolves Options.TimeScale: virtual time needs no stretching;
// a given factor is used as it is; 0 measures the machine as the CLI does
// (scenarios.Calibrate: a proxied round trip and timer lateness, p99 over
// 5 ms), once per backend for the test binary, and logs the measurement.
func timingFor(t testing.TB, o Options) timing {
	t.Helper()
	be := o.Backend
	if _, virtual := backend.Virtual(be); virtual {
		return timing{scale: 1}
	}
	if o.TimeScale != 0 {
		return timing{scale: o.TimeScale}
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
	c.once.Do(func() { c.cal, c.err = scenarios.Calibrate(context.Background(), be) })
	if c.err != nil {
		t.Fatalf("lockchaostest: measuring the machine for the time scale (pass Options{TimeScale: 1} to skip it): %v", c.err)
	}
	t.Logf("lockchaostest: %s (measured once for this test binary; Options{TimeScale: %.2f} pins it)", c.cal, c.cal.Scale)
	return timing{scale: c.cal.Scale, nodeOp: c.cal.NodeOp}
}
