// Package lockimpl defines what a lock is to lockchaos (Locker and Lease)
// and holds every lock implementation the harness knows: the ones people
// really deploy, bugs included, because showing those bugs is the point.
//
// Errors follow one rule: ErrNotAcquired and ErrNotHeld are definite (the
// operation certainly did not happen); every other error is indefinite (a
// timeout or an I/O error: the operation may or may not have happened).
// The checkers treat the two kinds differently, so implementations must not
// blur them.
package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors.
var (
	// ErrNotAcquired is definite: someone else holds the lock.
	ErrNotAcquired = errors.New("lockimpl: not acquired")
	// ErrNotHeld is definite: release found no lease of ours (it expired,
	// or someone else's lock is there now).
	ErrNotHeld = errors.New("lockimpl: not held")
	// ErrInvalidConfig means a Config failed Validate.
	ErrInvalidConfig = errors.New("lockimpl: invalid config")
	// ErrUnknownLock means a lock name is not one of Names.
	ErrUnknownLock = errors.New("lockimpl: unknown lock")
	// ErrBroken means the lock cannot go on at all (its driver process
	// died, hung or wrote garbage): not an outcome of the operation but a
	// failure of the harness's setup, which stops the cell and reports it.
	ErrBroken = errors.New("lockimpl: lock broken")
	// ErrUnsupported means the lock refuses the cell's deployment (Dapr's
	// Redis lock refuses a node with replicas): a Spec's New returns it
	// (Unsupported builds one with the reason), and the cell is skipped
	// with that reason, not failed as a harness error.
	ErrUnsupported = errors.New("lockimpl: not supported by this lock")
)

// UnsupportedError is an ErrUnsupported with the lock's own reason.
type UnsupportedError struct{ Reason string }

func (e *UnsupportedError) Error() string { return ErrUnsupported.Error() + ": " + e.Reason }
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Unsupported is the error a Spec's New returns when the lock refuses the
// deployment it was given, with the reason in the lock's words:
//
//	if replicas > 0 {
//		return nil, lockimpl.Unsupported("dapr's redis lock refuses a node with %d replica(s)", replicas)
//	}
func Unsupported(format string, args ...any) error {
	return &UnsupportedError{Reason: fmt.Sprintf(format, args...)}
}

// Locker hands out leases on keys. Acquire makes one attempt: retrying is
// the caller's policy, so the harness sees every attempt.
type Locker interface {
	Acquire(ctx context.Context, key string) (Lease, error)
}

// Lease is one successful acquisition.
type Lease interface {
	// Token is the value that identifies this holder in Redis ("" if none).
	Token() string
	// Fence is the fencing number handed out with the lease (0 if none).
	Fence() uint64
	// Lost is closed when the lock knows it lost the lease; nil if it never
	// knows (most Redis locks: that is their weakness).
	Lost() <-chan struct{}
	// Release gives the lock up. ErrNotHeld is definite; other errors are
	// indefinite.
	Release(ctx context.Context) error
}

// TxLease is a lease whose protected resource lives in the lock's own
// transaction (PostgreSQL's row lock with the resource's row beside it,
// Spec.InTransaction): the workload reads and writes the resource through
// it, and the write commits the transaction, which also releases the lock.
// A holder whose session the server ended (a timeout, a disconnect) has
// its commit refused: the transaction fences the write, for a resource in
// the same database only. Release after CommitWrite has nothing left to do.
type TxLease interface {
	Lease
	// ReadResource reads key's counter inside the transaction.
	ReadResource(ctx context.Context, key string) (int64, error)
	// CommitWrite writes value for key and commits. nil: committed.
	// ErrNotHeld (definite): the commit failed, the write did not happen.
	// Any other error is indefinite: the commit's answer was lost and could
	// not be settled (pg_xact_status) because the server was out of reach.
	CommitWrite(ctx context.Context, key string, value int64) error
}

// IsDefinite reports whether err says for certain that the operation did
// not happen (nil is definite too: it did happen).
func IsDefinite(err error) bool {
	return err == nil || errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNotHeld)
}

// DefaultTTL is the lease time every Redis lock uses when its Config leaves
// TTL zero, and every scenario that sets none: the one place this default
// lives. It is scaled for the harness (a scenario cell lasts seconds);
// production locks usually hold for seconds to minutes.
const DefaultTTL = 300 * time.Millisecond

// validTTL checks a TTL that Redis can store in milliseconds.
func validTTL(lock string, ttl time.Duration) error {
	if ttl == 0 {
		return nil
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%w: %s: TTL %v is below Redis's 1 ms resolution", ErrInvalidConfig, lock, ttl)
	}
	return nil
}

func orDefault(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return DefaultTTL
	}
	return ttl
}
