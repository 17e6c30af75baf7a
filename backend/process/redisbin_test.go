package process_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
)

// hangingRedisServer writes a fake redis-server that starts a child (a
// sleep whose pid it writes to a file) and then never answers anything.
func hangingRedisServer(t *testing.T) (bin, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	bin, pidFile = filepath.Join(dir, "redis-server"), filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\nsleep 86402 &\necho $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "\nsleep 86400\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, pidFile
}

// started reports whether the fake got as far as starting its child.
func started(pidFile string) bool {
	_, err := os.Stat(pidFile)
	return err == nil
}

// childGone fails t unless the fake's child has ended (gone, or a zombie
// nobody reaps); SIGKILL lands when the kernel next runs the process, so
// it waits a moment, and kills the child itself before failing.
func childGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake never started its child: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for range 500 {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.HasPrefix(strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))[0], "Z") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the fake redis-server's child %d outlived it", pid)
}

// TestExplicitRedisServerThatHangsIsAnError: a LOCKCHAOS_REDIS_SERVER
// that never answers --version is an error naming the variable, the
// question and the limit, and the binary dies with every child it made.
func TestExplicitRedisServerThatHangsIsAnError(t *testing.T) {
	bin, pidFile := hangingRedisServer(t)
	t.Setenv(process.RedisServerEnv, bin)
	found, err := process.FindRedisServer()
	if err != nil || found != bin {
		t.Fatalf("FindRedisServer = %q, %v; want %q", found, err, bin)
	}
	// A loaded machine may take a while to start a shell: a limit that
	// passed before the fake started its child is tried again, longer.
	limit := 300 * time.Millisecond
	for ; ; limit *= 4 {
		defer process.SetVersionTimeout(limit)()
		_, err = process.RedisServerVersion(context.Background(), bin)
		if started(pidFile) || limit > 10*time.Second {
			break
		}
	}
	if !errors.Is(err, process.ErrRedisServerBroken) {
		t.Fatalf("error %v; want process.ErrRedisServerBroken", err)
	}
	for _, want := range []string{
		process.RedisServerEnv + "=" + bin + " did not answer --version within " + limit.String(),
		"unset it", "--backend docker",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	childGone(t, pidFile)
}

// TestExplicitRedisServerThatIsNoProgram: a LOCKCHAOS_REDIS_SERVER that
// does not exist, or is not executable, is an error naming the variable
// and what to do, not a redis-server taken from somewhere else.
func TestExplicitRedisServerThatIsNoProgram(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "redis-server")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/nonexistent", notExec, t.TempDir()} {
		t.Setenv(process.RedisServerEnv, p)
		got, err := process.FindRedisServer()
		if !errors.Is(err, process.ErrNoRedisServer) || !process.ExplicitRedisServer() {
			t.Fatalf("%s=%s: FindRedisServer = %q, %v; want ErrNoRedisServer", process.RedisServerEnv, p, got, err)
		}
		for _, want := range []string{process.RedisServerEnv + `="` + p + `"`, "unset it"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
}

// TestNodeBehindAWrapperDiesWhole: a node whose binary is a wrapper
// script that never answers PING is killed at its start timeout with the
// processes the wrapper started, not only the wrapper.
func TestNodeBehindAWrapperDiesWhole(t *testing.T) {
	bin, pidFile := hangingRedisServer(t)
	timeout := 300 * time.Millisecond
	var err error
	for ; ; timeout *= 4 { // as above: the fake must get as far as its child
		_, err = process.StartNode(context.Background(), backend.NodeConfig{Binary: bin, StartTimeout: timeout})
		if started(pidFile) || timeout > 10*time.Second {
			break
		}
	}
	if !errors.Is(err, backend.ErrNodeStart) {
		t.Fatalf("error %v; want backend.ErrNodeStart", err)
	}
	childGone(t, pidFile)
}
