// Package backend is where Redis runs for a cell: the Backend interface
// that starts nodes, the RedisNode a fault kills, pauses or promotes, what
// a cell may need of them (Needs, asked once through Supports), the helpers
// every kind of node shares (the command line, readiness, admin commands)
// and the registry that closes whatever a run leaves behind.
//
// The backends themselves live in sub-packages: process (local
// redis-server processes, the default), docker (containers), external (a
// user's own servers) and sim (miniredis in virtual time).
package backend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/service"
)

// Sentinel errors. Callers test them with errors.Is; the wrapping error says
// which node and why.
var (
	// ErrNodeStart means the server was found but did not come up.
	ErrNodeStart = errors.New("backend: redis-server did not start")
	// ErrNodeState means the operation does not fit the node's state
	// (for example Resume on a node that is not paused).
	ErrNodeState = errors.New("backend: node is not in a state for this operation")
	// ErrClosed means the node was already closed.
	ErrClosed = errors.New("backend: closed")
	// ErrInvalidConfig means a NodeConfig failed Validate.
	ErrInvalidConfig = errors.New("backend: invalid config")
	// ErrUnsupported means a backend cannot give what a cell needs
	// (Supports); the wrapping error says what, in words.
	ErrUnsupported = errors.New("backend: not supported")
	// ErrNoClockShim is returned when a node's clock cannot be controlled:
	// no C compiler to build the shim, or a backend that cannot preload it.
	ErrNoClockShim = errors.New("backend: no clock control")
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
	// Supports says whether a cell that needs n can run here: nil, or an
	// error wrapping ErrUnsupported whose words (Reason) every output
	// shows as the cell's skip reason. It is the one question the harness
	// asks a backend about what it can do; a cell whose backend cannot
	// give what it needs is skipped with that reason, never faked.
	Supports(n Needs) error
}

// Needs is what a cell needs of its backend: what its fault kinds need
// (each kind registers its own) and what its lock brings.
type Needs struct {
	// Service is the kind of server the cell's lock runs on ("": Redis).
	// Set by the plan from the lock, never by a fault kind.
	Service service.Name `json:"service,omitempty"`
	// NodeControl: it kills, restarts or promotes nodes (not possible on a
	// user's own Redis).
	NodeControl bool `json:"node_control,omitempty"`
	// Replica: it needs a primary with a replica (one service address).
	Replica bool `json:"replica,omitempty"`
	// Nodes: it needs at least this many independent nodes.
	Nodes int `json:"nodes,omitempty"`
	// Persistence: the nodes keep an append-only file (the scenario's
	// fsync policy) and come back from it.
	Persistence bool `json:"persistence,omitempty"`
	// Clock: it moves nodes' wall clocks (the nodes run under the clock
	// shim, which needs a C compiler and the process backend).
	Clock bool `json:"clock,omitempty"`
	// Sentinel: a primary and a replica under three real Sentinels, the
	// clients finding the primary through them (process backend; locks
	// that take go-redis clients from the harness).
	Sentinel bool `json:"sentinel,omitempty"`
	// Cluster: Redis Cluster, shards of a primary and a replica that fail
	// over on their own, every node-to-node link a proxy of the harness's
	// (process backend: each node connects out from a loopback address of
	// its own, bind-source-addr, Redis 7.0 or later).
	Cluster bool `json:"cluster,omitempty"`
	// RealTime: a part of the cell (a lock in a driver process) runs in
	// real time, outside the harness's process. Set by the plan from the
	// lock, never by a fault kind.
	RealTime bool `json:"-"`
}

// Unsupported is the error a Supports returns: ErrUnsupported with the
// reason in words (format and args as for fmt.Sprintf).
func Unsupported(format string, args ...any) error {
	return &unsupportedError{reason: fmt.Sprintf(format, args...)}
}

type unsupportedError struct{ reason string }

func (e *unsupportedError) Error() string { return e.reason }
func (e *unsupportedError) Unwrap() error { return ErrUnsupported }

// Reason is the words of a Supports error, for a skip reason: the reason
// alone for one made with Unsupported, else the error's text.
func Reason(err error) string {
	var u *unsupportedError
	if errors.As(err, &u) {
		return u.reason
	}
	return err.Error()
}

// CannotControlNodes is the reason a backend over someone else's Redis
// gives for a cell that kills, restarts or promotes nodes.
func CannotControlNodes(name string, n Needs) error {
	if n.NodeControl || n.Replica || n.Sentinel || n.Cluster {
		return Unsupported("this scenario kills, restarts or promotes nodes, which the %s backend cannot do "+
			"(only network faults apply)", name)
	}
	return nil
}

// OwnsNodes reports whether b runs nodes of its own (it can kill, restart
// and promote them), as opposed to a user's own Redis, where the harness
// keeps to keys of its own.
func OwnsNodes(b Backend) bool { return b.Supports(Needs{NodeControl: true}) == nil }

// VirtualBackend is a Backend whose cells run in virtual time: each part of
// a cell (its nodes, links, pods and faults) runs inside Enter, which
// returns when everything started inside has ended. The simulation's
// Enter is a testing/synctest bubble, where time only moves when every
// goroutine waits, so load on the machine cannot stretch a cell.
type VirtualBackend interface {
	Enter(f func())
}

// Virtual returns b's way into virtual time, or false for a backend that
// runs in real time.
func Virtual(b Backend) (VirtualBackend, bool) {
	vb, ok := b.(VirtualBackend)
	return vb, ok
}

// NetworkBackend is a Backend whose nodes are reached through a network of
// its own (the simulation's in-memory links), not through toxiproxy.
type NetworkBackend interface {
	NewNetwork() (netfault.Network, error)
}

// ClockNode is a node whose wall clock the harness can move.
type ClockNode interface {
	// ShiftClock moves the node's wall clock by d (forward when positive)
	// on top of any earlier shift; it takes effect on its next clock call.
	ShiftClock(d time.Duration) error
	// ClockOffset is the node's total shift so far.
	ClockOffset() time.Duration
}

// PowerLossNode is a node that can crash as a machine does when it loses
// power: what the kernel had not written to disk is gone.
type PowerLossNode interface {
	// PowerLoss kills the server and drops from its append-only file what
	// its fsync policy had not yet made durable; it returns the bytes
	// dropped. The node stays down until Start.
	PowerLoss() (lost int64, err error)
}

// SentinelStarter is a Backend that runs Redis Sentinels beside its nodes
// (Supports says whether it can here): conf is the sentinel.conf to start
// from, binary the redis-server to run ("" for the default).
type SentinelStarter interface {
	StartSentinel(ctx context.Context, name, conf string, cfg NodeConfig) (RedisNode, error)
}

// NodeConfig describes one Redis server. The zero value is usable.
type NodeConfig struct {
	// Name labels the node in errors and proxy names. Default "node".
	Name string
	// Service is the kind of server to start ("": Redis). For a service
	// other than Redis, ExtraArgs are that server's command-line settings.
	Service service.Name
	// Binary is the redis-server to run (process backend). Default: the
	// one on PATH, or LOCKCHAOS_REDIS_SERVER.
	Binary string
	// Persistence turns on the append-only file (fsync as Fsync says), so
	// Restart brings the data back. Default off: `--save "" --appendonly no`,
	// and Restart comes back empty, which is what the node-restart scenarios need.
	Persistence bool
	// Fsync is the AOF's appendfsync policy with Persistence: "always"
	// (the default: fsync before every reply) or "everysec" (what a
	// power loss can cost is the last second of writes; see PowerLoss).
	Fsync string
	// Port to listen on (loopback only). Default 0: a free port is picked.
	Port int
	// StartTimeout bounds how long Start waits for PING to answer. Default 10s.
	StartTimeout time.Duration
	// ExtraArgs are appended to the command line (for example
	// "--repl-backlog-size", "1mb").
	ExtraArgs []string
	// Clock runs the server under the clock shim, so ShiftClock can move
	// its wall clock (clock faults). It needs a C compiler, once per run.
	Clock bool
	// SentinelConf, if set, runs the process as a Redis Sentinel with this
	// configuration (sentinel monitor ... lines): written once to the
	// node's dir, where Sentinel rewrites it as it learns, so a restarted
	// Sentinel remembers what it knew. Process backend only.
	SentinelConf string
}

// ClusterEnabled reports whether the node runs in Redis Cluster mode
// (--cluster-enabled yes among ExtraArgs): its nodes.conf, its identity in
// the cluster, must survive a restart.
func (c NodeConfig) ClusterEnabled() bool {
	for i := 0; i+1 < len(c.ExtraArgs); i++ {
		if c.ExtraArgs[i] == "--cluster-enabled" && c.ExtraArgs[i+1] == "yes" {
			return true
		}
	}
	return false
}

// DefaultStartTimeout is how long a node's start waits for PING unless
// NodeConfig.StartTimeout says otherwise.
const DefaultStartTimeout = 10 * time.Second

// Validate reports a config that cannot work.
func (c NodeConfig) Validate() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("%w: node port %d out of range", ErrInvalidConfig, c.Port)
	}
	switch c.Fsync {
	case "", "always", "everysec":
	default:
		return fmt.Errorf("%w: fsync %q (valid: always, everysec)", ErrInvalidConfig, c.Fsync)
	}
	if err := c.Service.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("%w: negative node start timeout %v", ErrInvalidConfig, c.StartTimeout)
	}
	return nil
}

// NodeState is what a node is doing now.
type NodeState int

// Node states.
const (
	NodeRunning NodeState = iota + 1
	NodePaused
	NodeKilled
	NodeClosed
)

func (s NodeState) String() string {
	switch s {
	case NodeRunning:
		return "running"
	case NodePaused:
		return "paused"
	case NodeKilled:
		return "killed"
	case NodeClosed:
		return "closed"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// RedisOnly is what a backend that starts Redis alone answers a cell on
// another service: Unsupported, naming the service and where it runs
// (where: "the process backend runs it"), or nil for a Redis cell.
func RedisOnly(backendName string, n Needs, where string) error {
	if n.Service.IsRedis() {
		return nil
	}
	return Unsupported("the %s backend runs Redis only, not %s; %s", backendName, n.Service.Server(), where)
}
