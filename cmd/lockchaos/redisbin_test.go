package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/internal/probe/probetest"
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
	f := probetest.Hanging(t, "redis-server", "")
	cmd := exec.Command(bin, "run", "--scenario", "baseline", "--lock", "token", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), process.RedisServerEnv+"="+f.Path)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	f.Child(t) // the fake is being asked
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "interrupted (SIGINT)") {
		t.Errorf("exit %d, %q; want 130, saying it was interrupted", code, stderr.String())
	}
	f.ChildGone(t)
}
