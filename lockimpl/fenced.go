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
	// FenceTTL is how long the counter lives after its last INCR; every
	// acquire pushes it out again, in the same script, so the counter
	// only lapses (and starts again at 1, below fences the resource has
	// seen) after FenceTTL without a single acquire: far beyond any cell,
	// whose length --max-duration and the cell timeout bound. Default
	// DefaultFenceTTL; negative: the counter never expires. The expiry is
	// there for someone else's Redis: a harness killed outright (SIGKILL)
	// cannot delete the counter, and a key without one would stay forever.
	FenceTTL time.Duration
}

// DefaultFenceTTL is the fence counter's expiry unless FencedConfig.FenceTTL
// says otherwise: a day after the last acquire.
const DefaultFenceTTL = 24 * time.Hour

// Validate reports a config that cannot work.
func (c FencedConfig) Validate() error { return validTTL("fenced", c.TTL) }

// Fenced is Token plus a fencing number: acquiring also INCRs a counter on
// the lock's node, atomically, and the lease carries the number. The lock
// alone is no safer than Token; the protected resource becomes safe by
// rejecting any request whose fence is below the highest it has seen.
type Fenced struct {
	rdb      redis.UniversalClient
	ttl      time.Duration
	suffix   string
	fenceTTL time.Duration // 0: never expires
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
	fenceTTL := cfg.FenceTTL
	switch {
	case fenceTTL == 0:
		fenceTTL = DefaultFenceTTL
	case fenceTTL < 0:
		fenceTTL = 0
	}
	return &Fenced{rdb: rdb, ttl: orDefault(cfg.TTL), suffix: suffix, fenceTTL: fenceTTL}, nil
}

// Acquire sets the lock and takes the next fence in one script, which also
// pushes the counter's expiry out (FencedConfig.FenceTTL).
func (f *Fenced) Acquire(ctx context.Context, key string) (Lease, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	fence, err := fencedAcquireScript.Run(ctx, f.rdb, []string{key, key + f.suffix}, tok, f.ttl.Milliseconds(),
		f.fenceTTL.Milliseconds()).Int64()
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
