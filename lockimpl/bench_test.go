package lockimpl_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// BenchmarkLockCycle measures acquire+release cycles per second with 8
// clients on distinct keys, straight to Redis and through the embedded
// toxiproxy (no toxics), for every Redis lock. The proxied/direct ratio is
// the harness's overhead; DESIGN section 8 asks for at least 0.5.
//
//	go test -run '^$' -bench BenchmarkLockCycle -benchtime 5s ./lockimpl/
func BenchmarkLockCycle(b *testing.B) {
	const clients = 8
	for _, name := range redisLocks {
		spec, _ := lockimpl.Lookup(name)
		cfg := deployment.Config{Clients: clients}
		if spec.Nodes > 1 {
			cfg.Topology, cfg.Nodes = deployment.Independent, spec.Nodes
		}
		c := backendtest.Cluster(b, cfg)
		for _, path := range []string{"direct", "proxied"} {
			b.Run(name+"/"+path, func(b *testing.B) {
				lockers := make([]lockimpl.Locker, clients)
				for i := range clients {
					addrs := c.ClientAddrs(i)
					if path == "direct" {
						addrs = addrs[:0:0]
						for _, n := range c.Nodes() {
							addrs = append(addrs, n.Addr())
						}
					}
					var nodes []redis.UniversalClient
					for _, a := range addrs {
						rdb, err := lockimpl.NewRedisClient(a, lockimpl.ClientConfig{})
						if err != nil {
							b.Fatal(err)
						}
						b.Cleanup(func() { _ = rdb.Close() })
						nodes = append(nodes, rdb)
					}
					l, err := spec.Build(lockimpl.Env{Pod: i, Clients: nodes, Addrs: addrs, TTL: 10 * time.Second})
					if err != nil {
						b.Fatal(err)
					}
					lockers[i] = l
				}
				// Warm every pool before the clock starts.
				for i, l := range lockers {
					lease, err := l.Acquire(ctx, fmt.Sprintf("bench:%s:%d", path, i))
					if err != nil {
						b.Fatal(err)
					}
					_ = lease.Release(ctx)
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				var failed atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for i, l := range lockers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := fmt.Sprintf("bench:%s:%d", path, i)
						for left.Add(-1) >= 0 {
							lease, err := l.Acquire(ctx, key)
							if err != nil {
								failed.Add(1)
								continue
							}
							if err := lease.Release(ctx); err != nil {
								failed.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				if f := failed.Load(); f > 0 {
					b.Fatalf("%d of %d cycles failed", f, b.N)
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
			})
		}
	}
}
