package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// What service/postgres creates, repeated here because lockimpl must not
// import it (service/postgres imports backend, which would make a cycle);
// pg_schema_test.go checks that the two agree.
const (
	// PGDatabase is the database the locks connect to.
	PGDatabase = "lockchaos"
	// PGUser is the role they connect as (trust authentication).
	PGUser = "lockchaos"
	// PGLocksTable holds one row per lock name; a row lock locks the row,
	// an advisory lock takes (PGAdvisoryClass, the row's id).
	PGLocksTable = "lockchaos_locks"
	// PGResourceTable holds the protected resource of the in-transaction
	// locks: one counter per key.
	PGResourceTable = "lockchaos_resource"
	// PGAdvisoryClass is the first key of every two-int advisory lock the
	// locks take (pg_locks.classid), so the witness finds them.
	PGAdvisoryClass int32 = 0x4c43 // "LC"
)

// defaultPGCallTimeout bounds connecting and settling a commit when the
// Env gives no CallTimeout.
const defaultPGCallTimeout = 2 * time.Second

// pgSessions is what every PostgreSQL lock shares: how a pod connects
// (through its own dialer, so a pod pause freezes its sessions) and the
// sessions it has open, so Close can drop them all as a crashed process's
// sockets would be.
//
// A lease is a session: the lock lives and dies with it, and the lease's
// token names it ("pg-<backend pid>", as the witness names holders). A
// pod keeps one spare session, as an app's pool keeps a connection: a
// session left clean (a refused attempt, a release or commit that
// answered) serves the pod's next attempt; one that failed in any other
// way is dropped, so its server side ends and frees whatever it held. A
// fresh session costs a backend fork, about ten times the rest of a lock
// cycle. Successive leases of one pod may share a token; two holders at
// once never do.
type pgSessions struct {
	cfg     *pgx.ConnConfig
	target  PGTarget
	timeout time.Duration

	mu     sync.Mutex
	spare  *pgx.Conn
	open   map[*pgx.Conn]struct{}
	closed bool
}

// errPGClosed is the indefinite error of a locker used after Close.
var errPGClosed = errors.New("lockimpl: postgres locker closed")

func newPGSessions(env Env) (*pgSessions, error) {
	if len(env.Addrs) < 1 {
		return nil, fmt.Errorf("%w: a PostgreSQL lock needs the server's address (Env.Addrs)", ErrInvalidConfig)
	}
	timeout := env.CallTimeout
	if timeout <= 0 {
		timeout = defaultPGCallTimeout
	}
	cfg, err := pgConnConfig(env.Addrs[0], timeout, env.Dial, env.Postgres)
	if err != nil {
		return nil, err
	}
	return &pgSessions{cfg: cfg, target: env.Postgres, timeout: timeout, open: map[*pgx.Conn]struct{}{}}, nil
}

// PostgresURLs are the connection URLs of the PostgreSQL servers at addrs
// (a pod's proxies), as the PostgreSQL locks connect to target: for a
// driver process, whose lock brings its own client
// (LOCKCHAOS_POSTGRES_URLS).
func PostgresURLs(addrs []string, target PGTarget) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = target.url(a)
	}
	return out
}

// pgConnConfig is the connection to addr (a pod's proxy) as target says:
// user and database as service/postgres makes them, no TLS, or the user's
// URL (its host and port are not dialled: addr is, so faults apply; TLS
// still names the user's host); dialed with dial, every call bounded by
// its context (a deadline on the socket the moment the context ends, so a
// hung network surfaces as an error in time), statements sent in one
// round trip without preparing (a fresh session per lease would prepare
// every statement again).
func pgConnConfig(addr string, timeout time.Duration,
	dial func(context.Context, string, string) (net.Conn, error), target PGTarget) (*pgx.ConnConfig, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres address %q: %w", ErrInvalidConfig, addr, err)
	}
	secs := max(1, int((timeout+time.Second-1)/time.Second))
	dsn := fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable connect_timeout=%d",
		host, port, PGUser, PGDatabase, secs)
	if target.URL != "" {
		dsn = target.URL
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres connection: %w", ErrInvalidConfig, err)
	}
	maps.Copy(cfg.RuntimeParams, target.params())
	cfg.ConnectTimeout = timeout
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	cfg.DialFunc = func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network, addr) }
	// Nothing is resolved: the dial goes to addr whatever the host says
	// (a user's host name is for TLS only), and a resolver could hang.
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return cfg, nil
}

// get returns the spare session (spare true), or a new one.
func (s *pgSessions) get(ctx context.Context) (c *pgx.Conn, spare bool, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false, errPGClosed
	}
	if c := s.spare; c != nil {
		s.spare = nil
		s.mu.Unlock()
		return c, true, nil
	}
	s.mu.Unlock()
	c, err = s.fresh(ctx)
	return c, false, err
}

// fresh opens a session of its own (never the spare, which may have died
// idle), tracked so Close drops it.
func (s *pgSessions) fresh(ctx context.Context) (*pgx.Conn, error) {
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.PgConn().Conn().Close()
		return nil, errPGClosed
	}
	s.open[c] = struct{}{}
	return c, nil
}

// dial opens a session within the caller's context and the call timeout.
func (s *pgSessions) dial(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("lockimpl: postgres connect: %w", err)
	}
	return c, nil
}

// putSpare keeps c, idle and outside any transaction, for the next
// attempt; a pod needs one at most.
func (s *pgSessions) putSpare(c *pgx.Conn) {
	s.mu.Lock()
	if !s.closed && s.spare == nil && !c.IsClosed() && c.PgConn().TxStatus() == 'I' {
		s.spare = c
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.drop(c)
}

// drop ends c's session: the socket closes, and the server ends the
// session (its transaction rolls back, its locks go) as soon as it sees.
func (s *pgSessions) drop(c *pgx.Conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = c.Close(ctx) // a polite Terminate if the socket takes it at once
	_ = c.PgConn().Conn().Close()
}

// Close drops every session at once, as a crashed pod's sockets close:
// held locks go when the server sees. The workload closes a pod's locker
// when it crashes and when the cell ends.
func (s *pgSessions) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*pgx.Conn, 0, len(s.open))
	for c := range s.open {
		conns = append(conns, c)
	}
	s.open = map[*pgx.Conn]struct{}{}
	s.spare = nil
	s.mu.Unlock()
	for _, c := range conns {
		// The raw socket only: a lease's goroutine may be using the
		// pgx.Conn, which is not safe for concurrent use; a socket is.
		_ = c.PgConn().Conn().Close()
	}
	return nil
}

// pgToken is the lease's token: the server-side witness names a holder by
// its backend's pid.
func pgToken(c *pgx.Conn) string {
	return "pg-" + strconv.FormatUint(uint64(c.PgConn().PID()), 10)
}

// sessionGone reports an error that says the server ended the session
// (it said FATAL, or closed the connection): whatever it held is gone. A
// timeout is not one: we gave up waiting, and the server may hold on.
func sessionGone(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	if pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// pgCode returns err's SQLSTATE, or "".
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// SQLSTATEs the locks read.
const (
	sqlLockNotAvailable = "55P03" // FOR UPDATE NOWAIT found the row locked
	sqlIdleTxTimeout    = "25P03" // idle_in_transaction_session_timeout ended the session
)
