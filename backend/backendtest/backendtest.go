// Package backendtest holds test helpers for packages whose tests run real
// redis-server processes behind real proxies: a cluster that closes itself
// with the test, and a TestMain that fails the package if any process or
// temp dir it started is still there at the end.
package backendtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// leakOptions ignore goroutines that belong to libraries' process-wide
// machinery rather than to anything a test started.
var leakOptions = []goleak.Option{
	// testcontainers keeps an engine connection and its reaper session.
	goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*Reaper).connect.func1"),
	goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	// toxiproxy v2.12: a latency toxic holding a chunk when its proxy is
	// stopped blocks forever on its output (toxics/latency.go:44). The
	// failover fault must stop the replication link with data in flight
	// (those are the writes to lose), so one such goroutine may remain per
	// failover (with the link's head stub, the no-op toxic, behind it):
	// toxiproxy's, bounded, and not ours to end.
	goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*LatencyToxic).Pipe"),
	goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
}

// Main runs the package's tests and then checks that nothing leaked:
// no node left open, no redis-server child process alive, no temp dir of
// ours left behind. Use it as `func TestMain(m *testing.M) { backendtest.Main(m) }`.
func Main(m *testing.M) { MainWith(m, nil) }

// MainWith is Main with a cleanup run after the tests and before the
// checks (for fixtures shared by a package's tests).
func MainWith(m *testing.M, cleanup func()) {
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	// Goroutines: no watchdog outlives its release, no client loop its
	// run, no proxy or pool its close. goleak retries for a while, so
	// goroutines that are on their way out do not count.
	if err := goleak.Find(leakOptions...); err != nil {
		fmt.Fprintf(os.Stderr, "backendtest: goroutines leaked:\n%v\n", err)
		code = 1
	}
	if n := backend.KillAll(); n > 0 {
		fmt.Fprintf(os.Stderr, "backendtest: %d node(s) were left open by tests\n", n)
		code = 1
	}
	if pids := ChildRedisServers(); len(pids) > 0 {
		fmt.Fprintf(os.Stderr, "backendtest: redis-server children still alive: %v\n", pids)
		code = 1
	}
	// Only this process's dirs: other packages' tests run alongside.
	for _, d := range backend.TempDirs() {
		if _, err := os.Stat(d); err == nil {
			fmt.Fprintf(os.Stderr, "backendtest: temp dir left behind: %s\n", d)
			code = 1
		}
	}
	os.Exit(code)
}

// Proc is a live process as /proc/PID/stat describes it.
type Proc struct {
	Pid, PPid int
	Comm      string // the executable's name, as the kernel shortens it
	State     string // R, S, D, Z, T ...
	CPUTicks  int64  // user + system time, in USER_HZ ticks (1/100 s)
}

// Processes lists the live processes. One that ends while the list is
// read is left out.
func Processes() []Proc {
	var out []Proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Format: pid (comm) state ppid ... utime stime ...; comm may
		// hold spaces and parentheses, so it ends at the last ')'.
		s := string(b)
		open, closeIdx := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeIdx < open {
			continue
		}
		f := strings.Fields(s[closeIdx+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		out = append(out, Proc{Pid: pid, PPid: ppid, Comm: s[open+1 : closeIdx], State: f[0], CPUTicks: utime + stime})
	}
	return out
}

// ChildRedisServers returns the pids of live redis-server processes whose
// parent is this process (every node we start is our direct child).
func ChildRedisServers() []int {
	me := os.Getpid()
	var pids []int
	for _, p := range Processes() {
		if p.PPid == me && p.State != "Z" && strings.HasPrefix(p.Comm, "redis-server") {
			pids = append(pids, p.Pid)
		}
	}
	return pids
}

// Cluster starts a cluster that is closed when the test ends, on local
// redis-server processes unless cfg names another backend.
func Cluster(t testing.TB, cfg deployment.Config) *deployment.Deployment {
	t.Helper()
	if cfg.Backend == nil {
		cfg.Backend = process.Backend{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := deployment.New(ctx, cfg)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close cluster: %v", err)
		}
	})
	return c
}

// Client returns a go-redis client for addr with short timeouts, closed
// when the test ends. Tests use it to look at Redis directly.
func Client(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:                  addr,
		Protocol:              2,
		DisableIdentity:       true,
		MaxRetries:            -1,
		DialerRetries:         1,
		DialTimeout:           300 * time.Millisecond,
		ReadTimeout:           300 * time.Millisecond,
		WriteTimeout:          300 * time.Millisecond,
		ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Eventually polls cond every 10ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ClockShift moves n's clock b.N times (alternately forward and back) and
// measures how soon its TIME, read through rdb, shows each shift: the
// clock benchmarks of every backend. It reports mean-ms and worst-ms.
func ClockShift(b *testing.B, n backend.ClockNode, rdb *redis.Client) {
	ctx := context.Background()
	var worst, total time.Duration
	for i := range b.N {
		jump := time.Duration(1+i%2) * time.Second // alternate, so each shift is visible
		if i%2 == 1 {
			jump = -jump / 2
		}
		before := n.ClockOffset()
		start := time.Now()
		if err := n.ShiftClock(jump); err != nil {
			b.Fatal(err)
		}
		for {
			ts, err := rdb.Time(ctx).Result()
			if err != nil {
				b.Fatal(err)
			}
			if d := time.Until(ts) - (before + jump); d > -50*time.Millisecond && d < 50*time.Millisecond {
				break
			}
		}
		took := time.Since(start)
		worst, total = max(worst, took), total+took
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "mean-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}
