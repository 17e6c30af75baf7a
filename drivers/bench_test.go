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

// BenchmarkDriverCycle compares a pod's acquire+release cycle through the
// proxies with the token lock in process and the same lock in a driver
// process, distinct keys per pod. With one pod, ns/cycle is what one
// cycle costs a pod (the target: a driver pod at most 1.5x an in-process
// one); with eight pods on this 2-core machine the figure is throughput
// under CPU saturation, where every extra process and pipe write competes
// for the same two cores.
//
//	go test -run '^$' -bench BenchmarkDriverCycle -benchtime 3s ./drivers/
func BenchmarkDriverCycle(b *testing.B) {
	c := faultstest.Cluster(b, faults.ClusterConfig{Clients: 8})
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	specs := map[string]lockimpl.Spec{"in-process": token,
		"driver": drivers.Driver{Name: "proc-token", Command: goDriver + " --lock token"}.Spec()}
	for _, pods := range []int{1, 8} {
		for _, name := range []string{"in-process", "driver"} {
			b.Run(fmt.Sprintf("pods=%d/%s", pods, name), func(b *testing.B) {
				benchCycles(b, c, specs[name], name, pods)
			})
		}
	}
}

func benchCycles(b *testing.B, c *faults.Cluster, spec lockimpl.Spec, name string, pods int) {
	lockers := make([]lockimpl.Locker, pods)
	for i := range pods {
		rdb, err := lockimpl.NewRedisClient(c.ClientAddrs(i)[0], lockimpl.ClientConfig{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rdb.Close() })
		l, err := spec.Build(lockimpl.Env{Pod: i, Clients: []redis.UniversalClient{rdb}, Addrs: c.ClientAddrs(i),
			TTL: 10 * time.Second, CallTimeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if cl, ok := l.(interface{ Close() error }); ok {
			b.Cleanup(func() { _ = cl.Close() })
		}
		lockers[i] = l
	}
	var left, failed atomic.Int64
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
					err = lease.Release(ctx)
				}
				if err != nil {
					failed.Add(1)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > int64(b.N)/100 {
		b.Fatalf("%d of %d cycles failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())*float64(pods)/float64(b.N), "ns/pod-cycle")
}
