package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgTxLease is the lease of a lock held by a transaction that also
// carries the resource's write (pg-row, pg-advisory-xact): the commit
// publishes the write and frees the lock at once, and a session the
// server ended cannot commit, so the write is fenced by the transaction.
type pgTxLease struct{ pgLease }

var _ TxLease = (*pgTxLease)(nil)

// ReadResource reads key's counter inside the transaction (0 before its
// first write). A failure ends the session: the transaction can no
// longer commit, so CommitWrite will answer ErrNotHeld.
func (l *pgTxLease) ReadResource(ctx context.Context, key string) (int64, error) {
	if l.over {
		return 0, fmt.Errorf("%w: read %s: the lease's session is over", ErrNotHeld, key)
	}
	var v int64
	err := l.conn.QueryRow(ctx, "SELECT value FROM "+PGResourceTable+" WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		err = l.fail("read", err)
		l.endErr = fmt.Errorf("%w: the session ended at a failed read", ErrNotHeld)
		return 0, err
	}
	return v, nil
}

// CommitWrite upserts the value inside the transaction and commits.
// Until COMMIT is on the wire every failure is ErrNotHeld: a transaction
// commits only on COMMIT, and its session is dropped. Once it is, only
// the server's answer is definite; a lost answer is settled with
// pg_xact_status on a fresh session.
func (l *pgTxLease) CommitWrite(ctx context.Context, key string, value int64) error {
	if l.over {
		return fmt.Errorf("%w: write %s: the lease's session is over", ErrNotHeld, key)
	}
	var xid string
	err := l.conn.QueryRow(ctx, "INSERT INTO "+PGResourceTable+" (key, value) VALUES ($1, $2) "+
		"ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value RETURNING pg_current_xact_id()::text", key, value).Scan(&xid)
	if err != nil {
		return l.finish(fmt.Errorf("%w: write %s: not committed: %w", ErrNotHeld, key, err))
	}
	tag, err := l.conn.Exec(ctx, "COMMIT")
	switch {
	case err == nil && tag.String() == "COMMIT":
		return l.finishClean(nil)
	case err == nil:
		// COMMIT of a failed transaction answers ROLLBACK, no error.
		return l.finish(fmt.Errorf("%w: write %s: the server rolled the transaction back", ErrNotHeld, key))
	case commitRefused(err):
		return l.finish(fmt.Errorf("%w: write %s: commit refused: %w", ErrNotHeld, key, err))
	}
	_ = l.finish(nil)
	l.endErr = fmt.Errorf("lockimpl: postgres write %s: commit's answer lost: %w", key, err)
	settled := l.settle(ctx, xid)
	if settled == nil || errors.Is(settled, ErrNotHeld) {
		l.endErr = settled
		return settled
	}
	return fmt.Errorf("lockimpl: postgres write %s: commit's answer lost (%w), and not settled: %w", key, err, settled)
}

// commitRefused reports a COMMIT that certainly did not apply: it never
// left (pgx says nothing was sent), the server answered ERROR, or the
// session had already died idle in its transaction. A FATAL may come
// after a commit applied (a backend terminated as it finished), so it is
// settled instead.
func commitRefused(err error) bool {
	if pgconn.SafeToRetry(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "ERROR" || pgErr.Code == sqlIdleTxTimeout
	}
	return false
}

// Release after CommitWrite has nothing left to do; before it, it rolls
// the transaction back (the lock goes with it).
func (l *pgTxLease) Release(ctx context.Context) error {
	if l.over {
		return l.released()
	}
	_, err := l.releaseWith(ctx, "ROLLBACK")
	return err
}

// pgSettlePoll is how often settle asks again while the transaction is
// still in progress.
const pgSettlePoll = 5 * time.Millisecond

// settle asks the server, on a fresh session within the call timeout,
// what became of transaction xid (the old session's pid is the lease's):
// committed → nil, aborted → ErrNotHeld. While it is in progress the old
// backend is still in its transaction (its socket's close not yet seen
// through a cut network, or COMMIT still running): it is terminated, if
// it is still the one running xid, so the answer comes; a commit under
// way finishes first.
func (l *pgTxLease) settle(ctx context.Context, xid string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.s.timeout)
	defer cancel()
	c, err := l.s.fresh(ctx)
	if err != nil {
		return err
	}
	defer l.s.drop(c)
	pid := l.conn.PgConn().PID()
	for {
		var status *string
		err := c.QueryRow(ctx, "SELECT pg_xact_status($1::xid8)", xid).Scan(&status)
		switch {
		case err != nil:
			return fmt.Errorf("pg_xact_status: %w", err)
		case status == nil:
			return fmt.Errorf("pg_xact_status(%s): too old to know", xid)
		case *status == "committed":
			return nil
		case *status == "aborted":
			return fmt.Errorf("%w: the server aborted transaction %s", ErrNotHeld, xid)
		}
		if _, err := c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "+
			"WHERE pid = $1 AND backend_xid = xid($2::xid8)", int64(pid), xid); err != nil {
			return fmt.Errorf("pg_terminate_backend: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("transaction %s still in progress: %w", xid, ctx.Err())
		case <-time.After(pgSettlePoll):
		}
	}
}
