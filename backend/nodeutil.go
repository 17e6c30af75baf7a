package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Helpers every kind of node shares (process nodes in backend/process, containers in
// backend/docker): the command line, the state checks, readiness, ports.

// ServerArgs is the redis-server command line every backend uses: loopback
// only, the node's port and dir, persistence as configured
// (cfg.Persistence), then extra, then cfg.ExtraArgs. It leaves out the
// binary itself.
func ServerArgs(cfg NodeConfig, port int, dir string, extra ...string) []string {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--protected-mode", "no",
		// Without this the first full sync to a replica waits 5 s.
		"--repl-diskless-sync-delay", "0",
	}
	if cfg.Persistence {
		fsync := cfg.Fsync
		if fsync == "" {
			fsync = "always"
		}
		args = append(args, "--save", "", "--appendonly", "yes", "--appendfsync", fsync)
		if fsync == "everysec" {
			// Timestamp annotations (#TS:<unix seconds>, Redis 7) mark each
			// second in the AOF: where a power loss cuts an everysec file.
			args = append(args, "--aof-timestamp-enabled", "yes")
		}
	} else {
		args = append(args, "--save", "", "--appendonly", "no")
	}
	args = append(args, extra...)
	return append(args, cfg.ExtraArgs...)
}

// CheckKillable says whether a node named name, in state s, has a server
// to kill: not when it is already killed (false, nil: killing a killed
// node is a no-op) or closed (false and an error wrapping ErrClosed).
// Every backend's Kill starts with it, under the node's lock.
func CheckKillable(name string, s NodeState) (bool, error) {
	switch s {
	case NodeKilled:
		return false, nil
	case NodeClosed:
		return false, fmt.Errorf("node %s: %w", name, ErrClosed)
	}
	return true, nil
}

// CheckStartable says why a node named name, in state s, cannot be
// started: ErrClosed once closed, ErrNodeState unless killed. It returns
// nil for a killed node. Every backend's Start starts with it.
func CheckStartable(name string, s NodeState) error {
	switch s {
	case NodeKilled:
		return nil
	case NodeClosed:
		return fmt.Errorf("node %s: %w", name, ErrClosed)
	}
	return fmt.Errorf("node %s is %s: %w", name, s, ErrNodeState)
}

// WaitReady polls PING at addr until it answers, exited is closed (the
// server's process is gone; nil when the backend cannot tell), ctx ends,
// or timeout passes.
func WaitReady(ctx context.Context, addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := Ping(addr, 200*time.Millisecond); err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no PING answer within %v", timeout)
		}
	}
}

// Ping sends an inline PING to addr over a fresh connection and expects
// +PONG, all within timeout; a reply such as -LOADING means the node is
// not ready yet and is an error.
func Ping(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	k, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:k]), "+PONG") {
		return fmt.Errorf("unexpected reply %q", strings.TrimSpace(string(buf[:k])))
	}
	return nil
}

// FreePort returns a loopback TCP port that was free a moment ago (bound
// to 127.0.0.1:0, then closed). Someone else may take it before the server
// binds it, so a caller that picked it should retry with a fresh one.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("backend: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func Sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// LogTail returns the last k lines of the log at path, for the error of a
// server that did not start ("(no log: ...)" when it cannot be read).
func LogTail(path string, k int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, "\n")
}
