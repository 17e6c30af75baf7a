package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/docker"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/reports"
)

// TestExternalBackendKeepsToItsOwnKeys runs against "someone's" Redis
// servers (three processes started here): node-control scenarios are
// skipped with the reason, the rest run, the user's keys are untouched and
// none of ours remain.
func TestExternalBackendKeepsToItsOwnKeys(t *testing.T) {
	ctx := context.Background()
	bin, err := process.FindRedisServer()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 3 {
		// Started by hand, not through faults: the harness must not know
		// these servers as its own (it kills its own on exit).
		port := freeTCPPort(t)
		srv := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
		addr := "127.0.0.1:" + port
		addrs = append(addrs, addr)
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		for i := 0; rdb.Ping(ctx).Err() != nil && i < 100; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if err := rdb.Set(ctx, "users:precious", "keep me", 0).Err(); err != nil {
			t.Fatal(err)
		}
		rdb.Close()
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--backend", "external", "--redis-addr", strings.Join(addrs, ","),
		"--scenario", "baseline,gc-pause,failover", "--lock", "token", "--duration", "500ms", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	ran, skipped := 0, 0
	for _, c := range sum.Cells {
		switch c.Outcome {
		case "skipped":
			skipped++
			if c.Expect != "n/a" && !strings.Contains(c.Error, "external backend cannot") && !strings.Contains(c.Error, "which the external backend") {
				t.Errorf("%s/%s skipped without the reason: %q", c.Scenario, c.Lock, c.Error)
			}
		case "met":
			ran++
			// The rerun line finds the same servers.
			if !strings.Contains(c.Rerun, " --backend external --redis-addr "+strings.Join(addrs, ",")+" ") {
				t.Errorf("%s/%s: rerun line %q does not name the servers", c.Scenario, c.Lock, c.Rerun)
			}
		default:
			t.Errorf("%s/%s: %s", c.Scenario, c.Lock, c.Summary())
		}
	}
	if ran != 2 || skipped != 1 {
		t.Fatalf("ran %d, skipped %d; want 2 and 1", ran, skipped)
	}
	for _, a := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a, Protocol: 2, DisableIdentity: true})
		if v := rdb.Get(ctx, "users:precious").Val(); v != "keep me" {
			t.Errorf("%s: the user's key is %q", a, v)
		}
		if keys := rdb.Keys(ctx, "lockchaos:*").Val(); len(keys) != 0 {
			t.Errorf("%s: harness keys left behind: %v", a, keys)
		}
		rdb.Close()
	}
}

func freeTCPPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

func dockerAvailable(t *testing.T) {
	t.Helper()
	b, err := docker.NewBackend(context.Background(), docker.Config{})
	if err != nil {
		t.Skipf("docker backend unavailable: %v", err)
	}
	b.Close()
}

// lockchaosContainers lists the containers a harness process (pid) owns;
// pid 0 means any lockchaos container. Other test packages may run their
// own containers meanwhile, hence the owner filter.
func lockchaosContainers(t *testing.T, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=org.lockchaos.managed=true",
		"--format", `{{.ID}} {{.Label "org.lockchaos.owner"}}`).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && (pid == 0 || strings.HasPrefix(f[1], strconv.Itoa(pid)+"/")) {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// TestDockerBackendLeavesNoContainers covers a normal run, Ctrl-C, and a
// harness killed with SIGKILL whose containers the next run sweeps.
func TestDockerBackendLeavesNoContainers(t *testing.T) {
	dockerAvailable(t)
	bin := lockchaosBinary(t)
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"run", "--backend", "docker", "--out", t.TempDir()}, args...)...)
		cmd.Env = append(os.Environ(), "CI=true")
		return cmd
	}
	// 1. A normal run.
	normal := run("--scenario", "baseline", "--lock", "token", "--duration", "500ms")
	if out, err := normal.CombinedOutput(); err != nil {
		t.Fatalf("normal run: %v\n%s", err, out)
	}
	if left := lockchaosContainers(t, normal.Process.Pid); len(left) > 0 {
		t.Fatalf("after a normal run: %v", left)
	}
	// 2. Ctrl-C, and 3. SIGKILL, once containers are up.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		cmd := run("--scenario", "baseline,gc-pause", "--lock", "token", "--duration", "30s")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for len(lockchaosContainers(t, cmd.Process.Pid)) < 2 {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatal("containers did not come up")
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		_ = cmd.Process.Signal(sig)
		_ = cmd.Wait()
		if sig == syscall.SIGINT {
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("SIGINT: exit %d, want 130", code)
			}
			if left := lockchaosContainers(t, cmd.Process.Pid); len(left) > 0 {
				t.Fatalf("after Ctrl-C: %v", left)
			}
			continue
		}
		// SIGKILL leaves the containers; the next run sweeps them.
		if left := lockchaosContainers(t, cmd.Process.Pid); len(left) == 0 {
			t.Log("no containers survived SIGKILL (nothing to sweep)")
		}
		b, err := docker.NewBackend(context.Background(), docker.Config{})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if left := lockchaosContainers(t, cmd.Process.Pid); len(left) > 0 {
			t.Fatalf("after SIGKILL and the next start: %v (swept %d)", left, b.Swept)
		}
		t.Logf("the next start swept %d container(s) left by the killed run", b.Swept)
	}
}

// TestExternalPostgresCLI: lockchaos run on a user's PostgreSQL
// (--postgres-url, a role with CREATE on the database and nothing more):
// the cells run and meet their expectations, the password given in the
// URL is in no output, and a role without rights or a server that does
// not answer exits 3 with what to do.
func TestExternalPostgresCLI(t *testing.T) {
	app, norights, admin := backendtest.UserPostgres(t)
	backendtest.Exec(t, admin, "ALTER ROLE app PASSWORD 's3cret'")
	withPassword := strings.Replace(app, "postgres://app@", "postgres://app:s3cret@", 1)
	for _, c := range []struct{ url, says string }{
		{norights, "GRANT CREATE ON DATABASE"},
		{"postgres://app@127.0.0.1:" + freeTCPPort(t) + "/appdb?connect_timeout=2", "does not answer"},
	} {
		code, _, stderr := runCLI("run", "--backend", "external", "--postgres-url", c.url, "--scenario", "baseline",
			"--lock", "pg-row", "--out", t.TempDir())
		if code != exitHarness || !strings.Contains(stderr, c.says) {
			t.Errorf("%s: exit %d, %q; want %d saying %q", c.url, code, stderr, exitHarness, c.says)
		}
	}
	// Last: the run ends by killing every server this process started,
	// the user's stand-in too.
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--backend", "external", "--postgres-url", withPassword,
		"--scenario", "baseline,failover", "--lock", "pg-row-tuned", "--duration", "500ms", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum, err := reports.ReadJSON(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Cells {
		if want := map[string]string{"baseline": "met", "failover": "skipped"}[c.Scenario]; string(c.Outcome) != want {
			t.Errorf("%s/%s: %s, want %s", c.Scenario, c.Lock, c.Summary(), want)
		}
		// A rerun gives no password, so it reads PGPASSWORD (a masked one
		// would be sent as it is).
		if c.Outcome == "met" && !strings.Contains(c.Rerun, " --postgres-url '"+app+"' ") {
			t.Errorf("%s/%s: rerun line %q does not name the server without its password", c.Scenario, c.Lock, c.Rerun)
		}
	}
	if sum.PostgresVersion == "" {
		t.Errorf("no postgres_version in the summary")
	}
	_ = filepath.WalkDir(out, func(f string, d os.DirEntry, _ error) error {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "s3cret") {
			t.Errorf("%s shows the password", f)
		}
		return nil
	})
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Errorf("the output shows the password")
	}
}
