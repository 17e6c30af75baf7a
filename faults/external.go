package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrNoNodeControl is returned by node operations on a user's own Redis.
var ErrNoNodeControl = errors.New("faults: the external backend cannot kill, pause or promote a node")

// ExternalBackend hands out a user's own Redis servers, in the order given.
// Only network faults apply: the links still run through the embedded
// proxies. The harness keeps to its own key prefix there (see
// scenarios.Options), so it never touches keys it did not create.
type ExternalBackend struct {
	addrs []string
}

// NewExternalBackend checks the addresses parse and answer PING.
func NewExternalBackend(addrs []string) (*ExternalBackend, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: the external backend needs --redis-addr host:port[,host:port...]", ErrInvalidConfig)
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%w: redis address %q: %v", ErrInvalidConfig, a, err)
		}
		if err := Ping(a, 2*time.Second); err != nil {
			return nil, fmt.Errorf("%w: external redis %s does not answer PING: %v", ErrNodeStart, a, err)
		}
	}
	return &ExternalBackend{addrs: addrs}, nil
}

// Name implements Backend.
func (*ExternalBackend) Name() string { return "external" }

// NodeOpTime implements Backend (unused: there is no node control).
func (*ExternalBackend) NodeOpTime() time.Duration { return 0 }

// NodeControl implements Backend.
func (*ExternalBackend) NodeControl() bool { return false }

// Addrs returns the user's addresses.
func (b *ExternalBackend) Addrs() []string { return b.addrs }

// StartNode hands out the address for the node's place in its cluster:
// "node2" gets the third address. A cluster needing more nodes than there
// are addresses is an error.
func (b *ExternalBackend) StartNode(ctx context.Context, cfg NodeConfig) (RedisNode, error) {
	i := 0
	if _, err := fmt.Sscanf(cfg.Name, "node%d", &i); err != nil {
		i = 0
	}
	if i >= len(b.addrs) {
		return nil, fmt.Errorf("%w: node %s needs %d external addresses, got %d", ErrInvalidConfig, cfg.Name, i+1, len(b.addrs))
	}
	n := &ExternalNode{name: cfg.Name, b: b, idx: i}
	n.AdminOps = NewAdminOps(cfg.Name, n.Addr)
	return n, nil
}

// ExternalNode is one of the user's servers.
type ExternalNode struct {
	AdminOps
	name string
	b    *ExternalBackend
	idx  int
}

// Name implements RedisNode.
func (n *ExternalNode) Name() string { return n.name }

// Addr implements RedisNode.
func (n *ExternalNode) Addr() string { return n.b.addrs[n.idx%len(n.b.addrs)] }

// State implements RedisNode: always running, as far as we know.
func (n *ExternalNode) State() NodeState { return NodeRunning }

// Kill implements RedisNode: not possible.
func (n *ExternalNode) Kill() error { return ErrNoNodeControl }

// Start implements RedisNode: not possible.
func (n *ExternalNode) Start(context.Context) error { return ErrNoNodeControl }

// Restart implements RedisNode: not possible.
func (n *ExternalNode) Restart(context.Context) error { return ErrNoNodeControl }

// Pause implements RedisNode: not possible.
func (n *ExternalNode) Pause() error { return ErrNoNodeControl }

// Resume implements RedisNode: not possible.
func (n *ExternalNode) Resume() error { return ErrNoNodeControl }

// Close implements RedisNode: the server is the user's; nothing to stop.
func (n *ExternalNode) Close() error { return nil }
