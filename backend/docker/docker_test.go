package docker_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/docker"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"
)

func TestMain(m *testing.M) {
	backendtest.MainWith(m, func() {
		if shared != nil {
			_ = shared.Close()
		}
	})
}

var (
	sharedOnce sync.Once
	shared     *docker.Backend
	sharedErr  error
)

// dockerBackend returns the shared docker backend, or skips the test with
// the reason when no Docker engine (or no image) is at hand.
func dockerBackend(t *testing.T) *docker.Backend {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = docker.NewBackend(context.Background(), docker.Config{})
	})
	if sharedErr != nil {
		t.Skipf("docker backend unavailable: %v", sharedErr)
	}
	return shared
}

func dockerCluster(t *testing.T, cfg deployment.Config) *deployment.Deployment {
	cfg.Backend = dockerBackend(t)
	return backendtest.Cluster(t, cfg)
}

func TestDockerNodeKillRestartPauseResume(t *testing.T) {
	ctx := context.Background()
	c := dockerCluster(t, deployment.Config{})
	n := c.Node(0)
	if !strings.HasPrefix(n.Addr(), "127.0.0.1:") {
		t.Fatalf("container node at %s, want loopback", n.Addr())
	}
	rdb := backendtest.Client(t, c.Link(0, 0).Addr())
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET through the proxy to the container: %v", err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	backendtest.Eventually(t, 5*time.Second, "node answers after restart", func() bool {
		return rdb.Ping(ctx).Err() == nil
	})
	if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after restart GET = %v, want empty", err)
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	slow := redis.NewClient(&redis.Options{Addr: n.Addr(), Protocol: 2, DisableIdentity: true, ReadTimeout: 5 * time.Second, MaxRetries: -1})
	defer slow.Close()
	done := make(chan error, 1)
	go func() { done <- slow.Set(ctx, "p", "v", 0).Err() }()
	select {
	case err := <-done:
		t.Fatalf("SET returned %v while the container was paused", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("SET after resume: %v", err)
	}
}

func TestDockerFailoverLosesLaggedLockKey(t *testing.T) {
	ctx := context.Background()
	c := dockerCluster(t, deployment.Config{Topology: deployment.PrimaryReplica})
	rdb := backendtest.Client(t, c.Link(0, 0).Addr())
	if err := c.ReplicationLink().Latency(netfault.Downstream, time.Second, 0); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "lock:order", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Primary().Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	backendtest.Eventually(t, 5*time.Second, "reach the promoted replica", func() bool {
		err = rdb.Get(ctx, "lock:order").Err()
		return err == nil || errors.Is(err, redis.Nil)
	})
	if !errors.Is(err, redis.Nil) {
		t.Fatalf("lock key survived a failover before replication: %v", err)
	}
	if err := c.Rejoin(ctx); err != nil {
		t.Fatalf("rejoin: %v", err)
	}
}

func TestDockerContainersGoneAfterClose(t *testing.T) {
	b := dockerBackend(t)
	n, err := b.StartNode(context.Background(), backend.NodeConfig{Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	id := n.(*docker.Node).ContainerID()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("docker", "ps", "-a", "-q", "--no-trunc", "--filter", "id="+id).Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("container %s still listed after Close", id)
	}
}

func TestDockerMissingImageSaysHowToBuildIt(t *testing.T) {
	dockerBackend(t) // skip without Docker
	_, err := docker.NewBackend(context.Background(), docker.Config{Image: "lockchaos/no-such-image:0"})
	if !errors.Is(err, docker.ErrNoImage) || errors.Is(err, backend.ErrNodeStart) ||
		!strings.Contains(err.Error(), "lockchaos/no-such-image:0 is not found locally") || !strings.Contains(err.Error(), "make redis-image") {
		t.Fatalf("err = %v", err)
	}
}

// A container node runs under the clock shim too: the offset page is a
// file the container maps through a bind mount, so a shift shows in TIME
// and expires keys early, survives a restart, and the folder is gone once
// the node is closed.
func TestDockerClockShiftExpiresKeysAndLeavesNoFile(t *testing.T) {
	b := dockerBackend(t)
	if err := b.Supports(backend.Needs{Clock: true}); err != nil {
		t.Skipf("no clock control here: %v", err)
	}
	ctx := context.Background()
	c := dockerCluster(t, deployment.Config{Node: backend.NodeConfig{Clock: true}})
	n := c.Node(0).(backend.ClockNode)
	node := c.Node(0)
	if _, err := node.Do(ctx, "SET", "lock", "me", "PX", "5000"); err != nil {
		t.Fatal(err)
	}
	if err := n.ShiftClock(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	v, err := node.Do(ctx, "TIME")
	if err != nil {
		t.Fatal(err)
	}
	parts := v.([]any)
	sec, _ := strconv.ParseInt(parts[0].(string), 10, 64)
	if ahead := time.Until(time.Unix(sec, 0)); ahead < 8*time.Second || ahead > 12*time.Second {
		t.Fatalf("after a 10s shift the container's TIME is %v ahead", ahead)
	}
	if v, _ := node.Do(ctx, "EXISTS", "lock"); v.(int64) != 0 {
		t.Fatal("a key with 5s left survived a 10s forward jump in the container")
	}
	if err := node.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := node.Do(ctx, "TIME"); err != nil || func() time.Duration {
		s, _ := strconv.ParseInt(v.([]any)[0].(string), 10, 64)
		return time.Until(time.Unix(s, 0))
	}() < 8*time.Second {
		t.Fatalf("after a restart the container is not ahead any more (%v, %v)", v, err)
	}
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockchaos-docker-clock-*", "*.clock"))
	if len(files) == 0 {
		t.Fatal("no offset file while a clock node runs")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "lockchaos-docker-clock-*", "*.clock")); len(left) != 0 {
		t.Fatalf("offset files left after close: %v", left)
	}
}

// BenchmarkDockerClockShiftTakesEffect: how soon a container node's TIME
// shows a shift (target: 10 ms), as BenchmarkClockShiftTakesEffect does
// for a process node; the page is a bind-mounted file here.
//
//	go test ./backend/docker -run '^$' -bench DockerClockShift -benchtime 200x
func BenchmarkDockerClockShiftTakesEffect(b *testing.B) {
	be, err := docker.NewBackend(context.Background(), docker.Config{})
	if err != nil {
		b.Skipf("docker backend unavailable: %v", err)
	}
	defer be.Close()
	if err := be.Supports(backend.Needs{Clock: true}); err != nil {
		b.Skip(err)
	}
	rn, err := be.StartNode(context.Background(), backend.NodeConfig{Name: "clocked", Clock: true})
	if err != nil {
		b.Fatal(err)
	}
	defer rn.Close()
	backendtest.ClockShift(b, rn.(backend.ClockNode), backendtest.Client(b, rn.Addr()))
}
