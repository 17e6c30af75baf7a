package probe_test

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

	"github.com/lockchaos/lockchaos/internal/probe"
)

// fake writes a script that starts a child (a sleep whose pid it writes
// to a file), then does what body says; it returns the script and the
// child's pid file.
func fake(t *testing.T, body string) (script, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	script, pidFile = filepath.Join(dir, "redis-server"), filepath.Join(dir, "child.pid")
	text := "#!/bin/sh\nsleep 86401 &\necho $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "\n" + body + "\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, pidFile
}

// childPid waits for the script to have written its child's pid.
func childPid(t *testing.T, pidFile string) int {
	t.Helper()
	for range 500 {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the fake never wrote %s", pidFile)
	return 0
}

// dead waits until pid has ended (gone, or a zombie nobody reaps), and
// fails the test if it still runs after a while: SIGKILL is delivered
// when the kernel next schedules the process, not at once.
func dead(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if s := string(b); strings.HasPrefix(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0], "Z") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the probe's child %d is still alive", pid)
}

// TestProgramThatHangsIsKilledWithItsChildren: a fake redis-server that
// never answers --version (and started a child) is killed at its limit,
// child and all, and the error says who did not answer what in how long.
func TestProgramThatHangsIsKilledWithItsChildren(t *testing.T) {
	script, pidFile := fake(t, "sleep 86400")
	// The limit must leave the script time to start its child: on a
	// loaded machine a shell can take a while, so a limit that passed
	// first is tried again, longer.
	var err error
	limit := 300 * time.Millisecond
	for ; limit < time.Minute; limit *= 4 {
		_, err = probe.Output(context.Background(), limit, "LOCKCHAOS_REDIS_SERVER="+script, script, "--version")
		if _, started := os.Stat(pidFile); started == nil {
			break
		}
	}
	if !errors.Is(err, probe.ErrTimeout) {
		t.Fatalf("error %v; want probe.ErrTimeout", err)
	}
	want := "LOCKCHAOS_REDIS_SERVER=" + script + " did not answer --version within " + limit.String()
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q; want it to say %q", err, want)
	}
	dead(t, childPid(t, pidFile))
}

// TestCancelEndsTheProgram: the caller's context (a SIGINT, in the CLI)
// ends a probe long before its limit, child and all.
func TestCancelEndsTheProgram(t *testing.T) {
	script, pidFile := fake(t, "sleep 86400")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct{ err error }
	got := make(chan result, 1)
	go func() {
		_, err := probe.Output(ctx, time.Hour, script, script, "--version")
		got <- result{err}
	}()
	child := childPid(t, pidFile) // the probe is running
	cancel()
	r := <-got
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "interrupted") {
		t.Fatalf("error %v; want context.Canceled, said as an interruption", r.err)
	}
	dead(t, child)
}

// TestAnswerKeptAndBackgroundChildKilled: a program that answers and
// exits gives its output; what it left running in the background dies.
func TestAnswerKeptAndBackgroundChildKilled(t *testing.T) {
	script, pidFile := fake(t, "echo 'Redis server v=7.0.15 sha=0'")
	out, err := probe.Output(context.Background(), time.Minute, script, script, "--version")
	if err != nil || !strings.Contains(string(out), "v=7.0.15") {
		t.Fatalf("output %q, error %v; want the version line", out, err)
	}
	dead(t, childPid(t, pidFile))
}

// TestFailureQuotesWhatItSaid: a program that exits non-zero gives an
// error with its exit status and what it wrote on stderr.
func TestFailureQuotesWhatItSaid(t *testing.T) {
	script, _ := fake(t, "echo 'libssl.so.3: cannot open shared object file' >&2; exit 127")
	_, err := probe.Output(context.Background(), time.Minute, script, script, "--version")
	if err == nil || !strings.Contains(err.Error(), "exit status 127: libssl.so.3: cannot open shared object file") {
		t.Fatalf("error %v; want the exit status and the stderr", err)
	}
	out, err := probe.CombinedOutput(context.Background(), time.Minute, script, script, "--version")
	if err == nil || !strings.Contains(string(out), "libssl.so.3") {
		t.Fatalf("combined output %q, error %v; want the stderr in the output", out, err)
	}
}

// TestMissingProgram: a program that cannot start is an error naming it.
func TestMissingProgram(t *testing.T) {
	_, err := probe.Output(context.Background(), time.Minute, "CC=/nonexistent/cc", "/nonexistent/cc", "--version")
	if err == nil || !strings.Contains(err.Error(), "CC=/nonexistent/cc --version: ") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v; want one naming CC=/nonexistent/cc that is os.ErrNotExist", err)
	}
}
