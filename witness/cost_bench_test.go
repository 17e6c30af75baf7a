package witness_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/witness"
	"github.com/redis/go-redis/v9"
)

// The ways to watch a Redis server, by what they cost a lock's cycle
// (SET NX PX, then the compare-and-delete release) on a real
// redis-server: nothing watching; the witness (keyspace notifications
// and a read after each write); MONITOR, read as it streams; a probe
// (GET and PTTL) the client sends after each acquire. ns/cycle is the
// client's; the witness and MONITOR readers run beside it.
//
//	go test -run XXX -bench LockCycle -benchtime 3s ./witness/
func BenchmarkLockCycle(b *testing.B) {
	for _, how := range []string{"none", "witness", "monitor", "probe"} {
		b.Run(how, func(b *testing.B) {
			dep := backendtest.Cluster(b, deployment.Config{})
			addr := dep.Node(0).Addr()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
			defer rdb.Close()
			ctx := context.Background()
			var events atomic.Int64
			switch how {
			case "witness":
				w := witness.Start(ctx, witness.Config{Nodes: dep.Nodes(), Keys: []string{"order:1"},
					Sink: func(string, backend.KeyChange) { events.Add(1) }})
				defer w.Stop()
			case "monitor":
				stop := monitor(b, addr, &events)
				defer stop()
			}
			release := redis.NewScript(`if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0`)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				tok := fmt.Sprint(i)
				if ok, err := rdb.SetNX(ctx, "order:1", tok, 300*time.Millisecond).Result(); err != nil || !ok {
					b.Fatalf("acquire: %v %v", ok, err)
				}
				if how == "probe" {
					rdb.Get(ctx, "order:1")
					rdb.PTTL(ctx, "order:1")
				}
				if err := release.Run(ctx, rdb, []string{"order:1"}, tok).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/cycle")
		})
	}
}

// monitor streams MONITOR's lines until stop, counting them.
func monitor(b *testing.B, addr string, lines *atomic.Int64) (stop func()) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(conn)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			lines.Add(1)
		}
	}()
	return func() { _ = conn.Close(); <-done }
}
