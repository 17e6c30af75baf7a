package lockimpl

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgLease is what every PostgreSQL lease shares: the session that holds
// the lock. A lease is used by one goroutine (its holder); the locker's
// Close may close the session's socket under it, which the next call on
// it sees as an error.
type pgLease struct {
	s     *pgSessions
	conn  *pgx.Conn
	token string
	key   string
	id    int32 // the lock's row id: an advisory lock's second key

	over   bool  // the session is no longer the lease's
	endErr error // what Release answers once over
}

func (l *pgLease) Token() string       { return l.token }
func (*pgLease) Fence() uint64         { return 0 }
func (*pgLease) Lost() <-chan struct{} { return nil }

// finish ends the lease's session; Release will answer endErr.
func (l *pgLease) finish(endErr error) error {
	if !l.over {
		l.over = true
		l.endErr = endErr
		l.s.drop(l.conn)
	}
	return endErr
}

// finishClean ends the lease on a session left clean (its lock given up,
// no transaction open), which becomes the pod's spare, as a pool takes a
// connection back; Release will answer endErr. The lease never touches
// the session again.
func (l *pgLease) finishClean(endErr error) error {
	if !l.over {
		l.over = true
		l.endErr = endErr
		l.s.putSpare(l.conn)
	}
	return endErr
}

// fail ends the session after a call on it failed: ErrNotHeld when the
// server had ended it (definite: the lock was gone), an indefinite error
// when we gave up waiting (the server may have held on until it saw the
// socket close).
func (l *pgLease) fail(what string, err error) error {
	if sessionGone(err) {
		return l.finish(fmt.Errorf("%w: %s %s: the server ended the session: %w", ErrNotHeld, what, l.key, err))
	}
	return l.finish(fmt.Errorf("lockimpl: postgres %s %s: %w", what, l.key, err))
}

// released answers a Release on a lease already over: its answer once,
// then ErrNotHeld (the session is gone, so is the lock).
func (l *pgLease) released() error {
	err := l.endErr
	l.endErr = ErrNotHeld
	return err
}

// releaseWith runs the statement that gives the lock up on the live
// session, then ends the session.
func (l *pgLease) releaseWith(ctx context.Context, sql string, args ...any) (pgxResult, error) {
	var r pgxResult
	var err error
	if len(args) == 0 {
		var tag pgconn.CommandTag
		tag, err = l.conn.Exec(ctx, sql)
		r.tag = tag.String()
	} else {
		err = l.conn.QueryRow(ctx, sql, args...).Scan(&r.ok)
	}
	if err != nil {
		err = l.fail("release", err)
		l.endErr = ErrNotHeld
		return r, err
	}
	_ = l.finishClean(ErrNotHeld) // a second Release finds nothing
	return r, nil
}

// pgxResult is a release statement's answer: a command tag, or a bool.
type pgxResult struct {
	tag string
	ok  bool
}

// pgRowOutsideLease holds the row lock in a transaction that does
// nothing else; the resource is outside the database.
type pgRowOutsideLease struct{ pgLease }

// Release commits the (empty) transaction, which frees the row.
func (l *pgRowOutsideLease) Release(ctx context.Context) error {
	if l.over {
		return l.released()
	}
	_, err := l.releaseWith(ctx, "COMMIT")
	return err
}

// pgAdvisoryLease holds a session advisory lock.
type pgAdvisoryLease struct{ pgLease }

// Release unlocks (false: the session no longer held it), then ends the
// session.
func (l *pgAdvisoryLease) Release(ctx context.Context) error {
	if l.over {
		return l.released()
	}
	r, err := l.releaseWith(ctx, "SELECT pg_advisory_unlock($1, $2)", l.s.target.Class(), l.id)
	if err != nil {
		return err
	}
	if !r.ok {
		return fmt.Errorf("%w: pg_advisory_unlock %s: the session held no such lock", ErrNotHeld, l.key)
	}
	return nil
}
