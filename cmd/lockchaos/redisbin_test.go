package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
)

// Issue 33, point 1: a LOCKCHAOS_REDIS_SERVER that is no program, or one
// that hangs on --version.

// TestExplicitRedisServerMissingIsAnError: --backend auto with
// LOCKCHAOS_REDIS_SERVER naming nothing exits 3 naming the variable and
// what to do; it does not fall back to Docker. Before: the docker backend
// was tried (and used, where an image was at hand).
func TestExplicitRedisServerMissingIsAnError(t *testing.T) {
	t.Setenv(process.RedisServerEnv, "/nonexistent")
	code, _, stderr := runCLI("run", "--scenario", "baseline", "--lock", "token", "--out", t.TempDir())
	if code != exitHarness || strings.Contains(stderr, "docker backend:") ||
		!strings.Contains(stderr, process.RedisServerEnv+`="/nonexistent"`) || !strings.Contains(stderr, "unset it") {
		t.Fatalf("exit %d, %q; want %d naming %s and what to do, without trying Docker", code, stderr, exitHarness, process.RedisServerEnv)
	}
}

// TestInterruptWhileRedisServerHangsOnVersion: SIGINT while a
// LOCKCHAOS_REDIS_SERVER that never answers --version is being asked ends
// the run at once with 130, and the fake's child is gone with it. Before:
// the signal was not heard and the fake and its child stayed.
func TestInterruptWhileRedisServerHangsOnVersion(t *testing.T) {
	bin := buildCLI(t)
	dir := t.TempDir()
	fake, pidFile := filepath.Join(dir, "redis-server"), filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\nsleep 86403 &\necho $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "\nsleep 86400\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--scenario", "baseline", "--lock", "token", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), process.RedisServerEnv+"="+fake)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := 0
	for range 3000 { // the fake is being asked once its child runs
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the fake redis-server was never asked: %s", stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "interrupted (SIGINT)") {
		t.Errorf("exit %d, %q; want 130, saying it was interrupted", code, stderr.String())
	}
	for range 500 {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))[0] == "Z" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(child, syscall.SIGKILL)
	t.Fatalf("the fake redis-server's child %d outlived the run", child)
}
