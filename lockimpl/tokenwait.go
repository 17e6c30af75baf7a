package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NameTokenWait is the token lock that waits for a replica.
const NameTokenWait = "token-wait"

// TokenWait is the token lock with the usual mitigation for asynchronous
// replication: after SET NX PX it runs WAIT 1 and believes it holds the
// lock only once a replica has the key, so a failover to that replica
// cannot lose it. Without the acknowledgement within the wait it deletes
// its key again and reports the lock not acquired.
type TokenWait struct {
	Token
	wait time.Duration
}

// NewTokenWait returns the lock on one Redis service with at least one
// replica; wait bounds the WAIT (default TTL/4).
func NewTokenWait(rdb redis.UniversalClient, cfg TokenConfig, wait time.Duration) (*TokenWait, error) {
	t, err := NewToken(rdb, cfg)
	if err != nil {
		return nil, err
	}
	if wait <= 0 {
		wait = t.ttl / 4
	}
	return &TokenWait{Token: *t, wait: wait}, nil
}

// ErrNotReplicated wraps ErrNotAcquired when no replica acknowledged the
// lock key within the wait.
var ErrNotReplicated = fmt.Errorf("%w: no replica acknowledged the lock key", ErrNotAcquired)

// Acquire runs SET NX PX, then WAIT 1 on the same connection: WAIT counts
// the replicas that have the writes of its own connection, so two calls
// from the pool could ask about the wrong one.
func (t *TokenWait) Acquire(ctx context.Context, key string) (Lease, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	var cmd interface {
		redis.Cmdable
		Do(ctx context.Context, args ...interface{}) *redis.Cmd
	} = t.rdb
	rdb := t.rdb
	if cc, ok := t.rdb.(*redis.ClusterClient); ok {
		// WAIT names no key: a cluster client sends it to any node, where
		// it counts nothing of this write and answers at once (measured:
		// cluster-manual-failover-force lost acknowledged keys). Both go
		// to the key's primary, on one connection.
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("lockimpl: token-wait acquire %s: %w", key, err)
		}
		rdb = node
	}
	if c, ok := rdb.(interface{ Conn() *redis.Conn }); ok {
		conn := c.Conn()
		defer conn.Close()
		cmd = conn
	}
	ok, err := cmd.SetNX(ctx, key, tok, t.ttl).Result()
	if err != nil {
		if cc, isCluster := t.rdb.(*redis.ClusterClient); isCluster && movedOrAsk(err) {
			// The key's slot is elsewhere now; nothing was written.
			cc.ReloadState(ctx)
			return nil, fmt.Errorf("%w: %s is served elsewhere now (%w)", ErrNotAcquired, key, err)
		}
		return nil, fmt.Errorf("lockimpl: token-wait acquire %s: %w", key, err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	l := &tokenLease{rdb: t.rdb, key: key, token: tok}
	acks, err := cmd.Do(ctx, "WAIT", 1, t.wait.Milliseconds()).Int64()
	if err == nil && acks >= 1 {
		return l, nil
	}
	// Not durable: take the key back so nobody waits on a lock we do not
	// claim. If that fails too, the outcome is unknown, as the error says.
	if rerr := l.Release(ctx); rerr != nil && !errors.Is(rerr, ErrNotHeld) {
		//nolint:errorlint // err is nil when WAIT answered with no ack: %w would print %!w(<nil>)
		return nil, fmt.Errorf("lockimpl: token-wait acquire %s: WAIT: %v; release: %w", key, err, rerr)
	}
	if err != nil {
		return nil, fmt.Errorf("lockimpl: token-wait acquire %s: WAIT: %w", key, err)
	}
	return nil, ErrNotReplicated
}

// movedOrAsk reports a cluster redirect: the command did not run.
func movedOrAsk(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask
}

var tokenWaitSpec = Spec{
	Name:         NameTokenWait,
	Doc:          "token lock that believes it holds only once a replica has the key (WAIT 1)",
	Nodes:        1,
	NeedsReplica: true,
	New: func(env Env) (Locker, error) {
		wait := env.TTL / 4
		if env.CallTimeout > 0 {
			wait = min(wait, env.CallTimeout/2) // the WAIT must end before the call times out
		}
		return NewTokenWait(env.Clients[0], TokenConfig{TTL: env.TTL}, wait)
	},
}
