package drivers_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// BenchmarkDriverCycle compares a pod's acquire+release cycle through the
// proxies with the token lock in process and the same lock in a driver
// process, distinct keys per pod. With one pod, ns/cycle is what one
// cycle costs a pod (the target: a driver pod at most 1.5x an in-process
// one); with eight pods on this 2-core machine the figure is throughput
// under CPU saturation, where every extra process and pipe write competes
// for the same two cores. cpu-ns/cycle is the CPU time the harness,
// redis-server and the drivers spent per cycle, all told (and then each
// apart): on a shared machine it moves less with the neighbours' load
// than the wall time. *-switches/cycle count each part's context
// switches: how often its threads slept and were woken, the cost a
// process boundary adds.
//
//	go test -run '^$' -bench BenchmarkDriverCycle -benchtime 3s ./drivers/
//
// LOCKCHAOS_BENCH_DRIVER replaces the driver's command (another build to
// compare with, or the driver under strace or perf).
func BenchmarkDriverCycle(b *testing.B) {
	c := backendtest.Cluster(b, deployment.Config{Clients: 8})
	token, _ := lockimpl.Lookup(lockimpl.NameToken)
	driver := goDriver + " --lock token"
	if cmd := os.Getenv("LOCKCHAOS_BENCH_DRIVER"); cmd != "" {
		driver = cmd
	}
	specs := map[string]lockimpl.Spec{"in-process": token,
		"driver": drivers.Driver{Name: "proc-token", Command: driver}.Spec()}
	for _, pods := range []int{1, 8} {
		for _, name := range []string{"in-process", "driver"} {
			b.Run(fmt.Sprintf("pods=%d/%s", pods, name), func(b *testing.B) {
				benchCycles(b, c, specs[name], name, pods)
			})
		}
	}
}

func benchCycles(b *testing.B, c *deployment.Deployment, spec lockimpl.Spec, name string, pods int) {
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
	cpu0 := treeCPU()
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
	cpu1 := treeCPU()
	b.StopTimer()
	if n := failed.Load(); n > int64(b.N)/100 {
		b.Fatalf("%d of %d cycles failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())*float64(pods)/float64(b.N), "ns/pod-cycle")
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(cpu1.total()-cpu0.total()), "cpu-ns/cycle")
	b.ReportMetric(per(cpu1.harness-cpu0.harness), "harness-cpu-ns/cycle")
	b.ReportMetric(per(cpu1.redis-cpu0.redis), "redis-cpu-ns/cycle")
	sw := func(n int64) float64 { return float64(n) / float64(b.N) }
	b.ReportMetric(sw(cpu1.harnessSw-cpu0.harnessSw), "harness-switches/cycle")
	b.ReportMetric(sw(cpu1.redisSw-cpu0.redisSw), "redis-switches/cycle")
	if name == "driver" {
		b.ReportMetric(per(cpu1.drivers-cpu0.drivers), "driver-cpu-ns/cycle")
		b.ReportMetric(sw(cpu1.driversSw-cpu0.driversSw), "driver-switches/cycle")
	}
}

// cpuTimes is the CPU time (user and system) used so far by this process
// (the harness and its proxies), its redis-server children and its other
// descendants (the drivers).
type cpuTimes struct {
	harness, redis, drivers time.Duration
	// Context switches of every thread of these processes: how often they
	// slept and were woken (or were preempted).
	harnessSw, redisSw, driversSw int64
}

func (c cpuTimes) total() time.Duration { return c.harness + c.redis + c.drivers }

// treeCPU reads the CPU times of this process and its live descendants.
// On a shared machine they say what a cycle costs better than wall time,
// which depends on what else runs.
func treeCPU() cpuTimes {
	const tick = 10 * time.Millisecond // USER_HZ, 100 on Linux
	procs := map[int]backendtest.Proc{}
	for _, p := range backendtest.Processes() {
		procs[p.Pid] = p
	}
	me := os.Getpid()
	var c cpuTimes
	for pid, p := range procs {
		d := time.Duration(p.CPUTicks) * tick
		if pid == me {
			c.harness += d
			c.harnessSw += switches(pid)
			continue
		}
		for up := p.PPid; up > 1; up = procs[up].PPid {
			if up == me {
				if strings.HasPrefix(p.Comm, "redis-server") {
					c.redis += d
					c.redisSw += switches(pid)
				} else {
					c.drivers += d
					c.driversSw += switches(pid)
				}
				break
			}
			if _, ok := procs[up]; !ok {
				break
			}
		}
	}
	return c
}

// switches sums the context switches of a process's threads.
func switches(pid int) int64 {
	var n int64
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}
