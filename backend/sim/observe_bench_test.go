package sim

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/redis/go-redis/v9"
)

// BenchmarkObservedCommand is the server's cost of one command and its
// reply (a lock cycle: SET NX PX, then the release script, natively),
// with nobody observing the node and with an observer of the lock's
// keys, on a node holding the keys a cell keeps there (the fence
// counter, the protected resource, a few more). One op is one reply.
// Real time, outside a bubble, straight to the node (no link): what is
// measured is miniredis, the hook and the diff.
func BenchmarkObservedCommand(b *testing.B) {
	src := lockchaosScripts(b)["release"]
	for _, observed := range []bool{false, true} {
		for _, others := range []int{2, 20} {
			b.Run(fmt.Sprintf("observed=%v/keys=%d", observed, others+1), func(b *testing.B) {
				n := newNode("bench")
				defer n.Close()
				frozen(n)
				ctx := context.Background()
				rdb := redis.NewClient(&redis.Options{Addr: "10.255.0.1:6379", Protocol: 2, DisableIdentity: true,
					PoolSize: 1, Dialer: func(context.Context, string, string) (net.Conn, error) { return n.dial() }})
				defer rdb.Close()
				for i := range others {
					_ = rdb.Set(ctx, fmt.Sprint("order:", i), "0", 0).Err()
				}
				_ = rdb.Incr(ctx, "lock:order:1:fence").Err()
				sha, _ := rdb.ScriptLoad(ctx, src).Result()
				var reports int
				if observed {
					stop := n.ObserveKeys(func(k string) bool { return strings.HasPrefix(k, "lock:") },
						func(backend.KeyChange) { reports++ })
					defer stop()
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if i%2 == 0 {
						_ = rdb.SetNX(ctx, "lock:order:1", "tok", time.Minute).Err()
					} else {
						_ = rdb.EvalSha(ctx, sha, []string{"lock:order:1"}, "tok").Err()
					}
				}
				b.StopTimer()
				if observed && reports < b.N/2 {
					b.Fatalf("%d reports for %d commands", reports, b.N)
				}
			})
		}
	}
}

// BenchmarkDiff is one diff alone: the observers' work after a command
// that changed nothing, on a node with 3 and 21 keys (one matched lock
// key, its fence counter, the rest the workload's).
func BenchmarkDiff(b *testing.B) {
	for _, others := range []int{1, 19} {
		b.Run(fmt.Sprintf("keys=%d", others+2), func(b *testing.B) {
			n := newNode("bench")
			defer n.Close()
			frozen(n)
			for i := range others {
				_ = n.mr.Set(fmt.Sprint("order:", i), "0")
			}
			_ = n.mr.Set("lock:order:1", "tok")
			n.mr.SetTTL("lock:order:1", time.Minute)
			_ = n.mr.Set("lock:order:1:fence", "7")
			stop := n.ObserveKeys(func(k string) bool { return strings.HasPrefix(k, "lock:") }, func(backend.KeyChange) {})
			defer stop()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				n.obs.mu.Lock()
				n.obs.diffAll(time.Now(), backend.KeySet, false)
				n.obs.mu.Unlock()
			}
		})
	}
}

// frozen stops n's clock for miniredis, as inside a bubble, where a
// command and the diff after it run at one virtual instant (miniredis
// advances its TTLs on the first access at each new instant: that cost
// is the command's, with or without an observer). Outside a bubble the
// wall clock moves between every access and each would pay it again.
func frozen(n *Node) { n.mr.SetTime(time.Now()) }

// TestObserverCellCost (LOCKCHAOS_SIM_OBSERVE_COST=1) runs a contended
// lock cell in a bubble (6 pods through their links, SET NX PX and the
// release script, natively, for 2 s of virtual time) with and without
// an observer, alternately, and logs the CPU time (user and system, of
// the whole process) each took: the witness's share of a simulated
// cell's cost, less exposed to a loaded machine than wall time.
func TestObserverCellCost(t *testing.T) {
	if os.Getenv("LOCKCHAOS_SIM_OBSERVE_COST") == "" {
		t.Skip("set LOCKCHAOS_SIM_OBSERVE_COST=1 to measure")
	}
	release := lockchaosScripts(t)["release"]
	cpus := map[bool][]time.Duration{}
	commands := map[bool]map[int64]int{false: {}, true: {}}
	for rep := range 20 {
		for _, observed := range []bool{rep%2 == 0, rep%2 != 0} {
			start := cpuTime()
			synctest.Test(t, func(t *testing.T) { commands[observed][contend(t, observed, release)]++ })
			cpus[observed] = append(cpus[observed], cpuTime()-start)
		}
	}
	for _, observed := range []bool{false, true} {
		c := cpus[observed]
		slices.Sort(c)
		var n int64
		for k := range commands[observed] {
			n = k
		}
		t.Logf("observed=%v: commands per run %v; CPU median %v (%v per command), min %v, max %v", observed,
			commands[observed], c[len(c)/2], c[len(c)/2]/time.Duration(n), c[0], c[len(c)-1])
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// contend is the cell: pods acquire and release one key for 2 s of
// virtual time; it returns the commands sent.
func contend(t *testing.T, observed bool, release string) int64 {
	ctx := t.Context()
	b := New(nil)
	nd, _ := b.StartNode(ctx, backend.NodeConfig{Name: "node0"})
	n := nd.(*Node)
	defer n.Close()
	nw, _ := b.NewNetwork()
	defer nw.Close()
	if observed {
		defer n.ObserveKeys(func(k string) bool { return strings.HasPrefix(k, "lock:") }, func(backend.KeyChange) {})()
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(2 * time.Second)
	for p := range 6 {
		l, _ := nw.NewLink(fmt.Sprint("pod", p, "->node0"), n.Addr())
		rdb := redis.NewClient(&redis.Options{Addr: l.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
			Dialer: nw.(netfault.Dialer).DialContext})
		t.Cleanup(func() { _ = rdb.Close() })
		_ = rdb.Incr(ctx, "lock:fence").Err()
		_ = rdb.ScriptLoad(ctx, release).Err()
		wg.Go(func() {
			for i := 0; time.Now().Before(end); i++ {
				tok := fmt.Sprint(p, "-", i)
				sent.Add(1)
				if ok, _ := rdb.SetNX(ctx, "lock:a", tok, 50*time.Millisecond).Result(); !ok {
					time.Sleep(time.Millisecond)
					continue
				}
				time.Sleep(2 * time.Millisecond)
				sent.Add(1)
				_ = rdb.EvalSha(ctx, sha1hex(release), []string{"lock:a"}, tok).Err()
			}
		})
	}
	wg.Wait()
	return sent.Load()
}
