package lockimpl_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// TestExampleSpecOnRedis runs ExampleSpec's adapter on a real node: two
// pods contend for one key, and each refusal comes back definite.
func TestExampleSpecOnRedis(t *testing.T) {
	if _, err := process.FindRedisServer(); err != nil {
		t.Skip(err)
	}
	c := backendtest.Cluster(t, deployment.Config{Clients: 2})
	ctx := context.Background()
	pods := make([]lockimpl.Locker, 2)
	for i := range pods {
		addrs := c.ClientAddrs(i)
		rdb, err := lockimpl.NewRedisClient(addrs[0], lockimpl.ClientConfig{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		l, err := ordersSpec.Build(lockimpl.Env{Pod: i, Clients: []redis.UniversalClient{rdb}, Addrs: addrs, TTL: testTTL})
		if err != nil {
			t.Fatal(err)
		}
		pods[i] = l
	}
	lease, err := pods[0].Acquire(ctx, "order:1")
	if err != nil {
		t.Fatalf("first acquire: %v", err)
	}
	if _, err := pods[1].Acquire(ctx, "order:1"); !errors.Is(err, lockimpl.ErrNotAcquired) {
		t.Fatalf("second acquire: %v, want ErrNotAcquired", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, lockimpl.ErrNotHeld) {
		t.Fatalf("second release: %v, want ErrNotHeld", err)
	}
	if _, err := pods[1].Acquire(ctx, "order:1"); err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
}
