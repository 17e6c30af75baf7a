package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// Calibration is what the machine can do right now: a round trip through a
// proxy to a local node, and how late a short timer fires. Both grow with
// load; the scenarios were shaped for a quiet machine, so every time of
// every cell is stretched by Scale to keep that shape.
type Calibration struct {
	RTTp50, RTTp99   time.Duration
	Latep50, Latep99 time.Duration
	Scale            float64
	// NodeOp is the median time to kill a node and start it again (0 on a
	// backend without node control): it grows with load far more than a
	// round trip (a process start is CPU work), and scenarios that kill
	// nodes stretch by it (Options.NodeOpTime).
	NodeOp time.Duration
}

// String is one line for people.
func (c Calibration) String() string {
	return fmt.Sprintf("proxied round trip p50 %v p99 %v, timer lateness p50 %v p99 %v, node restart %v: time scale %.2f",
		c.RTTp50.Round(time.Microsecond), c.RTTp99.Round(time.Microsecond),
		c.Latep50.Round(time.Microsecond), c.Latep99.Round(time.Microsecond), c.NodeOp.Round(time.Millisecond), c.Scale)
}

// Tolerance is the p99 round trip and timer lateness the scenarios'
// times were shaped for (a quiet machine measures well under 1 ms). The
// tightest time in the catalog is Redlock's per-node timeout, 5% of the
// TTL (15 ms at 300 ms); keeping p99 delays three times below it keeps the
// cells' shape.
const Tolerance = 5 * time.Millisecond

// MaxScale caps the stretch: beyond it a cell takes too long to be a gate.
const MaxScale = 6.0

// probes per measurement
const calibrationProbes = 300

// Calibrate measures the machine with the backend's own kind of node and
// the embedded proxies, and derives the time scale: the larger of the
// p99 round trip and the p99 timer lateness over Tolerance, at least 1,
// at most MaxScale.
func Calibrate(ctx context.Context, be backend.Backend) (Calibration, error) {
	var c Calibration
	dep, err := deployment.New(ctx, deployment.Config{Clients: 1, Backend: be})
	if err != nil {
		return c, fmt.Errorf("calibration: %w", err)
	}
	defer dep.Close()
	rdb, err := lockimpl.NewRedisClient(dep.ClientAddrs(0)[0], lockimpl.ClientConfig{})
	if err != nil {
		return c, err
	}
	defer rdb.Close()
	rtts := make([]time.Duration, 0, calibrationProbes)
	for i := range calibrationProbes + 20 {
		start := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			return c, fmt.Errorf("calibration: ping through a proxy: %w", err)
		}
		if i >= 20 { // the first ones warm the pool
			rtts = append(rtts, time.Since(start))
		}
	}
	late := make([]time.Duration, 0, calibrationProbes)
	for range calibrationProbes {
		start := time.Now()
		time.Sleep(time.Millisecond)
		late = append(late, time.Since(start)-time.Millisecond)
	}
	if backend.OwnsNodes(be) {
		var ops []time.Duration
		for range 3 {
			start := time.Now()
			if err := dep.Node(0).Restart(ctx); err != nil {
				return c, fmt.Errorf("calibration: restart a node: %w", err)
			}
			ops = append(ops, time.Since(start))
		}
		c.NodeOp = percentile(ops, 50)
	}
	c.RTTp50, c.RTTp99 = percentile(rtts, 50), percentile(rtts, 99)
	c.Latep50, c.Latep99 = percentile(late, 50), percentile(late, 99)
	c.Scale = min(MaxScale, max(1, float64(max(c.RTTp99, c.Latep99))/float64(Tolerance)))
	return c, nil
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
