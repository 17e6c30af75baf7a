package process_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/internal/probe/probetest"
)

// TestExplicitRedisServerThatHangsIsAnError: a LOCKCHAOS_REDIS_SERVER
// that never answers --version is an error naming the variable, the
// question and the limit, and the binary dies with every child it made.
func TestExplicitRedisServerThatHangsIsAnError(t *testing.T) {
	f := probetest.Hanging(t, "redis-server", "")
	t.Setenv(process.RedisServerEnv, f.Path)
	found, err := process.FindRedisServer()
	if err != nil || found != f.Path {
		t.Fatalf("FindRedisServer = %q, %v; want %q", found, err, f.Path)
	}
	limit := probetest.Retry(f, 300*time.Millisecond, func(limit time.Duration) {
		defer process.SetVersionTimeout(limit)()
		_, err = process.RedisServerVersion(context.Background(), f.Path)
	})
	if !errors.Is(err, process.ErrRedisServerBroken) {
		t.Fatalf("error %v; want process.ErrRedisServerBroken", err)
	}
	for _, want := range []string{
		process.RedisServerEnv + "=" + f.Path + " did not answer --version within " + limit.String(),
		"unset it", "--backend docker",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	f.ChildGone(t)
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
	f := probetest.Hanging(t, "redis-server", "")
	var err error
	probetest.Retry(f, 300*time.Millisecond, func(limit time.Duration) {
		_, err = process.StartNode(context.Background(), backend.NodeConfig{Binary: f.Path, StartTimeout: limit})
	})
	if !errors.Is(err, backend.ErrNodeStart) {
		t.Fatalf("error %v; want backend.ErrNodeStart", err)
	}
	f.ChildGone(t)
}
