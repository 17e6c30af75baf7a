package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
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

// Node is one PostgreSQL server (a postmaster and its backends, one
// process group) on a loopback port, in a folder of its own: data/ (the
// cluster), server.log, and the unix socket. It keeps its port and its
// data across Kill and Start, so proxies in front of it need no change.
type Node struct {
	cfg  backend.NodeConfig
	bin  string
	cred *syscall.Credential
	dir  string
	port int

	mu     sync.Mutex
	state  backend.NodeState
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current postmaster has been reaped

	adm adminConn // replication and probes (standby.go)
}

// Start makes a node from the template cluster, starts its server and
// waits until it accepts connections and has the locks' schema.
// cfg.Binary, when set, is the folder holding postgres (or the postgres
// binary); cfg.ExtraArgs are server settings ("-c", "name=value" pairs)
// after lockchaos's own, so they win.
func Start(ctx context.Context, cfg backend.NodeConfig) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n, err := newNode(cfg)
	if err != nil {
		return nil, err
	}
	// A port picked by binding :0 and closing can be taken by someone
	// else before postgres binds it; try a few fresh ones.
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
		if err == nil || !errors.Is(err, errAddrInUse) || i == attempts-1 {
			break
		}
	}
	if err != nil {
		_ = n.Close()
		return nil, err
	}
	return n, nil
}

// newNode finds the binaries and the server's user, and makes the node's
// folder from the template; the node is tracked from here on.
func newNode(cfg backend.NodeConfig) (*Node, error) {
	if cfg.Name == "" {
		cfg.Name = "node"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = backend.DefaultStartTimeout
	}
	bin, err := Find()
	if cfg.Binary != "" {
		bin, err = FindIn(cfg.Binary)
	}
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	tmpl, err := templateDir(bin, cred)
	if err != nil {
		return nil, err
	}
	parent, err := parentDir()
	if err != nil {
		return nil, fmt.Errorf("postgres: node %s: run folder: %w", cfg.Name, err)
	}
	dir, err := os.MkdirTemp(parent, "pg-"+backend.Sanitize(cfg.Name)+"-")
	if err != nil {
		return nil, fmt.Errorf("postgres: node %s: folder: %w", cfg.Name, err)
	}
	n := &Node{cfg: cfg, bin: bin, cred: cred, dir: dir, state: backend.NodeKilled}
	backend.TrackNode(n, dir)
	if err := chown(dir, cred); err != nil {
		_ = n.Close()
		return nil, err
	}
	if err := copyTree(tmpl, n.dataDir(), cred); err != nil {
		_ = n.Close()
		return nil, fmt.Errorf("postgres: node %s: copy the template cluster: %w", cfg.Name, err)
	}
	return n, nil
}

// Name returns the node's label.
func (n *Node) Name() string { return n.cfg.Name }

// Addr returns host:port of the server itself (not of any proxy).
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// Port returns the server's port.
func (n *Node) Port() int { return n.port }

// Dir returns the node's folder.
func (n *Node) Dir() string { return n.dir }

// LogPath returns the server's log file (server.log in the node's folder).
func (n *Node) LogPath() string { return filepath.Join(n.dir, "server.log") }

func (n *Node) dataDir() string { return filepath.Join(n.dir, "data") }

// URL is the admin's connection URL, straight to the server.
func (n *Node) URL() string { return URLFor(n.Addr()) }

// ConnString is the connection URL for the server reached at addr (a
// proxy in front of it, which a pod dials).
func (n *Node) ConnString(addr string) string { return URLFor(addr) }

// QuietRestart is a local PostgreSQL node's kill and restart on a quiet
// machine (measured: 53 ms for a kill and start, a node's start 67 to 94
// ms): what a measured restart is compared with when a scenario that
// kills a PostgreSQL server is stretched for load.
const QuietRestart = 60 * time.Millisecond

// URLFor is the admin's connection URL, as Role to Database, of a
// lockchaos server reached at addr (host:port), whoever runs it. Its
// session is exempt from the idle timeouts a tuned lock gives the server
// (pgx sends unknown URL parameters as session settings): the harness's
// own kept connections (a standby's promote and probe, the witness) idle
// between calls for longer than a TTL, and the server ended them (a
// standby-promotion cell of pg-advisory-tuned: "promote: FATAL:
// terminating connection due to idle-session timeout").
func URLFor(addr string) string {
	u := url.URL{Scheme: "postgres", User: url.User(Role), Host: addr, Path: "/" + Database,
		RawQuery: "sslmode=disable&application_name=lockchaos-admin&idle_session_timeout=0&" +
			"idle_in_transaction_session_timeout=0"}
	return u.String()
}

// State returns what the node is doing now.
func (n *Node) State() backend.NodeState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// PID returns the postmaster's process id while it runs (or is paused), or 0.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || (n.state != backend.NodeRunning && n.state != backend.NodePaused) {
		return 0
	}
	return n.cmd.Process.Pid
}

var errAddrInUse = errors.New("address already in use")

// serverArgs is the postgres command line: lockchaos's settings, then
// cfg.ExtraArgs (a later -c wins).
func (n *Node) serverArgs() []string {
	settings := append([]string{
		"listen_addresses=127.0.0.1",
		"port=" + strconv.Itoa(n.port),
		"unix_socket_directories=" + n.dir,
	}, Settings()...)
	args := []string{"-D", n.dataDir()}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	return append(args, n.cfg.ExtraArgs...)
}

// Settings are the server settings ("name=value") every node runs with,
// but where it listens and its socket folder: a node in a container
// (backend/docker's image) runs with the same.
func Settings() []string {
	return []string{
		// fsync off: a killed server loses nothing the kernel was handed (only
		// a machine crash would), and a kill is the fault tested here.
		// synchronous_commit stays on (the default): off, a kill loses the
		// last commits, which a node-restart cell reported as lost writes.
		"fsync=off", "full_page_writes=off",
		"shared_buffers=16MB", "max_connections=200",
		// Shared memory in files under data/ (not /dev/shm), so the
		// node's folder is all a node leaves.
		"dynamic_shared_memory_type=mmap",
		"autovacuum=off",
		// A standby whose stream broke (its primary killed, the link cut)
		// retries every wal_retrieve_retry_interval (5 s by default), and
		// a promotion requested then waited the rest of it: a failover's
		// promote took 5.0 s in 2 of 4 rounds.
		"wal_retrieve_retry_interval=50ms",
		"logging_collector=off", "log_destination=stderr",
		// SessionEnds parses these lines: millisecond UTC times, pids.
		"log_line_prefix=%m [%p] ", "log_timezone=UTC",
		"log_connections=off", "log_disconnections=on", "log_lock_waits=on",
	}
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
		return fmt.Errorf("postgres: node %s: log file: %w", n.cfg.Name, err)
	}
	cmd := exec.Command(filepath.Join(n.bin, "postgres"), n.serverArgs()...)
	cmd.Dir, cmd.Env = n.dir, serverEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a Ctrl-C at the terminal reaches the
		// harness, which then kills the nodes itself. (The backends
		// leave it: see signalServer.)
		Setpgid: true,
		// The harness dies, the postmaster dies; its backends see it gone
		// and end themselves.
		Pdeathsig:  syscall.SIGKILL,
		Credential: n.cred,
	}
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		logf.Close()
		return fmt.Errorf("%w: postgres node %s: %w", backend.ErrNodeStart, n.cfg.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	n.cmd, n.exited, n.state = cmd, exited, backend.NodeRunning
	n.mu.Unlock()

	if err := n.waitReady(ctx, exited); err != nil {
		_ = n.Kill()
		tail := n.logTail(5)
		if strings.Contains(tail, "Address already in use") {
			err = errAddrInUse
		}
		return fmt.Errorf("%w: postgres node %s on port %d: %w; log %s:\n%s",
			backend.ErrNodeStart, n.cfg.Name, n.port, err, n.LogPath(), tail)
	}
	return nil
}

// Kill sends SIGKILL to the postmaster and every backend (a paused server
// dies too), waits until the postmaster is reaped, and clears what a
// killed server leaves that could stop the next start.
func (n *Node) Kill() error {
	n.mu.Lock()
	if kill, err := backend.CheckKillable(n.cfg.Name, n.state); !kill {
		n.mu.Unlock()
		return err
	}
	cmd, exited := n.cmd, n.exited
	n.state = backend.NodeKilled
	n.mu.Unlock()
	// The group reaches a wrapper's processes; signalServer the
	// backends, which are not in it.
	kids := signalServer(cmd.Process.Pid, syscall.SIGKILL)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	// A backend still dying holds the shared memory the next start
	// checks ("pre-existing shared memory block is still in use").
	waitGone(kids, 5*time.Second)
	n.clearStale()
	return nil
}

// Restart kills the server if it runs and starts it again: same port,
// same data.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.start(ctx)
}

// Start starts a killed server again on its port and data, and waits
// until it accepts connections (crash recovery included).
func (n *Node) Start(ctx context.Context) error { return n.start(ctx) }

// Pause stops the postmaster and every child of it with SIGSTOP: connections
// stay open and nothing answers, as in a VM freeze.
func (n *Node) Pause() error {
	return n.signal(backend.NodeRunning, backend.NodePaused, syscall.SIGSTOP)
}

// Resume lets a paused server go on (SIGCONT to the group).
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
	signalServer(n.cmd.Process.Pid, sig)
	n.state = to
	return nil
}

// Close kills the server and removes the node's folder. It is safe to
// call more than once.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.state == backend.NodeClosed {
		n.mu.Unlock()
		return nil
	}
	n.mu.Unlock()
	_ = n.Kill()
	n.dropAdmin()
	n.mu.Lock()
	n.state = backend.NodeClosed
	n.mu.Unlock()
	backend.UntrackNode(n)
	if err := os.RemoveAll(n.dir); err != nil {
		return fmt.Errorf("postgres: node %s: remove %s: %w", n.cfg.Name, n.dir, err)
	}
	return nil
}

// logTail returns the last k lines of the server's log, for errors.
func (n *Node) logTail(k int) string {
	return backend.LogTail(n.LogPath(), k)
}

// startPoll is how often waitReady tries to connect.
const startPoll = 10 * time.Millisecond
