package lockchaostest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// The team's lock, in the style of bsm/redislock: Obtain sets a random
// token with SET NX PX, Release deletes the key only while it holds that
// token. Its errors are its own.
var (
	ErrNotObtained = errors.New("orderlock: not obtained")
	ErrLockNotHeld = errors.New("orderlock: lock not held")
)

type Client struct{ rdb redis.UniversalClient }

type Lock struct {
	c          *Client
	key, token string
}

var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	token := strconv.FormatUint(rand.Uint64(), 36)
	ok, err := c.rdb.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotObtained
	}
	return &Lock{c: c, key: key, token: token}, nil
}

func (l *Lock) Release(ctx context.Context) error {
	n, err := releaseScript.Run(ctx, l.c.rdb, []string{l.key}, l.token).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLockNotHeld
	}
	return nil
}

// The adapter: a Spec with the lock's traits, and a Locker whose definite
// refusals are lockimpl's (ErrNotAcquired, ErrNotHeld). Every other error
// (a timeout, a broken connection) stays indefinite: it may have happened.
var orderLock = lockimpl.Spec{
	Name:  "orderlock",
	Doc:   "SET NX PX with a random token; release by compare-and-delete",
	Nodes: 1, // one Redis address; no fencing, no renewals, no loss signal
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return locker{c: &Client{rdb: env.Clients[0]}, ttl: env.TTL}, nil
	},
}

type locker struct {
	c   *Client
	ttl time.Duration
}

func (l locker) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	lk, err := l.c.Obtain(ctx, key, l.ttl)
	if errors.Is(err, ErrNotObtained) {
		return nil, fmt.Errorf("%w: %w", lockimpl.ErrNotAcquired, err)
	}
	if err != nil {
		return nil, err
	}
	return lease{lk}, nil
}

type lease struct{ *Lock }

func (l lease) Token() string         { return l.token }
func (l lease) Fence() uint64         { return 0 }
func (l lease) Lost() <-chan struct{} { return nil }
func (l lease) Release(ctx context.Context) error {
	err := l.Lock.Release(ctx)
	if errors.Is(err, ErrLockNotHeld) {
		return fmt.Errorf("%w: %w", lockimpl.ErrNotHeld, err)
	}
	return err
}

// testOrderLock is the user's test; in their package it is
// func TestOrderLock(t *testing.T). This package's TestOrderLock runs it.
// With a fixed seed a simulated cell replays exactly: the same schedule
// and the same violations, run after run.
func testOrderLock(t *testing.T) {
	// On local redis-server processes (skipped where none is installed).
	t.Run("redis", func(t *testing.T) {
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe)
	})
	// On the simulated backend: miniredis in virtual time, a cell in
	// milliseconds, no redis-server needed. A stop-the-world pause past the
	// TTL lets a second holder in: a lock without fences is unsafe there.
	t.Run("sim", func(t *testing.T) {
		sim := lockchaostest.Options{Seed: 7, Backend: lockchaostest.Sim(t)}
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe, sim)
		lockchaostest.Run(t, orderLock, "gc-pause", lockchaostest.Unsafe, sim)
	})
}

// A user's own lock, adapted to lockimpl.Spec, runs against catalog
// scenarios in testOrderLock above. An example gets no *testing.T, which
// Run and Sim need, so this one prints what that test hands Run: the
// lock's traits, and each scenario with the catalog's expectation for the
// built-in lock that works like this one.
func Example() {
	if err := orderLock.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(orderLock.Name+":", orderLock.Describe())
	for _, name := range []string{"baseline", "gc-pause"} {
		sc, err := scenarios.Get(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s; the built-in token lock is expected %s\n", sc.Name, sc.Description, sc.Expect[lockimpl.NameToken])
	}
	// Output:
	// orderlock: 1 node
	// baseline: no faults; work well under the TTL; the built-in token lock is expected safe
	// gc-pause: a holder is frozen (stop-the-world) past the TTL (1.5x); the built-in token lock is expected unsafe
}
