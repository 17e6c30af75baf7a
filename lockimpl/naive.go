package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// NaiveConfig configures Naive.
type NaiveConfig struct {
	// TTL is the lock's expiry. Default DefaultTTL.
	TTL time.Duration
}

// Validate reports a config that cannot work.
func (c NaiveConfig) Validate() error { return validTTL("naive", c.TTL) }

// Naive is the lock found in many code bases: SET key 1 NX PX ttl, and an
// unconditional DEL to release. Its bug, on purpose: a holder that runs past
// the TTL deletes whoever holds the lock now.
type Naive struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewNaive returns the naive lock on one Redis.
func NewNaive(rdb redis.UniversalClient, cfg NaiveConfig) (*Naive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Naive{rdb: rdb, ttl: orDefault(cfg.TTL)}, nil
}

// Acquire runs SET key 1 NX PX ttl.
func (n *Naive) Acquire(ctx context.Context, key string) (Lease, error) {
	ok, err := n.rdb.SetNX(ctx, key, "1", n.ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("lockimpl: naive acquire %s: %w", key, err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	return &naiveLease{rdb: n.rdb, key: key}, nil
}

type naiveLease struct {
	rdb redis.UniversalClient
	key string
}

func (*naiveLease) Token() string         { return "" }
func (*naiveLease) Fence() uint64         { return 0 }
func (*naiveLease) Lost() <-chan struct{} { return nil }

// Release runs DEL key, whoever's lock it is now. ErrNotHeld only when the
// key was gone; deleting a foreign lock returns nil, which is the bug.
func (l *naiveLease) Release(ctx context.Context) error {
	n, err := l.rdb.Del(ctx, l.key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("lockimpl: naive release %s: %w", l.key, err)
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

var naiveSpec = Spec{
	Name:  NameNaive,
	Doc:   "SET key 1 NX PX ttl, then an unconditional DEL: deletes whoever holds the lock now",
	Nodes: 1, BlindRelease: true,
	New: func(env Env) (Locker, error) {
		return NewNaive(env.Clients[0], NaiveConfig{TTL: env.TTL})
	},
}
