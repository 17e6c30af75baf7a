package sim

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/lockchaos/lockchaos/backend"
	"github.com/redis/go-redis/v9"
)

// Node is one simulated Redis server: a miniredis instance with no
// listener, reached only through Dial. Its TTLs follow the clock
// (ClockTTL), which inside a synctest bubble is the bubble's virtual
// clock. Kill drops the instance (every connection closes, new ones are
// refused); Start brings up a fresh, empty one, as a redis-server without
// persistence restarts.
type Node struct {
	name, addr string

	mu      sync.Mutex
	state   backend.NodeState
	mr      *miniredis.Miniredis // nil unless running or paused
	resumed chan struct{}        // while paused: closed on Resume
	offset  time.Duration        // clock shifts so far (ShiftClock)
	obs     observers            // ObserveKeys (observe.go)
}

var _ backend.RedisNode = (*Node)(nil)
var _ backend.ClockNode = (*Node)(nil)

// registry maps a node's address to the node, so a link can find its
// upstream. It is process-wide because the cluster starts nodes through
// the (shared) backend and links through the cell's network separately;
// addresses are unique per process, so cells never see each other's.
var registry struct {
	sync.Mutex
	nodes map[string]*Node
}

// seq numbers every simulated address handed out in this process.
var seq atomic.Uint32

// nextAddr returns a fresh IP literal address. go-redis must be given an
// IP literal even with a custom dialer: a host name starts a DNS lookup
// whose goroutine lives outside the bubble, and synctest aborts the cell.
func nextAddr(port int) string {
	n := seq.Add(1)
	return fmt.Sprintf("10.%d.%d.%d:%d", n>>16&0xff, n>>8&0xff, n&0xff, port)
}

func newNode(name string) *Node {
	n := &Node{name: name, addr: nextAddr(6379)}
	n.boot()
	registry.Lock()
	if registry.nodes == nil {
		registry.nodes = map[string]*Node{}
	}
	registry.nodes[n.addr] = n
	registry.Unlock()
	return n
}

func lookupNode(addr string) *Node {
	registry.Lock()
	defer registry.Unlock()
	return registry.nodes[addr]
}

// boot starts a fresh, empty instance. Called with mu held or before the
// node is shared.
func (n *Node) boot() {
	n.mr = miniredis.NewMiniRedis()
	n.mr.ClockTTL(true)
	// A connection dialed and closed starts the instance's server (links
	// hand it their ends with ServeConn).
	if c, err := n.mr.Dial(); err == nil {
		_ = c.Close()
	}
	var native server.Hook
	if nativeScriptsOn {
		native = nativeScriptsHook(n.mr)
	}
	n.obs.attach(n.name, n.mr, native) // sets the pre-hook
	n.state = backend.NodeRunning
}

// Name implements backend.RedisNode.
func (n *Node) Name() string { return n.name }

// Addr implements backend.RedisNode: a simulated IP address that only the
// cell's network reaches.
func (n *Node) Addr() string { return n.addr }

// State implements backend.RedisNode.
func (n *Node) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// Kill implements backend.RedisNode: the instance and everything in it are
// gone at once; open connections close (as a SIGKILLed server's do).
func (n *Node) Kill() error {
	n.mu.Lock()
	switch n.state {
	case backend.NodeClosed:
		n.mu.Unlock()
		return fmt.Errorf("node %s: %w", n.name, backend.ErrClosed)
	case backend.NodeKilled:
		n.mu.Unlock()
		return nil
	}
	mr := n.drop(backend.NodeKilled)
	n.obs.detach(mr, "node killed")
	n.mu.Unlock()
	mr.Close() // outside mu: it waits for its connections to end
	return nil
}

// drop forgets the instance (resuming a paused node first, so its
// connections can end) and returns it for closing. Called with mu held.
func (n *Node) drop(to backend.NodeState) *miniredis.Miniredis {
	mr := n.mr
	n.mr = nil
	if n.resumed != nil {
		close(n.resumed)
		n.resumed = nil
	}
	n.state = to
	return mr
}

// Start implements backend.RedisNode: a killed node comes back empty, at
// once (a simulated start takes no virtual time).
func (n *Node) Start(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.state {
	case backend.NodeClosed:
		return fmt.Errorf("node %s: %w", n.name, backend.ErrClosed)
	case backend.NodeKilled:
		n.boot()
	}
	return nil
}

// Restart implements backend.RedisNode.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.Start(ctx)
}

// Pause implements backend.RedisNode: the node stops answering (bytes to
// and from it wait in its links) until Resume, exactly, as a SIGSTOPped
// server would.
func (n *Node) Pause() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != backend.NodeRunning {
		return fmt.Errorf("node %s is %s, want running: %w", n.name, n.state, backend.ErrNodeState)
	}
	n.resumed = make(chan struct{})
	n.state = backend.NodePaused
	return nil
}

// Resume implements backend.RedisNode.
func (n *Node) Resume() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != backend.NodePaused {
		return fmt.Errorf("node %s is %s, want paused: %w", n.name, n.state, backend.ErrNodeState)
	}
	close(n.resumed)
	n.resumed = nil
	n.state = backend.NodeRunning
	return nil
}

// frozen returns a channel that closes when a paused node resumes, or nil
// when it is not paused.
func (n *Node) frozen() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.resumed
}

// Close implements backend.RedisNode.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.state == backend.NodeClosed {
		n.mu.Unlock()
		return nil
	}
	mr := n.drop(backend.NodeClosed)
	n.obs.close()
	n.mu.Unlock()
	if mr != nil {
		mr.Close()
	}
	registry.Lock()
	delete(registry.nodes, n.addr)
	registry.Unlock()
	return nil
}

// dial opens an in-memory connection to the instance, refused while the
// node is down.
func (n *Node) dial() (net.Conn, error) {
	n.mu.Lock()
	mr := n.mr
	n.mu.Unlock()
	if mr == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return mr.Dial()
}

// serve has the instance serve one end of a link's connection; false
// while the node is down. Under mu, so a Kill either comes after (and
// its Close closes the connection) or before (and this refuses): never a
// connection served by an instance already closed.
func (n *Node) serve(c net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mr == nil {
		return false
	}
	srv := n.mr.Server()
	if srv == nil {
		return false
	}
	srv.ServeConn(c)
	return true
}

// Do implements backend.RedisNode: one command on a connection of its own,
// straight to the node (no link, no fault).
func (n *Node) Do(ctx context.Context, args ...any) (any, error) {
	rdb := redis.NewClient(&redis.Options{Addr: n.addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		ContextTimeoutEnabled: true, PoolSize: 1,
		Dialer: func(context.Context, string, string) (net.Conn, error) { return n.dial() }})
	defer rdb.Close()
	return rdb.Do(ctx, args...).Result()
}

// errNoReplication is what every replication call says: miniredis has no
// replication, so the simulation cannot model it (cells that need it are
// skipped before they start; this is the guard behind that).
func (n *Node) errNoReplication() error {
	return fmt.Errorf("%w: node %s: the sim backend has no replication (miniredis has none)", backend.ErrUnsupported, n.name)
}

// ReplicaOf implements backend.RedisNode: not modelled.
func (n *Node) ReplicaOf(context.Context, string) error { return n.errNoReplication() }

// Promote implements backend.RedisNode: not modelled.
func (n *Node) Promote(context.Context) error { return n.errNoReplication() }

// ReplicationInfo implements backend.RedisNode: not modelled.
func (n *Node) ReplicationInfo(context.Context) (map[string]string, error) {
	return nil, n.errNoReplication()
}

// WaitLinkUp implements backend.RedisNode: not modelled.
func (n *Node) WaitLinkUp(context.Context, time.Duration) error { return n.errNoReplication() }

// ShiftClock implements backend.ClockNode for a forward jump: every TTL on
// the node counts down by d at once (miniredis's FastForward), which is
// what a wall clock jumping forward does to keys set with PX or EX, the
// way every built-in lock sets them. miniredis's SetTime would pin its
// clock rather than offset it (TTLs would stop following virtual time),
// so it is not used; a jump back is not modelled (miniredis never
// lengthens a TTL) and is an error, as are absolute expiries (PXAT) read
// against the shifted clock.
func (n *Node) ShiftClock(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: node %s: the sim backend cannot move a clock back (miniredis keeps the TTLs)",
			backend.ErrNoClockShim, n.name)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.offset += d
	if n.mr != nil {
		n.obs.shift(n.mr, d) // FastForward, and what it expired or shortened
	}
	return nil
}

// ClockOffset implements backend.ClockNode.
func (n *Node) ClockOffset() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.offset
}
