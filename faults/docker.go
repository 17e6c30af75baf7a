package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DefaultRedisImage is the image the docker backend runs unless told
// otherwise: built locally from this machine's redis-server by
// `make redis-image` (faults/docker/build-redis-image.sh), since no
// registry may be reachable.
const DefaultRedisImage = "lockchaos/redis:7-local"

// FallbackRedisImage is used when no image was asked for and the local
// one is missing (Docker Desktop, no redis-server to build it from): the
// official image, pulled if a registry answers.
const FallbackRedisImage = "redis:7"

// Labels on every container the harness starts, so leftovers of a run that
// died without cleaning up (SIGKILL, power loss) are found and removed by
// the next one.
const (
	labelManaged = "org.lockchaos.managed"
	labelOwner   = "org.lockchaos.owner" // "pid/starttime" of the harness process
	ryukEnv      = "TESTCONTAINERS_RYUK_DISABLED"
	reaperImage  = "testcontainers/ryuk:0.14.0"
)

// ErrNoDocker means no Docker engine answered.
var ErrNoDocker = errors.New("faults: no Docker engine answers")

// DockerConfig configures the docker backend.
type DockerConfig struct {
	// Image to run. Default DefaultRedisImage, else FallbackRedisImage.
	// A missing image is pulled once if a registry answers; where none
	// does, build one with `make redis-image`.
	Image string
}

// DockerBackend runs each node as a container (testcontainers-go's redis
// module) on the host network, so a node listens on a loopback port like a
// process would and every fault (proxies, replication link) stays the same.
type DockerBackend struct {
	image  string
	cli    *client.Client
	Ryuk   bool // whether testcontainers' reaper guards our containers
	Swept  int  // leftover containers of dead runs removed at start
	owner  string
	closed sync.Once
}

var quietTestcontainers sync.Once

// NewDockerBackend connects to the Docker engine, checks the image is
// there, decides about the reaper, and sweeps leftovers of dead runs.
func NewDockerBackend(ctx context.Context, cfg DockerConfig) (*DockerBackend, error) {
	quietTestcontainers.Do(func() { tclog.SetDefault(tclog.NewNoopLogger()) })
	image := cfg.Image
	// A plain engine client, not testcontainers': testcontainers reads its
	// configuration (the reaper switch included) once, on first use, and
	// the reaper decision below must come first.
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("%w: %v; start Docker (Docker Desktop, or `systemctl start docker`), or use the process backend with redis-server installed", ErrNoDocker, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: %v; start Docker (Docker Desktop, or `systemctl start docker`), or use the process backend with redis-server installed", ErrNoDocker, err)
	}
	candidates := []string{image}
	if image == "" {
		candidates = []string{DefaultRedisImage, FallbackRedisImage}
	}
	image = ""
	var pullErrs []string
	for _, c := range candidates {
		if _, err := cli.ImageInspect(ctx, c); err == nil {
			image = c
			break
		}
	}
	for _, c := range candidates {
		if image != "" {
			break
		}
		if err := pull(ctx, cli, c); err != nil {
			pullErrs = append(pullErrs, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		image = c
	}
	if image == "" {
		cli.Close()
		return nil, fmt.Errorf("%w: no Redis image present locally and none could be pulled (%s): build one from this machine's redis-server with `make redis-image`, or pass --redis-image with an image you have", ErrNodeStart, strings.Join(pullErrs, "; "))
	}
	b := &DockerBackend{image: image, cli: cli, owner: ownerLabel()}
	// The reaper guards containers when its image is at hand; without it
	// (no registry) the harness cleans up itself: Close, KillAll on
	// signals, and the sweep below for runs that died anyway.
	if os.Getenv(ryukEnv) == "" {
		if _, err := cli.ImageInspect(ctx, reaperImage); err != nil {
			os.Setenv(ryukEnv, "true")
		}
	}
	b.Ryuk = !isTrue(os.Getenv(ryukEnv))
	b.Swept, err = b.sweep(ctx)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return b, nil
}

// pull fetches an image, bounded in time (a machine without a registry
// fails fast or times out here, not in the middle of a cell).
func pull(ctx context.Context, cli *client.Client, image string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	resp, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

func isTrue(s string) bool {
	v, _ := strconv.ParseBool(s)
	return v
}

// ownerLabel identifies this process across pid reuse: pid and its start
// time in clock ticks since boot.
func ownerLabel() string {
	return fmt.Sprintf("%d/%s", os.Getpid(), procStart(os.Getpid()))
}

func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 19 {
			return f[19] // field 22 of stat: starttime
		}
	}
	return ""
}

// ownerAlive reports whether the process named by an owner label runs.
func ownerAlive(owner string) bool {
	pidS, start, ok := strings.Cut(owner, "/")
	pid, err := strconv.Atoi(pidS)
	if !ok || err != nil {
		return false
	}
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	return procStart(pid) == start
}

// sweep removes lockchaos containers whose owning process is gone.
func (b *DockerBackend) sweep(ctx context.Context) (int, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return 0, fmt.Errorf("faults: docker: list leftovers: %w", err)
	}
	n := 0
	for _, c := range res.Items {
		if ownerAlive(c.Labels[labelOwner]) {
			continue
		}
		if _, err := b.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err == nil {
			n++
		}
	}
	return n, nil
}

// Name implements Backend.
func (b *DockerBackend) Name() string { return "docker" }

// NodeOpTime implements Backend: killing a container and starting a new
// one takes a few hundred milliseconds, forty times a process's.
func (b *DockerBackend) NodeOpTime() time.Duration { return 400 * time.Millisecond }

// NodeControl implements Backend.
func (b *DockerBackend) NodeControl() bool { return true }

// Image returns the image the backend runs.
func (b *DockerBackend) Image() string { return b.image }

// Close releases the engine connection (nodes are closed by their cluster).
func (b *DockerBackend) Close() error {
	var err error
	b.closed.Do(func() { err = b.cli.Close() })
	return err
}

// StartNode implements Backend.
func (b *DockerBackend) StartNode(ctx context.Context, cfg NodeConfig) (RedisNode, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "node"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	n := &ContainerNode{b: b, cfg: cfg, state: NodeKilled}
	n.adminOps = adminOps{label: cfg.Name, address: n.Addr}
	registerNode(n, "")
	var err error
	for attempt := range 3 {
		n.port = cfg.Port
		if n.port == 0 {
			if n.port, err = freePort(); err != nil {
				break
			}
		}
		if err = n.start(ctx); err == nil {
			return n, nil
		}
		if cfg.Port != 0 || attempt == 2 {
			break
		}
	}
	_ = n.Close()
	return nil, err
}

// ContainerNode is a Redis server in a container on the host network.
type ContainerNode struct {
	adminOps
	b    *DockerBackend
	cfg  NodeConfig
	port int

	mu    sync.Mutex
	state NodeState
	ctr   *tcredis.RedisContainer
}

var _ RedisNode = (*ContainerNode)(nil)

// Name implements RedisNode.
func (n *ContainerNode) Name() string { return n.cfg.Name }

// Addr implements RedisNode: a loopback address, as for a process.
func (n *ContainerNode) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// State implements RedisNode.
func (n *ContainerNode) State() NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// ContainerID returns the current container's id, or "".
func (n *ContainerNode) ContainerID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctr == nil {
		return ""
	}
	return n.ctr.GetContainerID()
}

func (n *ContainerNode) args() []string { return serverArgs(n.cfg, n.port, "/data") }

func (n *ContainerNode) start(ctx context.Context) error {
	n.mu.Lock()
	if err := startable(n.cfg.Name, n.state); err != nil {
		n.mu.Unlock()
		return err
	}
	old := n.ctr
	n.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	if old != nil && n.cfg.Persistence {
		// Same container, same /data: the append-only file comes back.
		if err := old.Start(sctx); err != nil {
			return fmt.Errorf("%w: node %s: restart container: %v", ErrNodeStart, n.cfg.Name, err)
		}
	} else {
		if old != nil {
			_ = testcontainers.TerminateContainer(old)
		}
		ctr, err := tcredis.Run(sctx, n.b.image,
			testcontainers.WithCmd(n.args()...),
			testcontainers.WithLabels(map[string]string{labelManaged: "true", labelOwner: n.b.owner, "org.lockchaos.node": n.cfg.Name}),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				// Host network: the node listens on loopback, the proxies
				// and the replication link work exactly as for a process.
				hc.NetworkMode = "host"
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
			return fmt.Errorf("%w: node %s (image %s): %v", ErrNodeStart, n.cfg.Name, n.b.image, err)
		}
		n.mu.Lock()
		n.ctr = ctr
		n.mu.Unlock()
	}
	n.mu.Lock()
	n.state = NodeRunning
	n.mu.Unlock()
	if err := waitReady(ctx, n.Addr(), nil, n.cfg.StartTimeout); err != nil {
		_ = n.Kill()
		return fmt.Errorf("%w: node %s: %v", ErrNodeStart, n.cfg.Name, err)
	}
	return nil
}

// Kill implements RedisNode: SIGKILL to the container (a paused one too).
func (n *ContainerNode) Kill() error {
	n.mu.Lock()
	if kill, err := killable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	ctr := n.ctr
	n.state = NodeKilled
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := ctr.GetContainerID()
	_, _ = n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	if _, err := n.b.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil && !strings.Contains(err.Error(), "is not running") {
		return fmt.Errorf("faults: node %s: docker kill: %w", n.cfg.Name, err)
	}
	// Wait until the port is free again, as for a process that was reaped.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ping(n.Addr(), 50*time.Millisecond) != nil {
			break
		}
	}
	return nil
}

// Start implements RedisNode.
func (n *ContainerNode) Start(ctx context.Context) error { return n.start(ctx) }

// Restart implements RedisNode.
func (n *ContainerNode) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Pause implements RedisNode with the cgroup freezer (docker pause).
func (n *ContainerNode) Pause() error {
	return n.transition(NodeRunning, NodePaused, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Resume implements RedisNode (docker unpause).
func (n *ContainerNode) Resume() error {
	return n.transition(NodePaused, NodeRunning, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		return err
	})
}

func (n *ContainerNode) transition(from, to NodeState, act func(context.Context, string) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == NodeClosed {
		return fmt.Errorf("node %s: %w", n.cfg.Name, ErrClosed)
	}
	if n.state != from {
		return fmt.Errorf("node %s is %s, want %s: %w", n.cfg.Name, n.state, from, ErrNodeState)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := act(ctx, n.ctr.GetContainerID()); err != nil {
		return fmt.Errorf("faults: node %s: %w", n.cfg.Name, err)
	}
	n.state = to
	return nil
}

// Close implements RedisNode: the container is removed.
func (n *ContainerNode) Close() error {
	n.mu.Lock()
	if n.state == NodeClosed {
		n.mu.Unlock()
		return nil
	}
	ctr := n.ctr
	n.state = NodeClosed
	n.mu.Unlock()
	unregisterNode(n)
	if ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := n.b.cli.ContainerRemove(ctx, ctr.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("faults: node %s: remove container: %w", n.cfg.Name, err)
	}
	return nil
}
