// Package process is the default backend: every node is a local
// redis-server process on a free loopback port, in a temp dir of its own
// under a run folder a janitor removes however the harness ends. A node is
// killed with SIGKILL, paused with SIGSTOP, and dies with the harness
// (Pdeathsig); its wall clock can move under the clock shim, and with an
// append-only file it can lose power.
package process

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/clockshim"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/etcd"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// ErrNoRedisServer means no redis-server binary could be found.
var ErrNoRedisServer = errors.New("process: redis-server not found")

// ErrRedisServerBroken means a redis-server binary was found but does not
// answer as one: --version failed or hung.
var ErrRedisServerBroken = errors.New("process: redis-server does not work")

// Name is the backend's name in flags, histories and reports.
const Name = "process"

// Backend runs each node as a local redis-server process.
type Backend struct{}

var (
	_ backend.Backend         = Backend{}
	_ backend.SentinelStarter = Backend{}
	_ backend.RedisNode       = (*Node)(nil)
	_ backend.ClockNode       = (*Node)(nil)
	_ backend.PowerLossNode   = (*Node)(nil)
)

// Name implements backend.Backend.
func (Backend) Name() string { return Name }

// QuietRestart is a local redis-server's kill and restart, PING answered,
// on a quiet machine (measured: 20 to 30 ms): what other backends' node
// operations are compared with when a scenario is stretched for them.
const QuietRestart = 30 * time.Millisecond

// NodeOpTime implements backend.Backend: a process restarts in about 30 ms.
func (Backend) NodeOpTime() time.Duration { return QuietRestart }

// Supports implements backend.Backend. Processes can do all a cell needs,
// given a C compiler for the clock shim and Redis 7 for power loss (each
// asked once per process).
func (Backend) Supports(n backend.Needs) error {
	if !n.Service.IsRedis() {
		return supportsService(n)
	}
	if n.Persistence {
		if err := powerLossSupported(); err != nil {
			return backend.Unsupported("%v", err)
		}
	}
	if n.Clock {
		if err := clockshim.Available(); err != nil {
			return backend.Unsupported("%v", err)
		}
	}
	if n.Cluster {
		return clusterSupported()
	}
	return nil
}

// StartNode implements backend.Backend.
func (Backend) StartNode(ctx context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	if cfg.Service == service.Postgres {
		return postgres.Start(ctx, cfg)
	}
	if cfg.Service == service.Etcd {
		return etcd.Start(ctx, cfg)
	}
	n, err := StartNode(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// StartSentinel implements backend.SentinelStarter: a Sentinel is a local
// redis-server process in Sentinel mode, like the nodes.
func (Backend) StartSentinel(ctx context.Context, name, conf string, cfg backend.NodeConfig) (backend.RedisNode, error) {
	n, err := StartNode(ctx, backend.NodeConfig{Name: name, Binary: cfg.Binary, SentinelConf: conf, StartTimeout: cfg.StartTimeout})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// powerLossSupported says why nodes cannot lose power here, or nil:
// cutting an everysec AOF at a second needs its timestamp marks, which
// Redis has from 7.0. Asked once per process (every planned cell asks).
func powerLossSupported() error {
	powerLoss.once.Do(func() { powerLoss.err = aofTimestamps() })
	return powerLoss.err
}

var powerLoss struct {
	once sync.Once
	err  error
}

func aofTimestamps() error {
	bin, err := FindRedisServer()
	if err != nil {
		return err
	}
	// No context here (Supports has none): the time limit bounds it, and
	// the CLI asked the same binary already, under its interrupt.
	v, err := RedisServerVersion(context.Background(), bin)
	if err != nil {
		return err
	}
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 7 {
		return fmt.Errorf("power-loss needs Redis 7 or later (AOF timestamp marks); %s is %s", bin, v)
	}
	return nil
}
