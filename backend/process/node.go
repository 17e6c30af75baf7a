package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/clockshim"
)

// withDefaults fills in a process node's defaults: its name, its start
// timeout and the redis-server to run.
func withDefaults(c backend.NodeConfig) (backend.NodeConfig, error) {
	if c.Name == "" {
		c.Name = "node"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = backend.DefaultStartTimeout
	}
	if c.Binary == "" {
		bin, err := FindRedisServer()
		if err != nil {
			return c, err
		}
		c.Binary = bin
	}
	return c, nil
}

// Node is one real redis-server process on a loopback port, in a temp dir
// of its own. It keeps its port across Kill and Restart, so proxies that
// point at it need no change.
type Node struct {
	backend.AdminOps
	cfg  backend.NodeConfig
	dir  string
	port int

	mu     sync.Mutex
	state  backend.NodeState
	cmd    *exec.Cmd
	exited chan struct{}    // closed when the current process has been reaped
	clock  *clockshim.Clock // with Clock: the offset, kept across restarts
}

// StartNode starts a redis-server and waits until it answers PING.
func StartNode(ctx context.Context, cfg backend.NodeConfig) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	parent, err := nodeParentDir()
	if err != nil {
		return nil, fmt.Errorf("process: node %s: temp dir: %w", cfg.Name, err)
	}
	dir, err := os.MkdirTemp(parent, "lockchaos-redis-"+backend.Sanitize(cfg.Name)+"-")
	if err != nil {
		return nil, fmt.Errorf("process: node %s: temp dir: %w", cfg.Name, err)
	}
	n := &Node{cfg: cfg, dir: dir, state: backend.NodeKilled}
	n.AdminOps = backend.NewAdminOps(cfg.Name, n.Addr)
	backend.TrackNode(n, dir)

	// A port picked by binding :0 and closing can be taken by someone else
	// before redis binds it; try a few fresh ports before giving up.
	attempts := 1
	if cfg.Port == 0 {
		attempts = 5
	}
	for i := range attempts {
		n.port = cfg.Port
		if n.port == 0 {
			if n.port, err = backend.FreePort(); err != nil {
				break
			}
		}
		err = n.start(ctx)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, errAddrInUse) || i == attempts-1 {
			break
		}
	}
	_ = n.Close()
	return nil, err
}

// Name returns the node's label.
func (n *Node) Name() string { return n.cfg.Name }

// Addr returns host:port of the node itself (not of any proxy in front of it).
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// Port returns the node's port.
func (n *Node) Port() int { return n.port }

// Dir returns the node's working directory (its log is redis.log there).
func (n *Node) Dir() string { return n.dir }

// State returns what the node is doing now.
func (n *Node) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// PID returns the process id of the running (or paused) process, or 0.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil || (n.state != backend.NodeRunning && n.state != backend.NodePaused) {
		return 0
	}
	return n.cmd.Process.Pid
}

var errAddrInUse = errors.New("address already in use")

func (n *Node) args() []string {
	args := backend.ServerArgs(n.cfg, n.port, n.dir, "--daemonize", "no", "--logfile", "")
	if n.cfg.SentinelConf != "" {
		// The config file must come first; Sentinel mode after it.
		args = append([]string{n.sentinelConfPath(), "--sentinel"}, args...)
	}
	return args
}

func (n *Node) sentinelConfPath() string { return filepath.Join(n.dir, "sentinel.conf") }

func (n *Node) start(ctx context.Context) error {
	n.mu.Lock()
	if err := backend.CheckStartable(n.cfg.Name, n.state); err != nil {
		n.mu.Unlock()
		return err
	}
	if err := n.prepareDir(); err != nil {
		n.mu.Unlock()
		return err
	}
	cmd, logf, err := n.command()
	if err != nil {
		n.mu.Unlock()
		return err
	}
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		logf.Close()
		return fmt.Errorf("%w: node %s: %w", backend.ErrNodeStart, n.cfg.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	n.cmd, n.exited, n.state = cmd, exited, backend.NodeRunning
	n.mu.Unlock()

	err = backend.WaitReady(ctx, n.Addr(), exited, n.cfg.StartTimeout)
	if err == nil && !n.answersItself(ctx, cmd.Process.Pid) {
		err = fmt.Errorf("%w: another server answers on port %d", errAddrInUse, n.port)
	}
	if err != nil {
		_ = n.Kill()
		tail := n.logTail(5)
		if strings.Contains(tail, "Address already in use") && !errors.Is(err, errAddrInUse) {
			err = errAddrInUse
		}
		return fmt.Errorf("%w: node %s on port %d: %w; log %s:\n%s", backend.ErrNodeStart, n.cfg.Name, n.port, err, n.logPath(), tail)
	}
	if n.cfg.Clock {
		if err := backend.CheckClockMoves(ctx, n); err != nil {
			_ = n.Kill()
			return err
		}
	}
	return nil
}

// answersItself reports whether the server that answered PING on the
// node's port is the one this node started (a process of its group). A
// port picked free can be taken by another cell's redis-server before ours
// binds it; that one then answers while ours exits with "Address already
// in use", and the harness drove a stranger: a cluster cell formed with
// another cell's node ("CLUSTER SET-CONFIG-EPOCH: ERR Node config epoch is
// already non-zero"). When it cannot tell (no INFO, no /proc), it trusts
// the PING, as before.
func (n *Node) answersItself(ctx context.Context, group int) bool {
	v, err := n.Do(ctx, "INFO", "server")
	if err != nil {
		return true
	}
	info, _ := v.(string)
	pid := 0
	for _, line := range strings.Split(info, "\n") {
		if val, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, _ = strconv.Atoi(val)
		}
	}
	pgrp, ok := backend.ProcessGroup(pid)
	return !ok || pgrp == group
}

// prepareDir readies the node's directory for a start; n.mu is held.
func (n *Node) prepareDir() error {
	if !n.cfg.Persistence {
		// A replica keeps the RDB it received from its primary as dump.rdb,
		// and redis-server loads dump.rdb at start even with --save "".
		// Remove it so that a restart really comes back empty.
		_ = os.Remove(filepath.Join(n.dir, "dump.rdb"))
	}
	if n.cfg.SentinelConf != "" {
		if _, err := os.Stat(n.sentinelConfPath()); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(n.sentinelConfPath(), []byte(n.cfg.SentinelConf), 0o644); err != nil {
				return fmt.Errorf("process: sentinel %s: config: %w", n.cfg.Name, err)
			}
		}
	}
	return nil
}

// command builds the redis-server command for a start, its output going
// to the node's log file (returned open); n.mu is held.
func (n *Node) command() (*exec.Cmd, *os.File, error) {
	logf, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("process: node %s: log file: %w", n.cfg.Name, err)
	}
	cmd := exec.Command(n.cfg.Binary, n.args()...)
	cmd.Dir = n.dir
	if n.cfg.Clock {
		if n.clock == nil {
			if n.clock, err = clockshim.NewClock(n.cfg.Name); err != nil {
				logf.Close()
				return nil, nil, err
			}
		}
		if err := n.clock.Preload(cmd); err != nil {
			logf.Close()
			return nil, nil, err
		}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a Ctrl-C at the terminal reaches the harness,
		// which then kills the nodes itself, in order.
		Setpgid: true,
		// If the harness dies without cleaning up (SIGKILL, crash), the
		// kernel kills redis-server too.
		Pdeathsig: syscall.SIGKILL,
	}
	return cmd, logf, nil
}

// Kill sends SIGKILL (a paused node dies too) and waits until it is reaped.
// Killing a killed node is a no-op.
func (n *Node) Kill() error {
	n.mu.Lock()
	if kill, err := backend.CheckKillable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	cmd, exited := n.cmd, n.exited
	n.state = backend.NodeKilled
	n.mu.Unlock()
	// The whole group (the node leads its own): a redis-server behind a
	// wrapper script, or a fork saving in the background, dies with it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return nil
}

// Restart kills the node if it runs and starts it again on the same port:
// empty, or from its append-only file when Persistence is on.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Start starts a killed node again (same as Restart on a killed node).
func (n *Node) Start(ctx context.Context) error { return n.start(ctx) }

// Pause stops the process with SIGSTOP: connections stay open, nothing is
// answered, exactly like a node stuck in a long fork or a VM freeze.
func (n *Node) Pause() error {
	return n.signal(backend.NodeRunning, backend.NodePaused, syscall.SIGSTOP)
}

// Resume continues a paused node with SIGCONT.
func (n *Node) Resume() error {
	return n.signal(backend.NodePaused, backend.NodeRunning, syscall.SIGCONT)
}

func (n *Node) signal(from, to backend.NodeState, sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == backend.NodeClosed {
		return fmt.Errorf("node %s: %w", n.cfg.Name, backend.ErrClosed)
	}
	if n.state != from {
		return fmt.Errorf("node %s is %s, want %s: %w", n.cfg.Name, n.state, from, backend.ErrNodeState)
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("process: node %s: %v: %w", n.cfg.Name, sig, err)
	}
	n.state = to
	return nil
}

// Close kills the process and removes the node's temp dir. It is safe to
// call more than once.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.state == backend.NodeClosed {
		n.mu.Unlock()
		return nil
	}
	n.mu.Unlock()
	_ = n.Kill()
	n.mu.Lock()
	n.state = backend.NodeClosed
	n.mu.Unlock()
	backend.UntrackNode(n)
	n.mu.Lock()
	if n.clock != nil {
		n.clock.Close()
		n.clock = nil
	}
	n.mu.Unlock()
	if err := os.RemoveAll(n.dir); err != nil {
		return fmt.Errorf("process: node %s: remove %s: %w", n.cfg.Name, n.dir, err)
	}
	return nil
}

func (n *Node) logPath() string { return filepath.Join(n.dir, "redis.log") }

// logTail returns the last k lines of the node's log, for error messages.
func (n *Node) logTail(k int) string {
	return backend.LogTail(n.logPath(), k)
}
