package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// FencedConfig configures Fenced.
type FencedConfig struct {
	// TTL is the lock's expiry. Default DefaultTTL.
	TTL time.Duration
	// FenceSuffix is appended to the lock key to name its counter.
	// Default ":fence".
	FenceSuffix string
}

// Validate reports a config that cannot work.
func (c FencedConfig) Validate() error { return validTTL("fenced", c.TTL) }

// Fenced is Token plus a fencing number: acquiring also INCRs a counter on
// the lock's node, atomically, and the lease carries the number. The lock
// alone is no safer than Token; the protected resource becomes safe by
// rejecting any request whose fence is below the highest it has seen.
type Fenced struct {
	rdb    redis.UniversalClient
	ttl    time.Duration
	suffix string
}

// NewFenced returns the fencing-token lock on one Redis.
func NewFenced(rdb redis.UniversalClient, cfg FencedConfig) (*Fenced, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	suffix := cfg.FenceSuffix
	if suffix == "" {
		suffix = ":fence"
	}
	return &Fenced{rdb: rdb, ttl: orDefault(cfg.TTL), suffix: suffix}, nil
}

// Acquire sets the lock and takes the next fence in one script.
func (f *Fenced) Acquire(ctx context.Context, key string) (Lease, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	fence, err := fencedAcquireScript.Run(ctx, f.rdb, []string{key, key + f.suffix}, tok, f.ttl.Milliseconds()).Int64()
	if err != nil {
		return nil, fmt.Errorf("lockimpl: fenced acquire %s: %w", key, err)
	}
	if fence <= 0 {
		return nil, ErrNotAcquired
	}
	return &tokenLease{rdb: f.rdb, key: key, token: tok, fence: uint64(fence)}, nil
}

var fencedSpec = Spec{
	Name:    NameFenced,
	Doc:     "token lock plus a fence from INCR on the lock's node; the resource checks fences",
	Nodes:   1,
	Fencing: true,
	New: func(env Env) (Locker, error) {
		return NewFenced(env.Clients[0], FencedConfig{TTL: env.TTL})
	},
}
