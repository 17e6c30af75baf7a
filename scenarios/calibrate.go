package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
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
	// PostgresNodeOp is the same for a PostgreSQL node, measured when the
	// run has PostgreSQL cells and the backend can restart its nodes: a
	// PostgreSQL restart grows with load far more than a Redis one (under
	// 2 burners per core 210-260 ms against Redis's 27 ms), and the cells
	// that kill a PostgreSQL server stretch by it.
	PostgresNodeOp time.Duration
}

// String is one line for people.
func (c Calibration) String() string {
	pg := ""
	if c.PostgresNodeOp > 0 {
		pg = fmt.Sprintf(", PostgreSQL restart %v", c.PostgresNodeOp.Round(time.Millisecond))
	}
	return fmt.Sprintf("proxied round trip p50 %v p99 %v, timer lateness p50 %v p99 %v, node restart %v%s: time scale %.2f",
		c.RTTp50.Round(time.Microsecond), c.RTTp99.Round(time.Microsecond),
		c.Latep50.Round(time.Microsecond), c.Latep99.Round(time.Microsecond), c.NodeOp.Round(time.Millisecond), pg, c.Scale)
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
//
// services are the services the run's cells use: a PostgreSQL node's
// restart is measured too when one of them is PostgreSQL.
func Calibrate(ctx context.Context, be backend.Backend, services ...service.Name) (Calibration, error) {
	var c Calibration
	// The backend's own kind of server: Redis, or PostgreSQL on a backend
	// that has only that (an external one given only --postgres-url).
	node := backend.NodeConfig{}
	if be.Supports(backend.Needs{}) != nil && be.Supports(backend.Needs{Service: service.Postgres}) == nil {
		node.Service = service.Postgres
	}
	dep, err := deployment.New(ctx, deployment.Config{Clients: 1, Backend: be, Node: node})
	if err != nil {
		return c, fmt.Errorf("calibration: %w", err)
	}
	defer dep.Close()
	ping, closePing, err := pinger(ctx, be, node.Service, dep.ClientAddrs(0)[0])
	if err != nil {
		return c, fmt.Errorf("calibration: %w", err)
	}
	defer closePing()
	rtts := make([]time.Duration, 0, calibrationProbes)
	for i := range calibrationProbes + 20 {
		start := time.Now()
		if err := ping(ctx); err != nil {
			return c, fmt.Errorf("calibration: a round trip through a proxy: %w", err)
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
		if c.NodeOp, err = restartTime(ctx, dep.Node(0)); err != nil {
			return c, err
		}
	}
	if node.Service != service.Postgres && slices.Contains(services, service.Postgres) &&
		be.Supports(backend.Needs{Service: service.Postgres, NodeControl: true}) == nil {
		// Not fatal: unmeasured, those cells stretch by the Redis
		// restart, as they did before it was measured, and a PostgreSQL
		// that cannot start fails their cells with its own words.
		c.PostgresNodeOp, _ = postgresRestartTime(ctx, be)
	}
	c.RTTp50, c.RTTp99 = percentile(rtts, 50), percentile(rtts, 99)
	c.Latep50, c.Latep99 = percentile(late, 50), percentile(late, 99)
	c.Scale = min(MaxScale, max(1, float64(max(c.RTTp99, c.Latep99))/float64(Tolerance)))
	return c, nil
}

// restartTime is the median of three kills and restarts of n.
func restartTime(ctx context.Context, n backend.RedisNode) (time.Duration, error) {
	var ops []time.Duration
	for range 3 {
		start := time.Now()
		if err := n.Restart(ctx); err != nil {
			return 0, fmt.Errorf("calibration: restart a node: %w", err)
		}
		ops = append(ops, time.Since(start))
	}
	return percentile(ops, 50), nil
}

// postgresRestartTime starts a PostgreSQL node on be and times its
// restarts.
func postgresRestartTime(ctx context.Context, be backend.Backend) (time.Duration, error) {
	dep, err := deployment.New(ctx, deployment.Config{Clients: 1, Backend: be, Node: backend.NodeConfig{Service: service.Postgres}})
	if err != nil {
		return 0, fmt.Errorf("calibration: a PostgreSQL node: %w", err)
	}
	defer dep.Close()
	return restartTime(ctx, dep.Node(0))
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// pinger is the service's bare round trip through the proxy at addr:
// Redis PING, PostgreSQL SELECT 1 (on the session a lock of the backend's
// would open).
func pinger(ctx context.Context, be backend.Backend, svc service.Name, addr string) (func(context.Context) error, func(), error) {
	if svc == service.Postgres {
		var target lockimpl.PGTarget
		if t, ok := be.(pgTargeter); ok {
			var err error
			if target, err = t.PostgresTarget(""); err != nil {
				return nil, nil, err
			}
		}
		conn, err := lockimpl.ConnectPostgres(ctx, addr, target)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) error { _, err := conn.Exec(ctx, "SELECT 1"); return err },
			func() { _ = conn.Close(context.Background()) }, nil
	}
	rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{})
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, func() { _ = rdb.Close() }, nil
}
