package etcd

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
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// Node is one etcd member: one process on two loopback ports (clients,
// peers), its data in a folder of its own. It keeps its ports and its
// data across Kill and Start, so it rejoins its cluster as itself and the
// proxies in front of it need no change.
type Node struct {
	cfg        backend.NodeConfig
	bin        string
	dir        string
	port, peer int

	mu     sync.Mutex
	state  backend.NodeState
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start makes a member and starts its process. It waits only until the
// member listens for clients: a member of a new cluster answers nothing
// until a majority of its peers are up, which is the deployment's to
// wait for (WaitHealthy). cfg.ExtraArgs carry the cluster's shape
// (--initial-cluster, --initial-advertise-peer-urls, the token) and the
// lock's settings, after lockchaos's own, so they win.
func Start(ctx context.Context, cfg backend.NodeConfig) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "member"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = backend.DefaultStartTimeout
	}
	bin, err := Find()
	if cfg.Binary != "" {
		bin = cfg.Binary
	}
	if err != nil && cfg.Binary == "" {
		return nil, err
	}
	parent, err := parentDir()
	if err != nil {
		return nil, fmt.Errorf("etcd: member %s: run folder: %w", cfg.Name, err)
	}
	dir, err := os.MkdirTemp(parent, "etcd-"+backend.Sanitize(cfg.Name)+"-")
	if err != nil {
		return nil, fmt.Errorf("etcd: member %s: folder: %w", cfg.Name, err)
	}
	n := &Node{cfg: cfg, bin: bin, dir: dir, state: backend.NodeKilled}
	backend.TrackNode(n, dir)
	// Ports picked by binding :0 and closing can be taken before etcd
	// binds them: a few fresh pairs.
	for i := range 5 {
		if n.port, err = backend.FreePort(); err == nil {
			n.peer, err = backend.FreePort()
		}
		if err == nil {
			err = n.start(ctx)
		}
		if err == nil || !errors.Is(err, errAddrInUse) || i == 4 {
			break
		}
		_ = os.RemoveAll(n.dataDir())
	}
	if err != nil {
		_ = n.Close()
		return nil, err
	}
	return n, nil
}

var errAddrInUse = errors.New("address already in use")

// Name returns the member's name (its --name in the cluster).
func (n *Node) Name() string { return n.cfg.Name }

// Addr returns host:port of the member's client port (not of any proxy).
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// PeerAddr returns host:port the member listens on for its peers.
func (n *Node) PeerAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.peer)) }

// Dir returns the member's folder.
func (n *Node) Dir() string { return n.dir }

// LogPath returns the member's log file.
func (n *Node) LogPath() string { return filepath.Join(n.dir, "etcd.log") }

func (n *Node) dataDir() string { return filepath.Join(n.dir, "data") }

// State returns what the member is doing now.
func (n *Node) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// PID returns the process id while it runs (or is paused), or 0.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || (n.state != backend.NodeRunning && n.state != backend.NodePaused) {
		return 0
	}
	return n.cmd.Process.Pid
}

// args is the member's command line: where it listens and keeps its
// data, then cfg.ExtraArgs.
func (n *Node) args() []string {
	client := "http://" + n.Addr()
	return append([]string{
		"--name", n.cfg.Name, "--data-dir", n.dataDir(),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", "http://" + n.PeerAddr(),
		"--log-level", "warn", "--logger", "zap", "--log-outputs", "stderr",
		// No snapshot to disk in a cell's life. (v2 is off by default
		// since 3.4, and its flags are gone in 3.6.)
		"--snapshot-count", "1000000",
	}, n.cfg.ExtraArgs...)
}

func (n *Node) start(ctx context.Context) error {
	n.mu.Lock()
	if err := backend.CheckStartable(n.cfg.Name, n.state); err != nil {
		n.mu.Unlock()
		return err
	}
	logf, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("etcd: member %s: log file: %w", n.cfg.Name, err)
	}
	cmd := exec.Command(n.bin, n.args()...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.dir, logf, logf
	cmd.Env = memberEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		logf.Close()
		return fmt.Errorf("%w: etcd member %s: %w", backend.ErrNodeStart, n.cfg.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	n.cmd, n.exited, n.state = cmd, exited, backend.NodeRunning
	n.mu.Unlock()
	if err := n.waitListening(ctx, cmd.Process.Pid, exited); err != nil {
		_ = n.Kill()
		tail := n.logTail(5)
		if strings.Contains(tail, "address already in use") {
			err = errAddrInUse
		}
		return fmt.Errorf("%w: etcd member %s on ports %d/%d: %w; log %s:\n%s",
			backend.ErrNodeStart, n.cfg.Name, n.port, n.peer, err, n.LogPath(), tail)
	}
	return nil
}

// waitListening waits until the member (process pid) accepts
// connections on its client port, or its process ends. A connection
// another process accepts on that port (it took the port while the
// member was down) does not count: the member then fails to bind and
// exits, and its log says why.
func (n *Node) waitListening(ctx context.Context, pid int, exited <-chan struct{}) error {
	deadline := time.Now().Add(n.cfg.StartTimeout)
	for {
		if c, err := net.DialTimeout("tcp", n.Addr(), 200*time.Millisecond); err == nil {
			c.Close()
			if listens, known := backend.Listens(pid, n.port); listens || !known {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening within %v", n.cfg.StartTimeout)
		}
	}
}

// Kill sends SIGKILL (a paused member dies too) and waits until the
// process is reaped.
func (n *Node) Kill() error {
	n.mu.Lock()
	if kill, err := backend.CheckKillable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	cmd, exited := n.cmd, n.exited
	n.state = backend.NodeKilled
	n.mu.Unlock()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return nil
}

// Start starts a killed member again on its ports and its data: it
// rejoins its cluster as the same member.
func (n *Node) Start(ctx context.Context) error { return n.start(ctx) }

// Restart kills the member if it runs and starts it again.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Pause freezes the member (SIGSTOP): connections stay open, nothing
// answers, its timers stop.
func (n *Node) Pause() error {
	if err := n.signal(backend.NodeRunning, backend.NodePaused, syscall.SIGSTOP); err != nil {
		return err
	}
	backend.WaitStopped(n.PID(), time.Second)
	return nil
}

// Resume lets a paused member go on.
func (n *Node) Resume() error {
	return n.signal(backend.NodePaused, backend.NodeRunning, syscall.SIGCONT)
}

func (n *Node) signal(from, to backend.NodeState, sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == backend.NodeClosed {
		return fmt.Errorf("member %s: %w", n.cfg.Name, backend.ErrClosed)
	}
	if n.state != from {
		return fmt.Errorf("member %s is %s, want %s: %w", n.cfg.Name, n.state, from, backend.ErrNodeState)
	}
	_ = syscall.Kill(-n.cmd.Process.Pid, sig)
	n.state = to
	return nil
}

// Close kills the member and removes its folder. Safe to call twice.
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
	if err := os.RemoveAll(n.dir); err != nil {
		return fmt.Errorf("etcd: member %s: remove %s: %w", n.cfg.Name, n.dir, err)
	}
	return nil
}

// memberEnv is the harness's environment without ETCD_* variables: etcd
// reads each as a flag, and one the user set for their own etcd would
// change a member here or stop it ("shadowed by a command-line flag").
func memberEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") && !strings.HasPrefix(kv, "ETCDCTL_") {
			env = append(env, kv)
		}
	}
	return env
}

func (n *Node) logTail(k int) string {
	return backend.LogTail(n.LogPath(), k)
}

func (n *Node) errNotRedis(op string) error {
	return fmt.Errorf("member %s: %s is a Redis command; an etcd member answers none: %w", n.cfg.Name, op, backend.ErrUnsupported)
}

// Do implements backend.RedisNode: an etcd member answers no Redis command.
func (n *Node) Do(context.Context, ...any) (any, error) { return nil, n.errNotRedis("Do") }

// ReplicaOf implements backend.RedisNode: members replicate by raft, not by hand.
func (n *Node) ReplicaOf(context.Context, string) error { return n.errNotRedis("REPLICAOF") }

// Promote implements backend.RedisNode: a leader is elected, not promoted.
func (n *Node) Promote(context.Context) error { return n.errNotRedis("REPLICAOF NO ONE") }

// ReplicationInfo implements backend.RedisNode.
func (n *Node) ReplicationInfo(context.Context) (map[string]string, error) {
	return nil, n.errNotRedis("INFO replication")
}

// WaitLinkUp implements backend.RedisNode.
func (n *Node) WaitLinkUp(context.Context, time.Duration) error {
	return n.errNotRedis("INFO replication")
}

// runDir is this process's folder for member folders, removed by a
// janitor when the process ends: a harness killed with SIGKILL leaves no
// data folder behind.
var runDir struct {
	once    sync.Once
	dir     string
	err     error
	janitor func() // kept: its pipe closes when collected
}

func parentDir() (string, error) {
	runDir.once.Do(func() {
		base := os.TempDir()
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && syscall.Access("/dev/shm", 0x2|0x1) == nil {
			// etcd fsyncs every write: on tmpfs that is free, on this
			// machine's disk it is milliseconds a lock cycle would pay.
			base = "/dev/shm"
		}
		runDir.dir, runDir.err = os.MkdirTemp(base, fmt.Sprintf("lockchaos-etcd-run-%d-", os.Getpid()))
		if runDir.err == nil {
			runDir.janitor = backend.Janitor(runDir.dir)
		}
	})
	return runDir.dir, runDir.err
}
