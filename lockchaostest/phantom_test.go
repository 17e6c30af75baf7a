package lockchaostest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/redis/go-redis/v9"
)

// retryLock is Dapr's Redis lock as go-redis's default retries make it:
// SET NX PX with a read timeout shorter than a slow reply, the write
// resent once when its reply times out, and "key exists" read as a
// definite refusal. When the first write landed, the resent one finds
// the pod's own key: the lock answers "not acquired" and leaves its
// lease on the server for a whole lease, held by nobody.
type retryLock struct {
	rdb          redis.UniversalClient
	lease, first time.Duration // its lease; the first write's read timeout
}

var retryLockSpec = lockimpl.Spec{Name: "retry-setnx", Doc: "SET NX PX resent once on a timeout (go-redis retries)",
	Nodes: 1, Lease: 8, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return &retryLock{rdb: env.Clients[0], lease: 8 * env.TTL, first: env.TTL / 3}, nil
	}}

func (l *retryLock) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	first, cancel := context.WithTimeout(ctx, l.first)
	ok, err := l.rdb.SetNX(first, key, tok, l.lease).Result()
	cancel()
	if err != nil && ctx.Err() == nil {
		ok, err = l.rdb.SetNX(ctx, key, tok, l.lease).Result() // the retry: as long as the caller waits
	}
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, lockimpl.ErrNotAcquired
	}
	return &retryLease{rdb: l.rdb, key: key, token: tok}, nil
}

type retryLease struct {
	rdb        redis.UniversalClient
	key, token string
}

var compareAndDelete = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

func (l *retryLease) Token() string       { return l.token }
func (*retryLease) Fence() uint64         { return 0 }
func (*retryLease) Lost() <-chan struct{} { return nil }
func (l *retryLease) Release(ctx context.Context) error {
	n, err := compareAndDelete.Run(ctx, l.rdb, []string{l.key}, l.token).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return lockimpl.ErrNotHeld
	}
	return nil
}

// phantomScenario holds every reply back past the lock's first read
// timeout (a third of the TTL) but well inside its lease (8 TTLs): the
// winning SET NX times out, its resend finds the pod's own key.
var phantomScenario = scenarios.Scenario{Name: "phantom-lease", Description: "replies held back past a retrying lock's read timeout",
	Duration: 3 * time.Second, CallTimeout: 2 * time.Second,
	Faults: []faults.Spec{{Kind: "slow-reply", Params: faults.SlowReplyParams{Delay: 200 * time.Millisecond, Duration: 500 * time.Millisecond}}},
	GapMin: 500 * time.Millisecond, GapMax: time.Second}

// On real Redis, a lock that leaves phantom leases is caught: the
// property fails with a sentence naming the refused acquire. (The cell
// stops at its first decisive violation, usually before the phantom's
// time against deadlock-free's bound is up: the checker's own tests
// judge that on whole histories.)
func TestPhantomLeaseCaughtOnARetryingLock(t *testing.T) {
	res := lockchaostest.RunScenario(t, retryLockSpec, phantomScenario, lockchaostest.Expect{Safety: lockchaostest.Either,
		Liveness: lockchaostest.Stuck})
	var pl *checker.Result
	for i := range res.Results {
		if res.Results[i].Property == checker.PhantomLease {
			pl = &res.Results[i]
		}
	}
	if pl == nil || pl.Status != checker.Fail || len(pl.Violations) == 0 {
		t.Fatalf("phantom-lease %+v: the retrying lock's phantom was not caught", pl)
	}
	s := pl.Violations[0].Summary
	t.Logf("phantom-lease: %s", s)
	for _, want := range []string{"'s acquire of ", "was answered refused though its write had landed", "a lease nobody believed it held"} {
		if !strings.Contains(s, want) {
			t.Errorf("sentence %q lacks %q", s, want)
		}
	}
}
