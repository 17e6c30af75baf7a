package docker

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/clockshim"
)

// Node is a Redis server in a container on the host network.
type Node struct {
	backend.AdminOps
	b    *Backend
	cfg  backend.NodeConfig
	port int

	mu    sync.Mutex
	state backend.NodeState
	ctr   *tcredis.RedisContainer
	clock *clockshim.FileClock // with cfg.Clock: the offset, kept across restarts
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.RedisNode = (*Node)(nil)
)

// Name implements backend.RedisNode.
func (n *Node) Name() string { return n.cfg.Name }

// Addr implements backend.RedisNode: a loopback address, as for a process.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// State implements backend.RedisNode.
func (n *Node) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// ContainerID returns the current container's id, or "".
func (n *Node) ContainerID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctr == nil {
		return ""
	}
	return n.ctr.GetContainerID()
}

func (n *Node) args() []string { return backend.ServerArgs(n.cfg, n.port, "/data") }

func (n *Node) start(ctx context.Context) error {
	n.mu.Lock()
	if err := backend.CheckStartable(n.cfg.Name, n.state); err != nil {
		n.mu.Unlock()
		return err
	}
	old := n.ctr
	n.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	if old != nil && (n.cfg.Persistence || n.cfg.ClusterEnabled()) {
		// Same container, same /data: the append-only file comes back, and
		// a cluster node's nodes.conf (without it, it would come back a
		// stranger to its cluster).
		if err := old.Start(sctx); err != nil {
			return fmt.Errorf("%w: node %s: restart container: %w", backend.ErrNodeStart, n.cfg.Name, err)
		}
	} else if err := n.runContainer(sctx, old); err != nil {
		return err
	}
	n.mu.Lock()
	n.state = backend.NodeRunning
	n.mu.Unlock()
	if err := backend.WaitReady(ctx, n.Addr(), nil, n.cfg.StartTimeout); err != nil {
		_ = n.Kill()
		return fmt.Errorf("%w: node %s: %w", backend.ErrNodeStart, n.cfg.Name, err)
	}
	if n.cfg.Clock {
		// An image whose C library the host-built shim cannot load, or a
		// daemon that does not see this machine's temp dir, would run the
		// node with a clock no fault can move.
		if err := backend.CheckClockMoves(ctx, n); err != nil {
			_ = n.Kill()
			return fmt.Errorf("%w (image %s)", err, n.b.image)
		}
	}
	return nil
}

// runContainer replaces the node's container (the old one, if any, goes)
// by a fresh one on the host network, with the clock shim when asked.
func (n *Node) runContainer(sctx context.Context, old *tcredis.RedisContainer) error {
	if old != nil {
		_ = testcontainers.TerminateContainer(old)
	}
	var env map[string]string
	var binds []string
	if n.cfg.Clock {
		e, bind, err := n.clockSetup()
		if err != nil {
			return err
		}
		env, binds = e, []string{bind}
	}
	ctr, err := tcredis.Run(sctx, n.b.image,
		testcontainers.WithCmd(n.args()...),
		testcontainers.WithEnv(env),
		testcontainers.WithLabels(map[string]string{labelManaged: "true", labelOwner: n.b.owner,
			labelPIDSpace: backend.PIDSpace(), "org.lockchaos.node": n.cfg.Name}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			// Host network: the node listens on loopback, the proxies
			// and the replication link work exactly as for a process.
			hc.NetworkMode = "host"
			hc.Binds = append(hc.Binds, binds...)
			hc.PortBindings = nil
			hc.PublishAllPorts = false
		}),
		testcontainers.WithExposedPorts(),
		testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections").WithStartupTimeout(n.cfg.StartTimeout)),
	)
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return fmt.Errorf("%w: node %s (image %s): %w", backend.ErrNodeStart, n.cfg.Name, n.b.image, err)
	}
	n.mu.Lock()
	n.ctr = ctr
	n.mu.Unlock()
	return nil
}

// Kill implements backend.RedisNode: SIGKILL to the container (a paused one too).
func (n *Node) Kill() error {
	n.mu.Lock()
	if kill, err := backend.CheckKillable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	ctr := n.ctr
	n.state = backend.NodeKilled
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := ctr.GetContainerID()
	_, _ = n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	_, err := n.b.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !strings.Contains(err.Error(), "is not running") {
		return fmt.Errorf("docker: node %s: kill: %w", n.cfg.Name, err)
	}
	// Wait until the port is free again, as for a process that was reaped.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if backend.Ping(n.Addr(), 50*time.Millisecond) != nil {
			break
		}
	}
	return nil
}

// Start implements backend.RedisNode.
func (n *Node) Start(ctx context.Context) error { return n.start(ctx) }

// Restart implements backend.RedisNode.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Pause implements backend.RedisNode with the cgroup freezer (docker pause).
func (n *Node) Pause() error {
	return n.transition(backend.NodeRunning, backend.NodePaused, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Resume implements backend.RedisNode (docker unpause).
func (n *Node) Resume() error {
	return n.transition(backend.NodePaused, backend.NodeRunning, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		return err
	})
}

func (n *Node) transition(from, to backend.NodeState, act func(context.Context, string) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == backend.NodeClosed {
		return fmt.Errorf("node %s: %w", n.cfg.Name, backend.ErrClosed)
	}
	if n.state != from {
		return fmt.Errorf("node %s is %s, want %s: %w", n.cfg.Name, n.state, from, backend.ErrNodeState)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := act(ctx, n.ctr.GetContainerID()); err != nil {
		return fmt.Errorf("docker: node %s: %w", n.cfg.Name, err)
	}
	n.state = to
	return nil
}

// Close implements backend.RedisNode: the container is removed.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.state == backend.NodeClosed {
		n.mu.Unlock()
		return nil
	}
	ctr := n.ctr
	n.state = backend.NodeClosed
	clock := n.clock
	n.clock = nil
	n.mu.Unlock()
	backend.UntrackNode(n)
	if clock != nil {
		_ = clock.Close()
	}
	if ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := n.b.cli.ContainerRemove(ctx, ctr.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("docker: node %s: remove container: %w", n.cfg.Name, err)
	}
	return nil
}
