package postgres

import (
	"bytes"
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

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// A node becomes a streaming standby (physical replication) of another
// node: its data folder is replaced by a base backup of the primary, taken
// through the address it is given (the deployment's replication proxy),
// and the standby then streams the primary's WAL through that same
// address, so a latency on that link delays replication. What is not in
// the WAL never reaches it: advisory locks are not WAL-logged at all, and
// a row lock's xmax is, but its locking transaction ends with the primary
// (aborted when the standby is promoted). A promoted standby holds no lock.

// ErrReplication means a standby could not be made, promoted or followed;
// the wrapping error says which node and why.
var ErrReplication = errors.New("postgres: replication")

// standbyPoll is how often the waits below ask the server again.
const standbyPoll = 5 * time.Millisecond

// promoteWaitSeconds bounds the wait for a promotion.
const promoteWaitSeconds = 10

// ReplicaOf makes the node a streaming standby of the primary reachable
// at addr (host:port, the replication proxy): it kills the server,
// replaces its data with a base backup of that primary, and starts it as
// a standby whose primary_conninfo names addr, so its WAL stream goes
// through the proxy. Everything the node had is gone, as a Redis
// replica's full sync drops its data. It returns once the standby accepts
// read-only connections; WaitLinkUp waits for the stream.
//
// The backup itself is taken straight from the server behind addr (asked
// through addr which one it is): through a link that lags 375 ms, a
// pg_basebackup's six or seven round trips took 2.4 to 2.7 s, and a
// failover rejoins a node through its lagging link every round.
func (n *Node) ReplicaOf(ctx context.Context, addr string) error {
	if n.State() == backend.NodeClosed {
		return fmt.Errorf("node %s: %w", n.cfg.Name, backend.ErrClosed)
	}
	host, port, err := n.serverBehind(ctx, addr)
	if err != nil {
		return err
	}
	if st := n.State(); st == backend.NodeRunning || st == backend.NodePaused {
		if err := n.Kill(); err != nil {
			return err
		}
	}
	// The backup goes to a fresh folder and replaces data/ only once
	// whole, so a failed backup leaves the old cluster in place.
	fresh := filepath.Join(n.dir, "data.standby")
	if err := os.RemoveAll(fresh); err != nil {
		return fmt.Errorf("%w: node %s: %w", ErrReplication, n.cfg.Name, err)
	}
	// -X fetch: the WAL comes at the end of the one backup stream (no
	// second connection); -c fast: no spread checkpoint first; -N and
	// --no-manifest: nothing this throwaway copy needs.
	err = n.runCtx(ctx, "pg_basebackup", "-h", host, "-p", port, "-U", Role, "-w",
		"-D", fresh, "-X", "fetch", "-c", "fast", "-N", "--no-manifest")
	if err == nil {
		err = n.standbyConfig(fresh, addr)
	}
	if err != nil {
		_ = os.RemoveAll(fresh)
		return fmt.Errorf("%w: node %s: base backup of %s (behind %s): %w", ErrReplication, n.cfg.Name,
			net.JoinHostPort(host, port), addr, err)
	}
	if err := os.RemoveAll(n.dataDir()); err != nil {
		return fmt.Errorf("%w: node %s: %w", ErrReplication, n.cfg.Name, err)
	}
	if err := os.Rename(fresh, n.dataDir()); err != nil {
		return fmt.Errorf("%w: node %s: %w", ErrReplication, n.cfg.Name, err)
	}
	return n.start(ctx)
}

// serverBehind asks the server reached at addr which address it listens
// on: one connection through addr, so a link that is cut fails ReplicaOf
// as it would fail a Redis replica's sync.
func (n *Node) serverBehind(ctx context.Context, addr string) (host, port string, err error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", "", fmt.Errorf("%w: node %s: primary address %q: %w", ErrReplication, n.cfg.Name, addr, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, n.ConnString(addr))
	if err != nil {
		return "", "", fmt.Errorf("%w: node %s: reach the primary at %s: %w", ErrReplication, n.cfg.Name, addr, err)
	}
	defer conn.Close(context.Background())
	var p int
	// The simple protocol: one round trip (a prepared statement costs two).
	if err := conn.QueryRow(cctx, "SELECT host(inet_server_addr()), inet_server_port()",
		pgx.QueryExecModeSimpleProtocol).Scan(&host, &p); err != nil {
		return "", "", fmt.Errorf("%w: node %s: ask the primary at %s its address: %w", ErrReplication, n.cfg.Name, addr, err)
	}
	return host, strconv.Itoa(p), nil
}

// standbyConfig makes the backup in data a standby streaming from addr:
// standby.signal, and primary_conninfo in postgresql.auto.conf (what
// pg_basebackup -R writes, but naming addr, not the server backed up).
func (n *Node) standbyConfig(data, addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	signal := filepath.Join(data, "standby.signal")
	if err := os.WriteFile(signal, nil, 0o600); err != nil {
		return err
	}
	if err := chown(signal, n.cred); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(data, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "primary_conninfo = 'host=%s port=%s user=%s application_name=%s'\n",
		host, port, Role, backend.Sanitize(n.cfg.Name))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runCtx runs one of the PostgreSQL client binaries as the server's user,
// its whole process group killed if ctx ends first.
func (n *Node) runCtx(ctx context.Context, name string, args ...string) error {
	path, err := toolPath(n.bin, name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir, cmd.Env = n.dir, serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: n.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// toolPath finds a client binary beside postgres: in bin, or, when bin's
// postgres is a link (/usr/local/bin/postgres to Debian's folder, which
// links only initdb and postgres), in the folder it points into.
func toolPath(bin, name string) (string, error) {
	p := filepath.Join(bin, name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if target, err := filepath.EvalSymlinks(filepath.Join(bin, "postgres")); err == nil {
		if q := filepath.Join(filepath.Dir(target), name); q != p {
			if _, err := os.Stat(q); err == nil {
				return q, nil
			}
		}
	}
	return "", fmt.Errorf("no %s in %s nor beside its postgres (it comes with the server: %s)", name, bin, howToGet)
}

// standby reports whether the node's data is a standby's (standby.signal,
// which the server removes when it is promoted).
func (n *Node) standby() bool {
	_, err := os.Stat(filepath.Join(n.dataDir(), "standby.signal"))
	return err == nil
}

// Promote ends the standby's recovery (pg_promote) and
// returns once the node accepts writes. On a node that is no standby it
// does nothing, as REPLICAOF NO ONE on a Redis primary.
func (n *Node) Promote(ctx context.Context) error {
	return n.withAdmin(ctx, func(conn *pgx.Conn) error { return n.promote(ctx, conn) })
}

func (n *Node) promote(ctx context.Context, conn *pgx.Conn) error {
	// One round trip: NULL on a primary (nothing to do), else whether
	// the postmaster was signalled. pg_promote's own wait polls ten
	// times a second; polling here returns ~90 ms sooner (a promotion
	// takes ~20 ms here), which counts against a TTL of a few hundred.
	var signalled *bool
	err := conn.QueryRow(ctx, "SELECT CASE WHEN pg_is_in_recovery() THEN pg_promote(false) END",
		pgx.QueryExecModeSimpleProtocol).Scan(&signalled)
	switch {
	case err == nil && signalled == nil:
		return nil
	case err == nil && !*signalled:
		err = errors.New("pg_promote could not signal the postmaster")
	}
	if err != nil {
		return fmt.Errorf("%w: node %s: promote: %w", ErrReplication, n.cfg.Name, err)
	}
	return n.waitQuery(ctx, conn, promoteWaitSeconds*time.Second, "writable", "SELECT NOT pg_is_in_recovery()")
}

// WaitLinkUp waits until the standby's WAL receiver streams from its
// primary (pg_stat_wal_receiver's status 'streaming').
func (n *Node) WaitLinkUp(ctx context.Context, timeout time.Duration) error {
	return n.withAdmin(ctx, func(conn *pgx.Conn) error {
		return n.waitQuery(ctx, conn, timeout, "streaming from its primary",
			"SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')")
	})
}

var _ backend.CatchUpWaiter = (*Node)(nil)

// WaitCaughtUp waits until the standby has replayed the WAL primary had
// written when asked (pg_current_wal_lsn), so everything committed there
// before the call is on the standby: what Redis's WAIT gives.
func (n *Node) WaitCaughtUp(ctx context.Context, primary backend.RedisNode, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pc, err := pgx.Connect(pctx, n.ConnString(primary.Addr()))
	if err != nil {
		return fmt.Errorf("%w: primary %s: %w", ErrReplication, primary.Name(), err)
	}
	var lsn string
	err = pc.QueryRow(pctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn)
	pc.Close(context.Background())
	if err != nil {
		return fmt.Errorf("%w: primary %s: current WAL position: %w", ErrReplication, primary.Name(), err)
	}
	return n.withAdmin(ctx, func(conn *pgx.Conn) error {
		return n.waitQuery(ctx, conn, timeout, "replayed "+primary.Name()+"'s WAL to "+lsn,
			"SELECT coalesce(pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn, false)")
	})
}

// ReplicationInfo is the node's replication state: role (primary or
// standby), the WAL receiver's status ("" when none), and its WAL
// position (lsn: written on a primary, replayed on a standby).
func (n *Node) ReplicationInfo(ctx context.Context) (map[string]string, error) {
	var standby bool
	var status, lsn string
	err := n.withAdmin(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT pg_is_in_recovery(),
		coalesce((SELECT status FROM pg_stat_wal_receiver), ''),
		coalesce(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text, '')`).
			Scan(&standby, &status, &lsn)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: node %s: replication info: %w", ErrReplication, n.cfg.Name, err)
	}
	role := "primary"
	if standby {
		role = "standby"
	}
	return map[string]string{"role": role, "receiver_status": status, "lsn": lsn}, nil
}

// adminConn is the node's kept admin connection, straight to the server
// (no proxy, no fault): a failover promotes the standby and probes it
// right after, and a new connection costs a backend's start each (5 to
// 60 ms on a loaded machine), which counts against the holders' work.
type adminConn struct {
	mu   sync.Mutex
	conn *pgx.Conn
	pm   int // the postmaster it reaches
}

// withAdmin runs f on the admin connection: the kept one if it reaches
// the postmaster running now, else a new one. An error drops it.
func (n *Node) withAdmin(ctx context.Context, f func(*pgx.Conn) error) error {
	a := &n.adm
	a.mu.Lock()
	defer a.mu.Unlock()
	pm := n.PID()
	if a.conn != nil && (a.pm != pm || a.conn.IsClosed()) {
		a.drop()
	}
	if a.conn == nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, n.URL())
		cancel()
		if err != nil {
			return fmt.Errorf("%w: node %s: admin connection: %w", ErrReplication, n.cfg.Name, err)
		}
		a.conn, a.pm = conn, pm
	}
	err := f(a.conn)
	if err != nil {
		a.drop()
	}
	return err
}

// drop closes the connection (a dead or paused server: without waiting).
func (a *adminConn) drop() {
	if a.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_ = a.conn.Close(ctx)
	cancel()
	a.conn = nil
}

// dropAdmin closes the kept admin connection (Close).
func (n *Node) dropAdmin() {
	n.adm.mu.Lock()
	n.adm.drop()
	n.adm.mu.Unlock()
}

// waitQuery polls query (one boolean) until it is true, up to timeout
// (0: as long as ctx allows); what names the awaited state for the error.
func (n *Node) waitQuery(ctx context.Context, conn *pgx.Conn, timeout time.Duration, what, query string) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	for {
		var ok bool
		err := conn.QueryRow(ctx, query).Scan(&ok)
		if err == nil && ok {
			return nil
		}
		if err != nil && conn.IsClosed() {
			return fmt.Errorf("%w: node %s: not %s: %w", ErrReplication, n.cfg.Name, what, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: node %s: not %s: %w", ErrReplication, n.cfg.Name, what, ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-time.After(standbyPoll):
		}
	}
}
