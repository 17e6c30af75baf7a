package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/docker"
	"github.com/lockchaos/lockchaos/backend/process"
)

// buildCLI builds the lockchaos binary, for tests that kill it.
func buildCLI(t *testing.T) string {
	t.Helper()
	return lockchaosBinary(t)
}

// lockchaosKeys is every key under lockchaos: with its PTTL (SCAN).
func lockchaosKeys(t *testing.T, rdb *redis.Client) map[string]time.Duration {
	t.Helper()
	ctx := context.Background()
	out := map[string]time.Duration{}
	iter := rdb.Scan(ctx, 0, "lockchaos:*", 1000).Iterator()
	for iter.Next(ctx) {
		out[iter.Val()] = rdb.PTTL(ctx, iter.Val()).Val()
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A run on someone's Redis killed outright (SIGKILL) deletes nothing: what
// it left must expire on its own, and the next run sweeps it. The server
// (started here by the process backend, as a user's own: the harness only
// gets its address) keeps the user's key "app:x" untouched throughout.
// Before: "lockchaos:<seed>:order:1:fence" stayed with PTTL -1, never
// swept.
func TestExternalRunKilledLeavesKeysThatExpireAndTheNextRunSweeps(t *testing.T) {
	ctx := context.Background()
	bin := buildCLI(t)
	srv, err := process.Backend{}.StartNode(ctx, backend.NodeConfig{Name: "users"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if err := rdb.Set(ctx, "app:x", "precious", 0).Err(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"run", "--backend", "external", "--redis-addr", srv.Addr(),
			"--scenario", "baseline", "--out", t.TempDir()}, args...)...)
		cmd.Env = append(os.Environ(), "CI=true")
		return cmd
	}
	killed := run("--lock", "fenced", "--duration", "60s")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once the cell has written both its claim and a fence counter
	// (polled, not after a fixed wait): the keys the checks below are about.
	deadline := time.Now().Add(60 * time.Second)
	for keys := lockchaosKeys(t, rdb); !hasKeySuffix(keys, ":fence") || !hasKeySuffix(keys, ":owner"); keys = lockchaosKeys(t, rdb) {
		if time.Now().After(deadline) {
			_ = killed.Process.Kill()
			_ = killed.Wait()
			t.Fatalf("the cell wrote no fence counter and owner marker: %v", keys)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = killed.Process.Signal(syscall.SIGKILL)
	_ = killed.Wait()

	left := lockchaosKeys(t, rdb)
	t.Logf("left by the killed run: %v", left)
	if !hasKeySuffix(left, ":owner") {
		t.Errorf("no owner marker among %v", left)
	}
	for k, ttl := range left {
		if ttl <= 0 {
			t.Errorf("%s: PTTL %v: no expiry", k, ttl)
		}
	}
	next := run("--lock", "token", "--duration", "300ms")
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if left := lockchaosKeys(t, rdb); len(left) != 0 {
		t.Errorf("after the next run: %v", left)
	}
	if v, ttl := rdb.Get(ctx, "app:x").Val(), rdb.PTTL(ctx, "app:x").Val(); v != "precious" || ttl != -1 {
		t.Errorf("the user's key app:x: %q, PTTL %v: touched", v, ttl)
	}
}

func hasKeySuffix(keys map[string]time.Duration, suffix string) bool {
	for k := range keys {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// Containers of a lockchaos run killed outright keep running on the host
// network; every run sweeps them, a process-backend run too. Before, only
// the next docker-backend run did.
func TestProcessRunSweepsContainersOfKilledRuns(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("no Docker engine answers (docker info: %v)", err)
	}
	if err := exec.Command("docker", "image", "inspect", docker.DefaultRedisImage).Run(); err != nil {
		t.Skipf("no %s image (make redis-image): %v", docker.DefaultRedisImage, err)
	}
	// Owned by our pid with another start time: a process that is gone
	// (its pid reused), on this machine.
	id := labelledContainer(t, fmt.Sprintf("%d/0", os.Getpid()), backend.PIDSpace())
	// Another pid namespace's (a harness in another container sharing
	// the engine): never ours to remove, whatever its pid.
	other := labelledContainer(t, fmt.Sprintf("%d/0", os.Getpid()), "elsewhere/pid:[1]")
	code, stdout, stderr := runCLI("run", "--backend", "process", "--scenario", "baseline", "--lock", "token",
		"--duration", "300ms", "--out", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if containerExists(t, id) {
		t.Fatalf("the killed run's container %s is still there after a process-backend run", id)
	}
	if !containerExists(t, other) {
		t.Fatalf("another pid namespace's container %s was removed", other)
	}
	// Said only by the sweeper that removed it: another package's tests,
	// run alongside, sweep too.
	if !regexp.MustCompile(`lockchaos: removed [1-9]\d* container\(s\) left by lockchaos runs that were killed`).MatchString(stderr) {
		t.Logf("this run did not say it removed a container (another sweeper was first?):\n%s", stderr)
	}
}

// labelledContainer starts a container labelled as the docker backend
// labels its nodes, on no network, and returns its id.
func labelledContainer(t *testing.T, owner, space string) string {
	t.Helper()
	out, err := exec.Command("docker", "run", "-d", "--network", "none", "--label", "org.lockchaos.managed=true",
		"--label", "org.lockchaos.owner="+owner, "--label", "org.lockchaos.pidspace="+space,
		docker.DefaultRedisImage).Output()
	if err != nil {
		t.Fatalf("docker run: %v", err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

func containerExists(t *testing.T, id string) bool {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "-q", "--no-trunc", "--filter", "id="+id).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.TrimSpace(string(out)) != ""
}

// The sweep needs no docker backend, and costs a machine without an
// engine next to nothing.
func TestContainerSweepWithoutAnEngineIsQuick(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock"))
	start := time.Now()
	n, err := docker.SweepLeftovers(context.Background(), dockerAnswer)
	took := time.Since(start)
	if n != 0 || !errors.Is(err, docker.ErrNoEngine) {
		t.Fatalf("SweepLeftovers = %d, %v; want 0, ErrNoEngine", n, err)
	}
	if took > 100*time.Millisecond {
		t.Fatalf("the sweep took %v without an engine", took)
	}
	t.Logf("without an engine: %v", took)
}

// Each way a backend cannot get Redis says what is wrong and what to do,
// with exit 3 (the harness could not run).
func TestBackendSetupErrorsSayWhatIsWrong(t *testing.T) {
	code, _, stderr := runCLI("run", "--backend", "external", "--redis-addr", "127.0.0.1:1", "--scenario", "baseline",
		"--lock", "token", "--out", t.TempDir())
	want := "lockchaos run: external: redis 127.0.0.1:1 does not answer PING: "
	if code != exitHarness || !strings.Contains(stderr, want) || !strings.Contains(stderr, "check --redis-addr") ||
		strings.Contains(stderr, "did not start") {
		t.Errorf("unreachable external: exit %d, stderr %q; want %d and %q", code, stderr, exitHarness, want)
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("no Docker engine answers (docker info: %v)", err)
	}
	code, _, stderr = runCLI("run", "--backend", "docker", "--redis-image", "lockchaos/no-such-image:0", "--scenario", "baseline",
		"--lock", "token", "--out", t.TempDir())
	want = "lockchaos run: docker: no Redis image: lockchaos/no-such-image:0 is not found locally and "
	if code != exitHarness || !strings.Contains(stderr, want) || !strings.Contains(stderr, "make redis-image") ||
		!strings.Contains(stderr, "--redis-image") || strings.Contains(stderr, "did not start") {
		t.Errorf("missing image: exit %d, stderr %q; want %d and %q", code, stderr, exitHarness, want)
	}
}
