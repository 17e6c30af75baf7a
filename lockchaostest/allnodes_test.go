package lockchaostest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// allNodesLock is a user's lock over 3 independent nodes that acquires
// only when SET NX succeeds on every one: safe, but it cannot acquire while
// any node is down, so it is not fault-tolerant (a majority up is not
// enough for it). The liveness judgment must say so even when every
// node-down window is shorter than the acquire bound.
var allNodesLock = lockimpl.Spec{
	Name:  "all-nodes",
	Doc:   "SET NX PX on each of 3 independent nodes; held only when all 3 accepted",
	Nodes: 3,
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return allNodes{nodes: env.Clients[:3], ttl: env.TTL}, nil
	},
}

type allNodes struct {
	nodes []redis.UniversalClient
	ttl   time.Duration
}

// unlockScript deletes the key only while it carries our token.
var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

func (l allNodes) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	var refused, failed error
	for _, n := range l.nodes {
		ok, err := n.SetNX(ctx, key, token, l.ttl).Result()
		switch {
		case err != nil:
			failed = err
		case !ok:
			refused = errors.New("taken on a node")
		}
		if failed != nil || refused != nil {
			break
		}
	}
	if failed == nil && refused == nil {
		return &allNodesLease{l: l, key: key, token: token}, nil
	}
	// Undo what this attempt set; a node that errs may still hold it
	// until its TTL.
	for _, n := range l.nodes {
		unlockScript.Run(ctx, n, []string{key}, token)
	}
	if failed != nil {
		return nil, fmt.Errorf("all-nodes acquire %s: %w", key, failed)
	}
	return nil, fmt.Errorf("%w: %w", lockimpl.ErrNotAcquired, refused)
}

type allNodesLease struct {
	l          allNodes
	key, token string
}

func (l *allNodesLease) Token() string       { return l.token }
func (*allNodesLease) Fence() uint64         { return 0 }
func (*allNodesLease) Lost() <-chan struct{} { return nil }
func (l *allNodesLease) Release(ctx context.Context) error {
	var failed error
	deleted := 0
	for _, n := range l.l.nodes {
		v, err := unlockScript.Run(ctx, n, []string{l.key}, l.token).Int()
		if err != nil {
			failed = err
			continue
		}
		deleted += v
	}
	if failed != nil {
		return fmt.Errorf("all-nodes release %s: %w", l.key, failed)
	}
	if deleted == 0 {
		return fmt.Errorf("%w: all-nodes release %s", lockimpl.ErrNotHeld, l.key)
	}
	return nil
}

// TestAllNodesLockIsNotFaultTolerant: the all-nodes lock fails
// fault-tolerant under both scenarios that take a minority of nodes down,
// though no window outlasts the bound; on real Redis where there is a
// redis-server (LOCKCHAOS_ALLNODES_SEEDS runs that many seeds of each).
func TestAllNodesLockIsNotFaultTolerant(t *testing.T) {
	seeds := 1
	if n, err := strconv.Atoi(os.Getenv("LOCKCHAOS_ALLNODES_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for _, sc := range []string{"node-restart-delayed", "minority-partition"} {
		for seed := int64(1); seed <= int64(seeds); seed++ {
			t.Run(fmt.Sprintf("%s/%d", sc, seed), func(t *testing.T) {
				c := lockchaostest.Run(t, allNodesLock, sc, lockchaostest.Expect{Safety: lockchaostest.Either, Liveness: lockchaostest.Stuck},
					lockchaostest.Options{Seed: seed})
				if lv := c.LivenessFigures; lv != nil {
					t.Logf("share %.3f", lv.FreeWhileTrying)
				}
			})
		}
	}
}
