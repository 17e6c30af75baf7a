package drivers_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/faults/faultstest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// BenchmarkDriverCycle compares one pod's acquire+release cycle through
// the proxies with the token lock in process and the same lock in a driver
// process (8 pods, distinct keys). The target: a driver pod costs at most
// 1.5x an in-process one.
//
//	go test -run '^$' -bench BenchmarkDriverCycle -benchtime 3s ./drivers/
func BenchmarkDriverCycle(b *testing.B) {
	const pods = 8
	c := faultstest.Cluster(b, faults.ClusterConfig{Clients: pods})
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	specs := map[string]lockimpl.Spec{"in-process": token,
		"driver": drivers.Driver{Name: "proc-token", Command: goDriver + " --lock token"}.Spec()}
	for _, name := range []string{"in-process", "driver"} {
		b.Run(name, func(b *testing.B) {
			lockers := make([]lockimpl.Locker, pods)
			for i := range pods {
				rdb, err := lockimpl.NewRedisClient(c.ClientAddrs(i)[0], lockimpl.ClientConfig{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = rdb.Close() })
				l, err := specs[name].Build(lockimpl.Env{Pod: i, Clients: []redis.UniversalClient{rdb}, Addrs: c.ClientAddrs(i),
					TTL: 10 * time.Second, CallTimeout: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				if cl, ok := l.(interface{ Close() error }); ok {
					b.Cleanup(func() { _ = cl.Close() })
				}
				lockers[i] = l
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i, l := range lockers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := fmt.Sprintf("bench:%s:%d", name, i)
					for left.Add(-1) >= 0 {
						ctx, cancel := context.WithTimeout(context.Background(), time.Second)
						lease, err := l.Acquire(ctx, key)
						if err == nil {
							_ = lease.Release(ctx)
						}
						cancel()
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
		})
	}
}
