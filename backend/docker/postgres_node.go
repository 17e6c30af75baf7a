package docker

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// DefaultPostgresImage is the image PostgreSQL nodes run unless told
// otherwise: built from this machine's PostgreSQL 15 by `make
// postgres-image` (backend/docker/build-postgres-image.sh). Its
// entrypoint is postgres with service/postgres's settings on port 5432 of
// every address, its cluster made at build time (role and database
// lockchaos, trust authentication from anywhere).
const DefaultPostgresImage = "lockchaos/postgres:15-local"

// pgPort is where the server listens inside its container.
var pgPort = network.MustParsePort("5432/tcp")

// PostgresNode is a PostgreSQL server in a container of its own, its port
// published on 127.0.0.1 (a Redis node shares the host's network; a
// server that listens on 5432 whatever its node cannot). It keeps its
// container, so its data, across Kill and Start, as a process node keeps
// its folder, and its host port, so proxies in front of it need no change.
type PostgresNode struct {
	b    *Backend
	cfg  backend.NodeConfig
	port int

	mu    sync.Mutex
	state backend.NodeState
	id    string // the container, "" until created
}

var (
	_ backend.RedisNode      = (*PostgresNode)(nil)
	_ backend.ObservableNode = (*PostgresNode)(nil)
	_ backend.ResourceNode   = (*PostgresNode)(nil)
)

// startPostgres makes and starts a PostgreSQL container node; a host
// port taken between FreePort and the container's start is tried again
// with a fresh one.
func (b *Backend) startPostgres(ctx context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	if err := b.postgresImageThere(); err != nil {
		return nil, err
	}
	n := &PostgresNode{b: b, cfg: cfg, state: backend.NodeKilled}
	backend.TrackNode(n, "")
	var err error
	for attempt := range 3 {
		n.port = cfg.Port
		if n.port == 0 {
			if n.port, err = backend.FreePort(); err != nil {
				break
			}
		}
		if err = n.create(ctx); err == nil {
			if err = n.start(ctx); err == nil {
				return n, nil
			}
		}
		if cfg.Port != 0 || attempt == 2 || !portTaken(err) {
			break
		}
		_ = n.removeContainer() // the next try creates another; Close reports what stays
	}
	_ = n.Close()
	return nil, err
}

// portTaken: the engine could not publish the port (someone bound it).
func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use")
}

// create makes the node's container (not started): the image's
// entrypoint, then cfg.ExtraArgs (-c name=value, which win), port 5432
// published on 127.0.0.1:n.port, labelled for the sweep.
func (n *PostgresNode) create(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := n.b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image: n.b.pg.name,
			Cmd:   n.cfg.ExtraArgs,
			Labels: map[string]string{labelManaged: "true", labelOwner: n.b.owner,
				labelPIDSpace: backend.PIDSpace(), "org.lockchaos.node": n.cfg.Name},
			ExposedPorts: network.PortSet{pgPort: {}},
		},
		HostConfig: &container.HostConfig{
			PortBindings: network.PortMap{pgPort: {{HostIP: netip.MustParseAddr("127.0.0.1"),
				HostPort: strconv.Itoa(n.port)}}},
		},
	})
	if err != nil {
		return fmt.Errorf("%w: postgres node %s (image %s): create container: %w", backend.ErrNodeStart,
			n.cfg.Name, n.b.pg.name, err)
	}
	n.mu.Lock()
	n.id = res.ID
	n.mu.Unlock()
	return nil
}

// Name implements backend.RedisNode.
func (n *PostgresNode) Name() string { return n.cfg.Name }

// Addr implements backend.RedisNode: the published port on loopback.
func (n *PostgresNode) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// URL is the admin's connection URL, straight to the server.
func (n *PostgresNode) URL() string { return postgres.URLFor(n.Addr()) }

// State implements backend.RedisNode.
func (n *PostgresNode) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// ContainerID returns the node's container id, or "".
func (n *PostgresNode) ContainerID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.id
}

// start starts the (killed) container and waits until the server takes
// connections and has the locks' schema.
func (n *PostgresNode) start(ctx context.Context) error {
	n.mu.Lock()
	if err := backend.CheckStartable(n.cfg.Name, n.state); err != nil {
		n.mu.Unlock()
		return err
	}
	id := n.id
	n.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	if _, err := n.b.cli.ContainerStart(sctx, id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("%w: postgres node %s: start container: %w", backend.ErrNodeStart, n.cfg.Name, err)
	}
	n.mu.Lock()
	n.state = backend.NodeRunning
	n.mu.Unlock()
	if err := n.waitReady(sctx, id); err != nil {
		_ = n.Kill()
		return fmt.Errorf("%w: postgres node %s on port %d: %w; container log:\n%s", backend.ErrNodeStart,
			n.cfg.Name, n.port, err, n.logTail(id, 5))
	}
	return nil
}

// readyPoll is how often waitReady tries to connect.
const readyPoll = 10 * time.Millisecond

// waitReady connects until the server answers (Docker's proxy accepts on
// the published port before the server does, so only a connection that
// gets through counts), then creates the schema; it gives up early when
// the container has stopped.
func (n *PostgresNode) waitReady(ctx context.Context, id string) error {
	for i := 0; ; i++ {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(cctx, n.URL())
		cancel()
		if err == nil {
			_, err := conn.Exec(ctx, postgres.SchemaSQL)
			_ = conn.Close(context.Background())
			if err != nil {
				return fmt.Errorf("create the schema: %w", err)
			}
			return nil
		}
		if i%20 == 19 && !n.running(ctx, id) {
			return fmt.Errorf("the container stopped: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %v: %w (last: %w)", n.cfg.StartTimeout, ctx.Err(), err)
		case <-time.After(readyPoll):
		}
	}
}

// running asks the engine whether the container runs (true when it cannot tell).
func (n *PostgresNode) running(ctx context.Context, id string) bool {
	res, err := n.b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil || res.Container.State == nil {
		return true
	}
	return res.Container.State.Running
}

// logTail returns the last k lines of the container's output (the
// server logs to stderr), for errors.
func (n *PostgresNode) logTail(id string, k int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := n.b.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true,
		Tail: strconv.Itoa(k)})
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil && out.Len() == 0 {
		return "(no log: " + err.Error() + ")"
	}
	return strings.TrimRight(out.String(), "\n")
}

// Kill implements backend.RedisNode: SIGKILL to the container (a paused
// one too); it returns once the container has stopped, its data kept.
func (n *PostgresNode) Kill() error {
	n.mu.Lock()
	if kill, err := backend.CheckKillable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	id := n.id
	n.state = backend.NodeKilled
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	wait := n.b.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	_, err := n.b.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !strings.Contains(err.Error(), "is not running") {
		return fmt.Errorf("docker: postgres node %s: kill: %w", n.cfg.Name, err)
	}
	// A start before the engine has seen the container stop would find
	// it still running and do nothing.
	select {
	case <-wait.Result:
	case err := <-wait.Error:
		return fmt.Errorf("docker: postgres node %s: wait for the kill: %w", n.cfg.Name, err)
	}
	return nil
}

// Start implements backend.RedisNode: the same container again, its data
// and port kept; the server recovers from its WAL as after a crash.
func (n *PostgresNode) Start(ctx context.Context) error { return n.start(ctx) }

// Restart implements backend.RedisNode.
func (n *PostgresNode) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Pause implements backend.RedisNode with the cgroup freezer (docker
// pause): connections stay open and nothing answers.
func (n *PostgresNode) Pause() error {
	return n.transition(backend.NodeRunning, backend.NodePaused, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Resume implements backend.RedisNode (docker unpause).
func (n *PostgresNode) Resume() error {
	return n.transition(backend.NodePaused, backend.NodeRunning, func(ctx context.Context, id string) error {
		_, err := n.b.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		return err
	})
}

func (n *PostgresNode) transition(from, to backend.NodeState, act func(context.Context, string) error) error {
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
	if err := act(ctx, n.id); err != nil {
		return fmt.Errorf("docker: postgres node %s: %w", n.cfg.Name, err)
	}
	n.state = to
	return nil
}

// Close implements backend.RedisNode: the container and its data are
// removed. It is safe to call more than once.
func (n *PostgresNode) Close() error {
	n.mu.Lock()
	if n.state == backend.NodeClosed {
		n.mu.Unlock()
		return nil
	}
	n.state = backend.NodeClosed
	n.mu.Unlock()
	backend.UntrackNode(n)
	return n.removeContainer()
}

// removeContainer removes the node's container, if any, whatever it does.
func (n *PostgresNode) removeContainer() error {
	n.mu.Lock()
	id := n.id
	n.id = ""
	n.mu.Unlock()
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := n.b.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("docker: postgres node %s: remove container: %w", n.cfg.Name, err)
	}
	return nil
}

// ObserveKeys implements backend.ObservableNode: service/postgres's
// witness, polling who holds which lock on an admin connection to the
// published port (no proxy, so no network fault touches it).
func (n *PostgresNode) ObserveKeys(match func(key string) bool, sink func(backend.KeyChange)) (stop func()) {
	return postgres.Watch(n.Name(), n.URL(), "", n.State, match, sink)
}

// ResetResource implements backend.ResourceNode (service/postgres's reset).
func (n *PostgresNode) ResetResource(ctx context.Context, _ string) error {
	return postgres.ResetResource(ctx, n.Name(), n.URL())
}

// errNotRedis is what the Redis-only methods return.
func (n *PostgresNode) errNotRedis(what string) error {
	return fmt.Errorf("postgres node %s: %s: a PostgreSQL server does not answer Redis commands: %w",
		n.cfg.Name, what, backend.ErrUnsupported)
}

// Do is a Redis command: unsupported.
func (n *PostgresNode) Do(context.Context, ...any) (any, error) { return nil, n.errNotRedis("Do") }

// ReplicaOf is Redis replication: unsupported.
func (n *PostgresNode) ReplicaOf(context.Context, string) error { return n.errNotRedis("REPLICAOF") }

// Promote is Redis replication: unsupported.
func (n *PostgresNode) Promote(context.Context) error { return n.errNotRedis("promote") }

// ReplicationInfo is Redis's INFO replication: unsupported.
func (n *PostgresNode) ReplicationInfo(context.Context) (map[string]string, error) {
	return nil, n.errNotRedis("INFO replication")
}

// WaitLinkUp is Redis replication: unsupported.
func (n *PostgresNode) WaitLinkUp(context.Context, time.Duration) error {
	return n.errNotRedis("replication link")
}
