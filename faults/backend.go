package faults

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RedisNode is one Redis server the harness controls, whatever runs it (a
// local process or a container). Its address never changes, so the proxies
// in front of it survive kills and restarts.
type RedisNode interface {
	Name() string
	Addr() string
	State() NodeState
	// Kill stops the server at once (SIGKILL); Start brings a killed one
	// back (empty unless persistence is on); Restart does both.
	Kill() error
	Start(ctx context.Context) error
	Restart(ctx context.Context) error
	// Pause freezes the server (SIGSTOP, or the cgroup freezer); Resume
	// lets it go on.
	Pause() error
	Resume() error
	// Close kills the server and removes everything it left.
	Close() error

	Do(ctx context.Context, args ...any) (any, error)
	ReplicaOf(ctx context.Context, addr string) error
	Promote(ctx context.Context) error
	ReplicationInfo(ctx context.Context) (map[string]string, error)
	WaitLinkUp(ctx context.Context, timeout time.Duration) error
}

// Backend starts Redis nodes.
type Backend interface {
	Name() string
	StartNode(ctx context.Context, cfg NodeConfig) (RedisNode, error)
	// NodeOpTime is the typical time of a kill or a restart of a node:
	// scenarios that kill nodes scale their times to it.
	NodeOpTime() time.Duration
	// NodeControl reports whether nodes can be killed, paused and promoted
	// (false for a user's own Redis: only network faults apply).
	NodeControl() bool
}

// Network makes a cell's links. The embedded toxiproxy (Proxies) is the
// default; a backend with a network of its own (NetworkBackend) brings one.
type Network interface {
	NewLink(name, upstream string) (*Link, error)
	Links() []*Link
	Close() error
}

// NetworkBackend is a Backend whose nodes are reached through a network of
// its own (the simulation's in-memory links), not through toxiproxy.
type NetworkBackend interface {
	NewNetwork() (Network, error)
}

// Dialer is a Network whose addresses only its own dial reaches (they are
// not on any real network); clients dial through it.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// VirtualBackend is a Backend whose cells run in virtual time: each part of
// a cell (its nodes, links, pods and faults) runs inside Enter, which
// returns when everything started inside has ended. The simulation's
// Enter is a testing/synctest bubble, where time only moves when every
// goroutine waits, so load on the machine cannot stretch a cell.
type VirtualBackend interface {
	Enter(f func())
}

// LimitedBackend is a Backend that cannot give some of what fault kinds
// need (the simulation has no replication); Unsupported says why in words
// ("skipped: ..."), or "" when it can give all of n. A cell that needs
// what its backend lacks is skipped with that reason, never faked.
type LimitedBackend interface {
	Unsupported(n Needs) string
}

// ClockBackend is a Backend whose nodes can run with a movable wall clock
// (NodeConfig.Clock); ClockControl says why not when they cannot here.
type ClockBackend interface {
	ClockControl() error
}

// PowerLossBackend is a Backend whose nodes can lose power (PowerLossNode);
// PowerLossControl says why not when they cannot here.
type PowerLossBackend interface {
	PowerLossControl() error
}

// PowerLossControl implements PowerLossBackend: cutting an everysec AOF at
// a second needs its timestamp marks, which Redis has from 7.0. Asked once
// per process (every planned cell asks).
func (ProcessBackend) PowerLossControl() error {
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
	v, err := RedisServerVersion(bin)
	if err != nil {
		return err
	}
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 7 {
		return fmt.Errorf("power-loss needs Redis 7 or later (AOF timestamp marks); %s is %s", bin, v)
	}
	return nil
}

// ProcessBackend runs each node as a local redis-server process.
type ProcessBackend struct{}

// Name implements Backend.
func (ProcessBackend) Name() string { return "process" }

// NodeControl implements Backend.
func (ProcessBackend) NodeControl() bool { return true }

// quietProcessRestart is a local redis-server's kill and restart, PING
// answered, on a quiet machine (measured: 20 to 30 ms).
const quietProcessRestart = 30 * time.Millisecond

// NodeOpTime implements Backend: a process restarts in about 30 ms.
func (ProcessBackend) NodeOpTime() time.Duration { return quietProcessRestart }

// ClockControl implements ClockBackend: it needs a C compiler to build the
// clock shim (once per run).
func (ProcessBackend) ClockControl() error { return ClockShimAvailable() }

// StartNode implements Backend.
func (ProcessBackend) StartNode(ctx context.Context, cfg NodeConfig) (RedisNode, error) {
	n, err := StartNode(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return n, nil
}

var _ RedisNode = (*Node)(nil)
