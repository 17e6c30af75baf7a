package lockchaostest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// docs/go.md ("A lock in process, step by step") and the README show the
// code between the "docs:begin NAME" and "docs:end NAME" lines below, word
// for word (TestDocsShowTestedCode holds them together).

// docs:begin lock
// The team's lock, in the style of bsm/redislock: Obtain sets a random
// token with SET NX PX, Refresh extends the TTL and Release deletes the key,
// each only while the key holds that token. Its types and errors are its own.
var (
	ErrNotObtained = errors.New("orderlock: not obtained")
	ErrLockNotHeld = errors.New("orderlock: lock not held")
)

type Client struct{ rdb redis.UniversalClient }

type Lock struct {
	c          *Client
	key, token string
}

var (
	refreshScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

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

func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	n, err := refreshScript.Run(ctx, l.c.rdb, []string{l.key}, l.token, ttl.Milliseconds()).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotObtained
	}
	return nil
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

// docs:end lock

// docs:begin adapter
// The adapter: a Spec with the lock's traits, and a Locker whose definite
// refusals are lockimpl's (ErrNotAcquired, ErrNotHeld). Every other error
// (a timeout, a broken connection) stays indefinite: it may have happened.
var orderLock = lockimpl.Spec{
	Name:  "orderlock",
	Doc:   "SET NX PX with a random token; release by compare-and-delete",
	Nodes: 1, // one Redis address (3 would start 3 independent primaries); no fencing
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
func (l lease) Fence() uint64         { return 0 }   // no fencing tokens
func (l lease) Lost() <-chan struct{} { return nil } // never learns of a loss
func (l lease) Release(ctx context.Context) error {
	err := l.Lock.Release(ctx)
	if errors.Is(err, ErrLockNotHeld) {
		return fmt.Errorf("%w: %w", lockimpl.ErrNotHeld, err)
	}
	return err
}

// docs:end adapter

// docs:begin renewing
// The same lock with a keep-alive: a goroutine per lease refreshes it every
// TTL/3, reports each attempt to env.OnRenew (the history records it), and
// closes Lost when a refresh finds the key gone, so the holder stops. The
// traits say so: Renews, SignalsLoss.
var renewingOrderLock = lockimpl.Spec{
	Name:        "orderlock-renewing",
	Doc:         "orderlock refreshed every TTL/3; the holder is told when a refresh finds the key gone",
	Nodes:       1,
	Renews:      true,
	SignalsLoss: true,
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return &renewingLocker{locker: locker{c: &Client{rdb: env.Clients[0]}, ttl: env.TTL},
			onRenew: env.OnRenew, closed: make(chan struct{})}, nil
	},
}

type renewingLocker struct {
	locker
	onRenew func(lockimpl.Renewal)
	wg      sync.WaitGroup
	once    sync.Once
	closed  chan struct{}
}

func (l *renewingLocker) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	got, err := l.locker.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	rl := &renewingLease{lease: got.(lease), stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	l.wg.Add(1)
	go l.keepAlive(rl)
	return rl, nil
}

// Close stops the keep-alive of every lease never released: the harness
// calls it (a Locker that is an io.Closer) when the pod shuts down.
func (l *renewingLocker) Close() error {
	l.once.Do(func() { close(l.closed) })
	l.wg.Wait()
	return nil
}

func (l *renewingLocker) keepAlive(rl *renewingLease) {
	defer l.wg.Done()
	defer close(rl.done)
	tick := time.NewTicker(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-rl.stop:
			return
		case <-l.closed:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		start := time.Now()
		err := rl.Refresh(ctx, l.ttl)
		cancel()
		lost := errors.Is(err, ErrNotObtained) // definite: the key is gone or someone else's
		if l.onRenew != nil {
			r := lockimpl.Renewal{Key: rl.key, Token: rl.token, Start: start, End: time.Now(), Renewed: err == nil}
			if err != nil && !lost {
				r.Err = err // indefinite: a timeout, a broken connection
			}
			l.onRenew(r)
		}
		if lost {
			close(rl.lost)
			return
		}
	}
}

type renewingLease struct {
	lease
	stopOnce         sync.Once
	stop, done, lost chan struct{}
}

func (l *renewingLease) Lost() <-chan struct{} { return l.lost }
func (l *renewingLease) Release(ctx context.Context) error {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	return l.lease.Release(ctx)
}

// docs:end renewing

// testOrderLock is the user's test; in their package it is
// func TestOrderLock(t *testing.T). This package's TestOrderLock runs it
// (a test function here would keep godoc from showing this file whole).
//
// docs:begin test
func testOrderLock(t *testing.T) {
	// On local redis-server processes: skipped where none is installed, or
	// failed with LOCKCHAOS_REQUIRE_REDIS=1 (for a CI job that must test on
	// real Redis).
	t.Run("redis", func(t *testing.T) {
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe)
	})
	// On the simulated backend: miniredis in virtual time, a cell in
	// milliseconds, no redis-server needed. With a fixed seed a simulated
	// cell replays exactly: the same schedule, the same violations.
	t.Run("sim", func(t *testing.T) {
		sim := lockchaostest.Options{Seed: 7, Duration: 4 * time.Second, Backend: lockchaostest.Sim(t)}
		lockchaostest.Run(t, orderLock, "baseline", lockchaostest.Safe, sim)
		// A stop-the-world pause past the TTL lets a second holder in: a
		// lock without fences is unsafe there, and the harness must see it.
		lockchaostest.Run(t, orderLock, "gc-pause", lockchaostest.Unsafe, sim)
		// Critical sections that run past the TTL: the keep-alive holds on.
		res := lockchaostest.Run(t, renewingOrderLock, "slow-holder", lockchaostest.Safe, sim)
		if res.Stats.RenewalsOK == 0 {
			t.Errorf("no renewal recorded: %s", res.Summary())
		}
		// A holder cut off from Redis can neither refresh nor learn that
		// it lost the lease. Either: reported, not gated (the test fails
		// only if the cell could not run or could not decide).
		lockchaostest.Run(t, renewingOrderLock, "client-partition", lockchaostest.Either, sim)
	})
}

// docs:end test

// A user's own lock, adapted to lockimpl.Spec, runs against catalog
// scenarios in testOrderLock above. An example gets no *testing.T, which
// Run and Sim need, so this one prints what that test hands Run: the
// locks' traits, and each scenario with the catalog's expectation for the
// built-in lock that works like each.
func Example() {
	for _, l := range []lockimpl.Spec{orderLock, renewingOrderLock} {
		if err := l.Validate(); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(l.Name+":", l.Describe())
	}
	for _, c := range []struct{ scenario, builtin string }{
		{"baseline", lockimpl.NameToken}, {"gc-pause", lockimpl.NameToken},
		{"slow-holder", lockimpl.NameTokenWatchdog}, {"client-partition", lockimpl.NameTokenWatchdog},
	} {
		sc, err := scenarios.Get(c.scenario)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s; the built-in %s lock is expected %s\n", sc.Name, sc.Description, c.builtin, sc.Expect[c.builtin])
	}
	// Output:
	// orderlock: 1 node
	// orderlock-renewing: 1 node, renews, signals loss
	// baseline: no faults; work well under the TTL; the built-in token lock is expected safe
	// gc-pause: a holder is frozen (stop-the-world) past the TTL (1.5x); the built-in token lock is expected unsafe
	// slow-holder: some critical sections run past the TTL (1.5x); the built-in token-watchdog lock is expected safe
	// client-partition: a holder is silently cut off from Redis during a long (2x TTL) critical section; the built-in token-watchdog lock is expected unsafe
}
