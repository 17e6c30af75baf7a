package process_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

func startNode(t *testing.T, cfg backend.NodeConfig) *process.Node {
	t.Helper()
	n, err := process.StartNode(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func TestNodeStartsOnLoopbackWithoutPersistence(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "plain"})
	if !strings.HasPrefix(n.Addr(), "127.0.0.1:") {
		t.Fatalf("addr %q is not loopback", n.Addr())
	}
	v, err := n.Do(context.Background(), "CONFIG", "GET", "appendonly")
	if err != nil {
		t.Fatal(err)
	}
	if got := v.([]any); len(got) != 2 || got[1] != "no" {
		t.Fatalf("appendonly = %v, want no", got)
	}
	if n.State() != backend.NodeRunning || n.PID() == 0 {
		t.Fatalf("state %v pid %d", n.State(), n.PID())
	}
}

func TestKilledNodeRestartsEmptyOnSamePort(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, backend.NodeConfig{})
	rdb := backendtest.Client(t, n.Addr())
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	addr := n.Addr()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered by a killed node")
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n.Addr() != addr {
		t.Fatalf("restart moved the node from %s to %s", addr, n.Addr())
	}
	if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after restart GET k = %v, want redis.Nil (empty)", err)
	}
}

func TestPersistentNodeRestartsFromAOF(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, backend.NodeConfig{Persistence: true})
	rdb := backendtest.Client(t, n.Addr())
	if err := rdb.Set(ctx, "k", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "kept" {
		t.Fatalf("after restart GET k = %q, %v; want kept", got, err)
	}
}

func TestPausedNodeStallsCallsAndResumeReleasesThem(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, backend.NodeConfig{})
	rdb := redis.NewClient(&redis.Options{Addr: n.Addr(), Protocol: 2, DisableIdentity: true, ReadTimeout: 5 * time.Second, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- rdb.Set(ctx, "k", "v", 0).Err() }()
	select {
	case err := <-done:
		t.Fatalf("SET returned %v while the node was paused", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SET after resume: %v", err)
		}
		if waited := time.Since(start); waited < 300*time.Millisecond {
			t.Fatalf("SET took %v, should have stalled while paused", waited)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("SET still blocked 3s after resume")
	}
	if err := n.Resume(); !errors.Is(err, backend.ErrNodeState) {
		t.Fatalf("Resume of a running node = %v, want backend.ErrNodeState", err)
	}
}

func TestKillOfPausedNodeWorks(t *testing.T) {
	n := startNode(t, backend.NodeConfig{})
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.State() != backend.NodeKilled || n.PID() != 0 {
		t.Fatalf("state %v pid %d after kill", n.State(), n.PID())
	}
}

func TestCloseRemovesProcessAndDir(t *testing.T) {
	n := startNode(t, backend.NodeConfig{})
	pid, dir := n.PID(), n.Dir()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there: %v", dir, err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		t.Fatalf("pid %d still alive: %s", pid, st)
	}
	if err := n.Restart(context.Background()); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("Restart after Close = %v, want backend.ErrClosed", err)
	}
}

func TestMissingRedisServerSaysHowToInstall(t *testing.T) {
	t.Setenv(process.RedisServerEnv, "/nonexistent/redis-server")
	_, err := process.StartNode(context.Background(), backend.NodeConfig{})
	if !errors.Is(err, process.ErrNoRedisServer) {
		t.Fatalf("err = %v, want ErrNoRedisServer", err)
	}
	for _, want := range []string{"apt-get install redis-server", "brew install redis", "Docker", process.RedisServerEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRedisServerThatWillNotStartShowsItsLog(t *testing.T) {
	_, err := process.StartNode(context.Background(), backend.NodeConfig{ExtraArgs: []string{"--no-such-option", "1"}})
	if !errors.Is(err, backend.ErrNodeStart) {
		t.Fatalf("err = %v, want backend.ErrNodeStart", err)
	}
	if !strings.Contains(err.Error(), "no-such-option") {
		t.Fatalf("error does not quote redis-server's complaint: %v", err)
	}
}

func TestNodeConfigValidate(t *testing.T) {
	for _, cfg := range []backend.NodeConfig{{Port: -1}, {Port: 70000}, {StartTimeout: -time.Second}} {
		if err := cfg.Validate(); !errors.Is(err, backend.ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v, want backend.ErrInvalidConfig", cfg, err)
		}
	}
}

// TestNodeOnATakenPortRefusesTheStrangerThatAnswers: a port another
// redis-server already serves answers PING before the new node's own
// server exits with "Address already in use"; the start must fail as a
// port clash (which StartNode retries on a fresh port when it picked the
// port), never hand back a node that drives the other server.
func TestNodeOnATakenPortRefusesTheStrangerThatAnswers(t *testing.T) {
	stranger := startNode(t, backend.NodeConfig{Name: "stranger"})
	if _, err := stranger.Do(context.Background(), "SET", "whose", "stranger's"); err != nil {
		t.Fatal(err)
	}
	n, err := process.StartNode(context.Background(), backend.NodeConfig{Name: "late", Port: stranger.Port()})
	if err == nil {
		_ = n.Close()
		t.Fatalf("a node on %s's port started; it answers with the stranger's data", stranger.Name())
	}
	if !errors.Is(err, backend.ErrNodeStart) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want a start error naming the port clash", err)
	}
	// Free port picked by the node itself: it starts, on a port of its own.
	own := startNode(t, backend.NodeConfig{Name: "own"})
	if own.Port() == stranger.Port() {
		t.Fatal("two nodes on one port")
	}
	if v, err := stranger.Do(context.Background(), "GET", "whose"); err != nil || v != "stranger's" {
		t.Fatalf("the stranger lost its data: %v %v", v, err)
	}
}
