// Package docker is the docker backend of package faults: each Redis node
// runs as a container (testcontainers-go's redis module) on the host
// network. It lives apart from faults so that importing faults (or
// scenarios) does not pull in testcontainers, the Docker client and their
// dependencies; only the lockchaos command imports it.
//
// Its nodes register with faults (backend.TrackNode), so backend.KillAll
// closes them as it closes processes.
package docker

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

	"github.com/moby/moby/client"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/lockchaos/lockchaos/backend"
)

// DefaultRedisImage is the image the docker backend runs unless told
// otherwise: built locally from this machine's redis-server by
// `make redis-image` (backend/docker/build-redis-image.sh), since no
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

// ErrNoEngine means no Docker engine answered.
var ErrNoEngine = errors.New("docker: no Docker engine answers")

// Config configures the docker backend.
type Config struct {
	// Image to run. Default DefaultRedisImage, else FallbackRedisImage.
	// A missing image is pulled once if a registry answers; where none
	// does, build one with `make redis-image`.
	Image string
}

// Backend is a backend.Backend that runs each node as a container
// (testcontainers-go's redis module) on the host network, so a node listens
// on a loopback port like a process would and every fault (proxies,
// replication link) stays the same.
type Backend struct {
	image  string
	cli    *client.Client
	Ryuk   bool // whether testcontainers' reaper guards our containers
	Swept  int  // leftover containers of dead runs removed at start
	owner  string
	closed sync.Once
	clock  clockFiles
}

var quietTestcontainers sync.Once

// NewBackend connects to the Docker engine, checks the image is there,
// decides about the reaper, and sweeps leftovers of dead runs.
func NewBackend(ctx context.Context, cfg Config) (*Backend, error) {
	quietTestcontainers.Do(func() { tclog.SetDefault(tclog.NewNoopLogger()) })
	image := cfg.Image
	// A plain engine client, not testcontainers': testcontainers reads its
	// configuration (the reaper switch included) once, on first use, and
	// the reaper decision below must come first.
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w; start Docker (Docker Desktop, or `systemctl start docker`), or use the "+
			"process backend with redis-server installed", ErrNoEngine, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: %w; start Docker (Docker Desktop, or `systemctl start docker`), or use the "+
			"process backend with redis-server installed", ErrNoEngine, err)
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
		return nil, fmt.Errorf("%w: no Redis image present locally and none could be pulled (%s): build one from this "+
			"machine's redis-server with `make redis-image`, or pass --redis-image with an image you have",
			backend.ErrNodeStart, strings.Join(pullErrs, "; "))
	}
	b := &Backend{image: image, cli: cli, owner: ownerLabel()}
	// The reaper guards containers when its image is at hand; without it
	// (no registry) the harness cleans up itself: Close, KillAll on
	// signals, and the sweep below for runs that died anyway.
	if os.Getenv(ryukEnv) == "" {
		if _, err := cli.ImageInspect(ctx, reaperImage); err != nil {
			os.Setenv(ryukEnv, "true")
		}
	}
	b.Ryuk = !isTrue(os.Getenv(ryukEnv))
	sweepClockDirs()
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
func (b *Backend) sweep(ctx context.Context) (int, error) {
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return 0, fmt.Errorf("docker: list leftovers: %w", err)
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

// Name implements backend.Backend.
func (b *Backend) Name() string { return "docker" }

// NodeOpTime implements backend.Backend: killing a container and starting
// a new one takes a few hundred milliseconds, forty times a process's.
func (b *Backend) NodeOpTime() time.Duration { return 400 * time.Millisecond }

// Supports implements backend.Backend: containers are killed, restarted,
// paused and promoted like processes, and their clocks move under the
// shim; Sentinels and power loss are the process backend's alone.
func (b *Backend) Supports(n backend.Needs) error {
	switch {
	case n.Sentinel:
		return backend.Unsupported("this scenario runs real Sentinels beside the nodes, which the docker backend " +
			"cannot do (the process backend can)")
	case n.Persistence:
		return backend.Unsupported("this scenario cuts a node's append-only file as a power loss would, which the " +
			"docker backend cannot do (the process backend can)")
	case n.Clock:
		if err := clockSupported(); err != nil {
			return backend.Unsupported("%v", err)
		}
	}
	return nil
}

// Image returns the image the backend runs.
func (b *Backend) Image() string { return b.image }

// Close releases the engine connection (nodes are closed by their cluster).
func (b *Backend) Close() error {
	var err error
	b.closed.Do(func() {
		b.removeClockDir()
		err = b.cli.Close()
	})
	return err
}

// StartNode implements backend.Backend.
func (b *Backend) StartNode(ctx context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "node"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	n := &Node{b: b, cfg: cfg, state: backend.NodeKilled}
	n.AdminOps = backend.NewAdminOps(cfg.Name, n.Addr)
	backend.TrackNode(n, "")
	var err error
	for attempt := range 3 {
		n.port = cfg.Port
		if n.port == 0 {
			if n.port, err = backend.FreePort(); err != nil {
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
