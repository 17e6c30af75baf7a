package lockimpl_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// ordersLock stands in for a lock a team already has: SET NX PX with a
// random token, released by a compare-and-delete script. It is not a
// lockimpl.Locker and its errors are its own.
type ordersLock struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

var (
	errLocked   = errors.New("orders: lock is taken")
	errNotOwner = errors.New("orders: lock is not ours")
)

var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (l *ordersLock) Lock(ctx context.Context, key string) (token string, err error) {
	token = strconv.FormatUint(rand.Uint64(), 36)
	ok, err := l.rdb.SetNX(ctx, key, token, l.ttl).Result()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errLocked
	}
	return token, nil
}

func (l *ordersLock) Unlock(ctx context.Context, key, token string) error {
	n, err := unlockScript.Run(ctx, l.rdb, []string{key}, token).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotOwner
	}
	return nil
}

// ordersLocker adapts ordersLock to lockimpl.Locker. The one thing to get
// right is the errors: a refusal the lock is sure of must become
// ErrNotAcquired or ErrNotHeld (definite: it did not happen); anything else
// (a timeout, a broken connection) stays as it is (indefinite: it may have
// happened), and the checker treats it so.
type ordersLocker struct{ l *ordersLock }

func (a ordersLocker) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	token, err := a.l.Lock(ctx, key)
	if err != nil {
		return nil, acquireErr(err)
	}
	return ordersLease{l: a.l, key: key, token: token}, nil
}

type ordersLease struct {
	l          *ordersLock
	key, token string
}

func (o ordersLease) Token() string         { return o.token }
func (o ordersLease) Fence() uint64         { return 0 }   // no fencing tokens
func (o ordersLease) Lost() <-chan struct{} { return nil } // never learns of a loss
func (o ordersLease) Release(ctx context.Context) error {
	return releaseErr(o.l.Unlock(ctx, o.key, o.token))
}

func acquireErr(err error) error {
	if errors.Is(err, errLocked) {
		return fmt.Errorf("%w: %w", lockimpl.ErrNotAcquired, err)
	}
	return err
}

func releaseErr(err error) error {
	if errors.Is(err, errNotOwner) {
		return fmt.Errorf("%w: %w", lockimpl.ErrNotHeld, err)
	}
	return err
}

// ordersSpec is the lock as the harness sees it: traits as data, and a
// constructor that gets one pod's clients (wired through the cell's
// proxies and fault hooks) and the cell's TTL.
var ordersSpec = lockimpl.Spec{
	Name:        "orders-lock",
	Doc:         "the orders service's SET NX PX lock, released by a compare-and-delete script",
	Nodes:       1,     // one Redis service address: Env.Clients has one client
	Fencing:     false, // no fencing tokens: overlapping holds are violations
	Renews:      false, // no watchdog: a lease lapses after its TTL
	SignalsLoss: false, // Lease.Lost is nil
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return ordersLocker{&ordersLock{rdb: env.Clients[0], ttl: env.TTL}}, nil
	},
}

// A user's own lock, declared for the harness. Pass ordersSpec to
// lockchaostest.Run, or lockimpl.Register it so scenario files and the
// command line can name it.
func ExampleSpec() {
	fmt.Println(ordersSpec.Name+":", ordersSpec.Describe(), "| valid:", ordersSpec.Validate() == nil)

	// Build checks the environment against the traits before it calls New.
	_, err := ordersSpec.Build(lockimpl.Env{TTL: time.Second})
	fmt.Println(err)

	// What the harness sees of each of the lock's errors.
	for _, err := range []error{
		acquireErr(errLocked),
		releaseErr(errNotOwner),
		acquireErr(context.DeadlineExceeded),
	} {
		fmt.Printf("%v: definite %t\n", err, lockimpl.IsDefinite(err))
	}
	// Output:
	// orders-lock: 1 node | valid: true
	// lockimpl: invalid config: orders-lock needs 1 Redis client(s), got 0
	// lockimpl: not acquired: orders: lock is taken: definite true
	// lockimpl: not held: orders: lock is not ours: definite true
	// context deadline exceeded: definite false
}
