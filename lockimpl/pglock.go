package lockimpl

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// PGKind is which PostgreSQL lock a PGLock takes.
type PGKind int

// The PostgreSQL locks.
const (
	// PGRow locks the key's row (SELECT ... FOR UPDATE NOWAIT) in a
	// transaction that also carries the resource's write (a TxLease).
	PGRow PGKind = iota
	// PGRowOutside is the same row lock guarding a resource outside the
	// database: the transaction only holds the lock.
	PGRowOutside
	// PGAdvisory takes a session advisory lock (pg_try_advisory_lock).
	PGAdvisory
	// PGAdvisoryXact takes a transaction advisory lock
	// (pg_try_advisory_xact_lock) in a transaction that also carries the
	// resource's write (a TxLease).
	PGAdvisoryXact
)

func (k PGKind) String() string {
	switch k {
	case PGRow:
		return "pg-row"
	case PGRowOutside:
		return "pg-row-outside"
	case PGAdvisory:
		return "pg-advisory"
	case PGAdvisoryXact:
		return "pg-advisory-xact"
	}
	return fmt.Sprintf("PGKind(%d)", int(k))
}

// inTransaction says the kind's lock lives in a transaction.
func (k PGKind) inTransaction() bool { return k != PGAdvisory }

// PGLock is one pod's PostgreSQL lock on a server's lockchaos_locks
// table: each lease is a session of its own (see pgSessions). Close drops
// every session, as the pod's crash would.
type PGLock struct {
	kind PGKind
	s    *pgSessions
}

// NewPGLock returns the kind's lock for one pod: it connects to
// env.Addrs[0] as service/postgres's user, through env.Dial.
func NewPGLock(kind PGKind, env Env) (*PGLock, error) {
	if kind < PGRow || kind > PGAdvisoryXact {
		return nil, fmt.Errorf("%w: unknown PostgreSQL lock kind %d", ErrInvalidConfig, int(kind))
	}
	s, err := newPGSessions(env)
	if err != nil {
		return nil, err
	}
	return &PGLock{kind: kind, s: s}, nil
}

// Close drops every session the lock has open; held locks go when the
// server sees the sockets close.
func (l *PGLock) Close() error { return l.s.Close() }

// errNoLockRow: the key has no row in lockchaos_locks yet.
var errNoLockRow = errors.New("no lock row")

// Acquire makes one attempt on a session: the pod's spare, or a new
// one. A refusal leaves the session spare and is ErrNotAcquired; any
// other failure drops the session (so whatever the server did for it is
// undone when the server sees) and is indefinite.
func (l *PGLock) Acquire(ctx context.Context, key string) (Lease, error) {
	c, spare, err := l.s.get(ctx)
	if err != nil {
		return nil, l.acquireErr(key, err)
	}
	inserted := false
	for {
		id, ok, err := l.try(ctx, c, key)
		switch {
		case err == nil && ok:
			return l.lease(c, key, id), nil
		case err == nil:
			l.endAttempt(ctx, c)
			return nil, ErrNotAcquired
		case errors.Is(err, errNoLockRow) && !inserted:
			inserted = true
			l.endAttempt(ctx, c)
			if err := l.ensureName(ctx, key); err != nil {
				return nil, err
			}
		case spare && sessionGone(err):
			// The spare died while idle (idle_session_timeout, a
			// restarted server): whatever it did is undone with it, so
			// the attempt starts again on a fresh session.
			l.s.drop(c)
		default:
			l.s.drop(c)
			return nil, l.acquireErr(key, err)
		}
		if c, spare, err = l.s.get(ctx); err != nil {
			return nil, l.acquireErr(key, err)
		}
	}
}

func (l *PGLock) acquireErr(key string, err error) error {
	return fmt.Errorf("lockimpl: %s acquire %s: %w", l.kind, key, err)
}

// try runs the kind's one attempt: ok false is a definite refusal.
func (l *PGLock) try(ctx context.Context, c *pgx.Conn, key string) (id int32, ok bool, err error) {
	if l.kind.inTransaction() {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return 0, false, err
		}
	}
	switch l.kind {
	case PGRow, PGRowOutside:
		err = c.QueryRow(ctx, "SELECT id FROM "+PGLocksTable+" WHERE name = $1 FOR UPDATE NOWAIT", key).Scan(&id)
		if pgCode(err) == sqlLockNotAvailable {
			return 0, false, nil
		}
		ok = err == nil
	case PGAdvisory:
		err = c.QueryRow(ctx, "SELECT id, pg_try_advisory_lock($1, id) FROM "+PGLocksTable+" WHERE name = $2",
			l.s.target.Class(), key).Scan(&id, &ok)
	case PGAdvisoryXact:
		err = c.QueryRow(ctx, "SELECT id, pg_try_advisory_xact_lock($1, id) FROM "+PGLocksTable+" WHERE name = $2",
			l.s.target.Class(), key).Scan(&id, &ok)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, errNoLockRow
	}
	return id, ok, err
}

// endAttempt leaves a refused attempt's session clean (no transaction)
// as the spare, or drops it; the refusal stands either way.
func (l *PGLock) endAttempt(ctx context.Context, c *pgx.Conn) {
	if c.PgConn().TxStatus() != 'I' {
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			l.s.drop(c)
			return
		}
	}
	l.s.putSpare(c)
}

// ensureName inserts the key's row on its first use, on its own
// (autocommitted) so every pod's lock sees it, whoever inserts it first.
func (l *PGLock) ensureName(ctx context.Context, key string) error {
	c, _, err := l.s.get(ctx)
	if err != nil {
		return l.acquireErr(key, err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO "+PGLocksTable+" (name) VALUES ($1) ON CONFLICT DO NOTHING", key); err != nil {
		l.s.drop(c)
		return fmt.Errorf("lockimpl: %s acquire %s: insert the lock's row: %w", l.kind, key, err)
	}
	l.s.putSpare(c)
	return nil
}

func (l *PGLock) lease(c *pgx.Conn, key string, id int32) Lease {
	base := pgLease{s: l.s, conn: c, token: pgToken(c), key: key, id: id}
	switch l.kind {
	case PGRow, PGAdvisoryXact:
		return &pgTxLease{pgLease: base}
	case PGAdvisory:
		return &pgAdvisoryLease{pgLease: base}
	}
	return &pgRowOutsideLease{pgLease: base}
}
