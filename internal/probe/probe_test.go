package probe_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/internal/probe"
	"github.com/lockchaos/lockchaos/internal/probe/probetest"
)

// TestProgramThatHangsIsKilledWithItsChildren: a fake redis-server that
// never answers --version (and started a child) is killed at its limit,
// child and all, and the error says who did not answer what in how long.
func TestProgramThatHangsIsKilledWithItsChildren(t *testing.T) {
	f := probetest.Hanging(t, "redis-server", "")
	var err error
	limit := probetest.Retry(f, 300*time.Millisecond, func(limit time.Duration) {
		_, err = probe.Output(context.Background(), limit, "LOCKCHAOS_REDIS_SERVER="+f.Path, f.Path, "--version")
	})
	if !errors.Is(err, probe.ErrTimeout) {
		t.Fatalf("error %v; want probe.ErrTimeout", err)
	}
	want := "LOCKCHAOS_REDIS_SERVER=" + f.Path + " did not answer --version within " + limit.String()
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q; want it to say %q", err, want)
	}
	f.ChildGone(t)
}

// TestCancelEndsTheProgram: the caller's context (a SIGINT, in the CLI)
// ends a probe long before its limit, child and all.
func TestCancelEndsTheProgram(t *testing.T) {
	f := probetest.Hanging(t, "redis-server", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() {
		_, err := probe.Output(ctx, time.Hour, f.Path, f.Path, "--version")
		got <- err
	}()
	f.Child(t) // the probe is running
	cancel()
	err := <-got
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("error %v; want context.Canceled, said as an interruption", err)
	}
	f.ChildGone(t)
}

// TestAnswerKeptAndBackgroundChildKilled: a program that answers and
// exits gives its output; what it left running in the background dies.
func TestAnswerKeptAndBackgroundChildKilled(t *testing.T) {
	f := probetest.Hanging(t, "redis-server", "echo 'Redis server v=7.0.15 sha=0'")
	out, err := probe.Output(context.Background(), time.Minute, f.Path, f.Path, "--version")
	if err != nil || !strings.Contains(string(out), "v=7.0.15") {
		t.Fatalf("output %q, error %v; want the version line", out, err)
	}
	f.ChildGone(t)
}

// TestFailureQuotesWhatItSaid: a program that exits non-zero gives an
// error with its exit status and what it wrote on stderr.
func TestFailureQuotesWhatItSaid(t *testing.T) {
	f := probetest.Hanging(t, "redis-server", "echo 'libssl.so.3: cannot open shared object file' >&2; exit 127")
	_, err := probe.Output(context.Background(), time.Minute, f.Path, f.Path, "--version")
	if err == nil || !strings.Contains(err.Error(), "exit status 127: libssl.so.3: cannot open shared object file") {
		t.Fatalf("error %v; want the exit status and the stderr", err)
	}
	out, err := probe.CombinedOutput(context.Background(), time.Minute, f.Path, f.Path, "--version")
	if err == nil || !strings.Contains(string(out), "libssl.so.3") {
		t.Fatalf("combined output %q, error %v; want the stderr in the output", out, err)
	}
	f.ChildGone(t)
}

// TestMissingProgram: a program that cannot start is an error naming it.
func TestMissingProgram(t *testing.T) {
	_, err := probe.Output(context.Background(), time.Minute, "CC=/nonexistent/cc", "/nonexistent/cc", "--version")
	if err == nil || !strings.Contains(err.Error(), "CC=/nonexistent/cc --version: ") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v; want one naming CC=/nonexistent/cc that is os.ErrNotExist", err)
	}
}
