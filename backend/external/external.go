// Package external is the backend over a user's own Redis servers: nodes
// are the addresses given, in order, and only network faults apply (the
// links still run through the embedded proxies). The harness keeps to its
// own key prefix there (see scenarios.Options), so it never touches keys it
// did not create, and leaves none behind for good: see keys.go.
package external

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service"
)

// Sentinel errors.
var (
	// ErrNoNodeControl is returned by node operations on a user's own Redis.
	ErrNoNodeControl = errors.New("external: the external backend cannot kill, pause or promote a node")
	// ErrNoAnswer means a server of --redis-addr did not answer PING.
	ErrNoAnswer = errors.New("external: redis does not answer PING")
)

// Name is the backend's name in flags, histories and reports.
const Name = "external"

// Backend hands out a user's own Redis servers, in the order given, and
// a user's own PostgreSQL server (postgres.go).
type Backend struct {
	addrs []string
	pg    *pgServer
	// Swept is how many keys (Redis) and schemas (PostgreSQL) of runs
	// that were killed New removed (see Sweep, sweepSchemas).
	Swept int
	// PostgresVersion is the server's version (with a PostgreSQL URL).
	PostgresVersion string
}

// Config is what a user gives the external backend: Redis servers, a
// PostgreSQL server, or both.
type Config struct {
	RedisAddrs  []string
	PostgresURL string
}

// New checks the servers answer (Redis: PING; PostgreSQL: a login that
// may create schemas), then sweeps what runs that were killed left there
// (Sweep, sweepSchemas).
func New(cfg Config) (*Backend, error) {
	if len(cfg.RedisAddrs) == 0 && cfg.PostgresURL == "" {
		return nil, fmt.Errorf("%w: the external backend needs --redis-addr host:port[,host:port...] or --postgres-url URL",
			backend.ErrInvalidConfig)
	}
	for _, a := range cfg.RedisAddrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%w: --redis-addr %q: %w (want host:port)", backend.ErrInvalidConfig, a, err)
		}
		if err := backend.Ping(a, 2*time.Second); err != nil {
			return nil, &noAnswerError{addr: a, err: err}
		}
	}
	b := &Backend{addrs: cfg.RedisAddrs}
	if cfg.PostgresURL != "" {
		pg, err := parsePostgresURL(cfg.PostgresURL)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
		defer cancel()
		if b.PostgresVersion, err = pg.check(ctx); err != nil {
			return nil, err
		}
		n, _ := pg.sweepSchemas(ctx)
		b.pg, b.Swept = pg, n
	}
	if len(b.addrs) > 0 {
		b.Swept += Sweep(b.addrs, sweepTimeout)
	}
	return b, nil
}

// noAnswerError is ErrNoAnswer for one address, in the words a user reads
// first: "external redis HOST:PORT does not answer PING: why; check ...".
type noAnswerError struct {
	addr string
	err  error
}

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("external: redis %s does not answer PING: %v; check --redis-addr (host:port of a running "+
		"Redis server, comma-separated for several)", e.addr, e.err)
}

func (e *noAnswerError) Unwrap() []error { return []error{ErrNoAnswer, e.err} }

// Name implements backend.Backend.
func (*Backend) Name() string { return Name }

// NodeOpTime implements backend.Backend (unused: there is no node control).
func (*Backend) NodeOpTime() time.Duration { return 0 }

// Supports implements backend.Backend: no node of a user's can be killed,
// restarted or promoted, a quorum lock needs as many servers as it has
// nodes, and a cell needs the server of its lock's service.
func (b *Backend) Supports(n backend.Needs) error {
	if err := backend.CannotControlNodes(Name, n); err != nil {
		return err
	}
	if !n.Service.IsRedis() {
		if n.Service != service.Postgres || b.pg == nil {
			return backend.Unsupported("the %s backend was given no %s server (%s)", Name, n.Service.Server(), serviceFlag(n))
		}
		return nil
	}
	if n.Cluster {
		return backend.Unsupported("the %s backend runs on single Redis servers (--redis-addr); a Redis Cluster of "+
			"your own is not supported yet: run the cluster cells on the process backend", Name)
	}
	if len(b.addrs) == 0 {
		return backend.Unsupported("the %s backend was given no Redis server (--redis-addr host:port[,...])", Name)
	}
	if n.Nodes > len(b.addrs) {
		return backend.Unsupported("the cell needs %d independent Redis servers, --redis-addr gave %d", n.Nodes, len(b.addrs))
	}
	return nil
}

// serviceFlag is the flag that gives the external backend a server of the
// cell's service.
func serviceFlag(n backend.Needs) string {
	if n.Service == service.Postgres {
		return "--postgres-url URL"
	}
	return "the external backend takes Redis (--redis-addr) and PostgreSQL (--postgres-url) servers"
}

// Addrs returns the user's Redis addresses.
func (b *Backend) Addrs() []string { return b.addrs }

// StartNode hands out the server for the node's place in its cluster:
// "node2" gets the third Redis address; a PostgreSQL node the
// --postgres-url server. A cluster needing more nodes than there are
// addresses is an error.
func (b *Backend) StartNode(ctx context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	if !cfg.Service.IsRedis() {
		if b.pg == nil {
			return nil, fmt.Errorf("%w: node %s: no --postgres-url", backend.ErrInvalidConfig, cfg.Name)
		}
		return &pgNode{name: cfg.Name, s: b.pg}, nil
	}
	i := 0
	if _, err := fmt.Sscanf(cfg.Name, "node%d", &i); err != nil {
		i = 0
	}
	if i >= len(b.addrs) {
		return nil, fmt.Errorf("%w: node %s needs %d external addresses, got %d", backend.ErrInvalidConfig, cfg.Name, i+1, len(b.addrs))
	}
	n := &Node{name: cfg.Name, b: b, idx: i}
	n.AdminOps = backend.NewAdminOps(cfg.Name, n.Addr)
	return n, nil
}

// Node is one of the user's servers.
type Node struct {
	backend.AdminOps
	name string
	b    *Backend
	idx  int
}

// Name implements backend.RedisNode.
func (n *Node) Name() string { return n.name }

// Addr implements backend.RedisNode.
func (n *Node) Addr() string { return n.b.addrs[n.idx%len(n.b.addrs)] }

// State implements backend.RedisNode: always running, as far as we know.
func (n *Node) State() backend.NodeState { return backend.NodeRunning }

// Kill implements backend.RedisNode: not possible.
func (n *Node) Kill() error { return ErrNoNodeControl }

// Start implements backend.RedisNode: not possible.
func (n *Node) Start(context.Context) error { return ErrNoNodeControl }

// Restart implements backend.RedisNode: not possible.
func (n *Node) Restart(context.Context) error { return ErrNoNodeControl }

// Pause implements backend.RedisNode: not possible.
func (n *Node) Pause() error { return ErrNoNodeControl }

// Resume implements backend.RedisNode: not possible.
func (n *Node) Resume() error { return ErrNoNodeControl }

// Close implements backend.RedisNode: the server is the user's; nothing to stop.
func (n *Node) Close() error { return nil }
