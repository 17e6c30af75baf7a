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
	"time"

	"github.com/moby/moby/client"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service"
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
	labelOwner   = "org.lockchaos.owner" // "pid/starttime" of the harness process (backend.ProcessID)
	// labelPIDSpace is where the owner's pid means something (backend.PIDSpace).
	labelPIDSpace = "org.lockchaos.pidspace"
	ryukEnv       = "TESTCONTAINERS_RYUK_DISABLED"
	reaperImage   = "testcontainers/ryuk:0.14.0"
)

// Sentinel errors.
var (
	// ErrNoEngine means no Docker engine answered.
	ErrNoEngine = errors.New("docker: no Docker engine answers")
	// ErrNoImage means the Redis image is neither on this machine nor
	// pulled from a registry; the wrapping error says which image and
	// whether any registry answered.
	ErrNoImage = errors.New("docker: no Redis image")
)

// Config configures the docker backend.
type Config struct {
	// Image to run. Default DefaultRedisImage, else FallbackRedisImage.
	// A missing image is pulled once if a registry answers; where none
	// does, build one with `make redis-image`.
	Image string
	// PostgresImage is the image PostgreSQL nodes run. Default
	// DefaultPostgresImage; it is never pulled (see postgres.go).
	PostgresImage string
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
	pg     pgImage
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
	image, err = findImage(ctx, cli, image)
	if err != nil {
		cli.Close()
		return nil, err
	}
	b := &Backend{image: image, cli: cli, owner: backend.ProcessID(), pg: pgImage{name: cfg.PostgresImage}}
	if b.pg.name == "" {
		b.pg.name = DefaultPostgresImage
	}
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
	b.Swept, err = sweep(ctx, cli)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return b, nil
}

// findImage returns the image to run: the one asked for, else the local
// one or the official one, whichever is present, else the first a
// registry gives.
func findImage(ctx context.Context, cli *client.Client, image string) (string, error) {
	candidates := []string{image}
	if image == "" {
		candidates = []string{DefaultRedisImage, FallbackRedisImage}
	}
	for _, c := range candidates {
		if _, err := cli.ImageInspect(ctx, c); err == nil {
			return c, nil
		}
	}
	var pullErrs []error
	for _, c := range candidates {
		err := pull(ctx, cli, c)
		if err == nil {
			return c, nil
		}
		pullErrs = append(pullErrs, fmt.Errorf("pull %s: %w", c, err))
	}
	return "", noImage(candidates, errors.Join(pullErrs...))
}

// noImage says which images are missing, whether a registry answered at
// all, and the two ways on.
func noImage(candidates []string, pullErr error) error {
	what := candidates[0] + " is not"
	if len(candidates) > 1 {
		what = "neither " + strings.Join(candidates, " nor ") + " is"
	}
	registry := "no registry answers"
	if !unreachable(pullErr) {
		registry = "pulling failed"
	}
	return fmt.Errorf("%w: %s found locally and %s (%s): run `make redis-image` (builds %s from this machine's "+
		"redis-server) or pass --redis-image with an image you have", ErrNoImage, what, registry,
		strings.ReplaceAll(pullErr.Error(), "\n", "; "), DefaultRedisImage)
}

// unreachable: a pull error that says no registry could be reached (as
// opposed to one that answered without the image).
func unreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	s := err.Error()
	for _, w := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "network is unreachable",
		"TLS handshake timeout", "Client.Timeout"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
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

// SweepLeftovers removes what lockchaos processes that are gone left
// behind on this machine (their containers, which keep running on the host
// network, and clock folders), without a Backend: every run calls it,
// whatever its backend. The engine must answer a ping within answer (a
// machine without Docker costs a failed dial, a hung engine answer); no
// engine is ErrNoEngine, with nothing removed. It returns how many
// containers it removed.
func SweepLeftovers(ctx context.Context, answer time.Duration) (int, error) {
	sweepClockDirs()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoEngine, err)
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, answer)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoEngine, err)
	}
	return sweep(ctx, cli)
}

// sweep removes lockchaos containers whose owning process is gone: started
// in this pid space (backend.PIDSpace; containers from before the label
// count as this one's) by a process that no longer runs. Containers of
// harnesses in other pid namespaces (other containers sharing the engine)
// are never touched.
func sweep(ctx context.Context, cli *client.Client) (int, error) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return 0, fmt.Errorf("docker: list leftovers: %w", err)
	}
	here := backend.PIDSpace()
	n := 0
	for _, c := range res.Items {
		if space, ok := c.Labels[labelPIDSpace]; ok && space != here || backend.ProcessAlive(c.Labels[labelOwner]) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err == nil {
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
// PostgreSQL cells run on containers of DefaultPostgresImage (postgres.go).
func (b *Backend) Supports(n backend.Needs) error {
	if n.Service == service.Postgres {
		return b.supportsPostgres(n)
	}
	if err := backend.RedisOnly("docker", n, "run it on the process backend"); err != nil {
		return err
	}
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
	if cfg.Service == service.Postgres {
		return b.startPostgres(ctx, cfg)
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
