package sim

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/redis/go-redis/v9"
)

// cell starts one node behind one link, in a bubble, and hands the test a
// client through the link; everything is closed before the bubble ends.
func cell(t *testing.T, f func(t *testing.T, n *Node, l *netfault.Link, rdb *redis.Client)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		b := New(nil)
		node, err := b.StartNode(t.Context(), backend.NodeConfig{Name: "node0"})
		if err != nil {
			t.Fatal(err)
		}
		defer node.Close()
		nw, _ := b.NewNetwork()
		defer nw.Close()
		l, err := nw.NewLink("client0->node0", node.Addr())
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(&redis.Options{Addr: l.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
			ContextTimeoutEnabled: true, ReadTimeout: time.Second, WriteTimeout: time.Second, DialerRetries: 1,
			Dialer: nw.(netfault.Dialer).DialContext})
		defer rdb.Close()
		// Warm the connection, as the harness does before faults: a fresh
		// one spends a round trip on its handshake.
		if err := rdb.Ping(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
		f(t, node.(*Node), l, rdb)
	})
}

func TestTTLFollowsVirtualTime(t *testing.T) {
	cell(t, func(t *testing.T, _ *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		start := time.Now()
		if ok, err := rdb.SetNX(ctx, "k", "v", 300*time.Millisecond).Result(); err != nil || !ok {
			t.Fatalf("SET NX: %v %v", ok, err)
		}
		if took := time.Since(start); !rtt(took, 0) {
			t.Errorf("a call on a healthy link took %v of virtual time, want one wire round trip", took)
		}
		time.Sleep(299 * time.Millisecond)
		if n, _ := rdb.Exists(ctx, "k").Result(); n != 1 {
			t.Fatal("key gone before its TTL")
		}
		time.Sleep(2 * time.Millisecond)
		if n, _ := rdb.Exists(ctx, "k").Result(); n != 0 {
			t.Fatal("key still there after its TTL")
		}
	})
}

func TestLatencyDelaysRepliesExactlyAndHealReleasesThem(t *testing.T) {
	cell(t, func(t *testing.T, _ *Node, l *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		if err := l.Latency(netfault.Downstream, 450*time.Millisecond, 0); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); !rtt(took, 450*time.Millisecond) {
			t.Errorf("ping took %v, want 450ms and a wire round trip", took)
		}
		// A reply held back is let go the moment the latency is healed.
		done := make(chan time.Duration)
		start = time.Now()
		go func() {
			_ = rdb.Ping(ctx).Err()
			done <- time.Since(start)
		}()
		time.Sleep(100 * time.Millisecond)
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
		if took := <-done; took != 100*time.Millisecond {
			t.Errorf("held reply arrived after %v, want exactly 100ms (at the heal)", took)
		}
	})
}

func TestBlackholeIsSilentAndHealClosesTheConnection(t *testing.T) {
	cell(t, func(t *testing.T, _ *Node, l *netfault.Link, rdb *redis.Client) {
		if err := l.Blackhole(netfault.Upstream); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := rdb.Set(ctx, "k", "v", 0).Err()
		if err == nil || time.Since(start) != 200*time.Millisecond {
			t.Fatalf("a dropped request: err %v after %v, want a timeout after 200ms", err, time.Since(start))
		}
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err != nil {
			t.Fatalf("after heal: %v", err)
		}
		if v, _ := rdb.Get(context.Background(), "k").Result(); v != "v" {
			t.Fatalf("after heal got %q", v)
		}
	})
}

func TestOneWayDropLetsCommandsLand(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, l *netfault.Link, rdb *redis.Client) {
		if err := l.Blackhole(netfault.Downstream); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := rdb.Set(ctx, "k", "landed", 0).Err(); err == nil {
			t.Fatal("reply came through a downstream drop")
		}
		v, err := n.Do(context.Background(), "GET", "k")
		if err != nil || v != "landed" {
			t.Fatalf("the command should have landed: %v %v", v, err)
		}
	})
}

func TestResetAndDisable(t *testing.T) {
	cell(t, func(t *testing.T, _ *Node, l *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := l.Reset(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatal("ping through a reset link succeeded")
		}
		_ = l.Heal()
		if err := l.Disable(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Ping(ctx).Err(); !errors.Is(err, errRefused.Err) {
			t.Fatalf("ping through a disabled link: %v, want connection refused", err)
		}
		_ = l.Heal()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("after heal: %v", err)
		}
	})
}

func TestKillRestartsEmptyAndPauseFreezesExactly(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatal("ping to a killed node succeeded")
		}
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if c, err := rdb.Exists(ctx, "k").Result(); err != nil || c != 0 {
			t.Fatalf("restarted node: exists %d, %v; want empty", c, err)
		}
		if err := n.Pause(); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(70 * time.Millisecond)
			_ = n.Resume()
		}()
		start := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		// The request waited at the node; the reply still crosses the wire.
		if took := time.Since(start); took < 70*time.Millisecond || took > 70*time.Millisecond+2*(WireLatency+WireJitter) {
			t.Errorf("ping to a node paused 70ms took %v", took)
		}
	})
}

func TestForwardClockJumpLapsesKeys(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		_ = rdb.Set(ctx, "k", "v", 300*time.Millisecond).Err()
		if err := n.ShiftClock(600 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if c, _ := rdb.Exists(ctx, "k").Result(); c != 0 {
			t.Fatal("key outlived a forward jump past its TTL")
		}
		if err := n.ShiftClock(-time.Second); err == nil {
			t.Fatal("a backward jump is not modelled and must say so")
		}
		if err := n.Promote(ctx); err == nil {
			t.Fatal("promotion is not modelled and must say so")
		}
	})
}

// rtt reports whether took is extra plus one round trip over the wire (two
// crossings of WireLatency ± WireJitter).
func rtt(took, extra time.Duration) bool {
	return took >= extra+2*(WireLatency-WireJitter) && took <= extra+2*(WireLatency+WireJitter)
}

// A link's ends behave as net.Pipe's do: deadlines in virtual time (also
// one set while a Read waits), io.EOF after the other end closed,
// io.ErrClosedPipe after this one did, and every write delivered once,
// in order, one wire crossing later.
func TestConnEndsAreNetConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw := NewNetwork()
		defer nw.Close()
		l, err := nw.NewLink("c->n", "10.9.9.9:6379")
		if err != nil {
			t.Fatal(err)
		}
		w := nw.links[l.Addr()]
		c := newConn(w, &Node{})
		w.conns[c] = struct{}{}
		c.start()
		cl, sv := c.client, c.server

		start := time.Now()
		_ = cl.SetReadDeadline(start.Add(30 * time.Millisecond))
		buf := make([]byte, 8)
		if _, err := cl.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 30*time.Millisecond {
			t.Fatalf("read past its deadline: %v after %v", err, time.Since(start))
		}
		go func() {
			time.Sleep(10 * time.Millisecond)
			_ = cl.SetReadDeadline(time.Now().Add(5 * time.Millisecond)) // while the Read waits
		}()
		start = time.Now()
		_ = cl.SetReadDeadline(time.Time{})
		if _, err := cl.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 15*time.Millisecond {
			t.Fatalf("a deadline set during a Read: %v after %v, want a timeout after 15ms", err, time.Since(start))
		}
		_ = cl.SetReadDeadline(time.Time{})

		for _, msg := range []string{"one", "two", "three"} {
			if n, err := cl.Write([]byte(msg)); n != len(msg) || err != nil {
				t.Fatal(n, err)
			}
		}
		start = time.Now()
		var got []byte
		for len(got) < len("onetwothree") {
			n, err := sv.Read(buf[:4])
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if string(got) != "onetwothree" || time.Since(start) > WireLatency+WireJitter {
			t.Fatalf("server read %q after %v", got, time.Since(start))
		}
		if _, err := cl.Write(nil); err != nil {
			t.Fatalf("empty write: %v", err)
		}

		_ = sv.Close()
		if _, err := cl.Read(buf); !errors.Is(err, io.EOF) {
			t.Fatalf("read after the other end closed: %v, want EOF", err)
		}
		if _, err := sv.Read(buf); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("read after closing: %v, want ErrClosedPipe", err)
		}
		if _, err := cl.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("write after close: %v, want ErrClosedPipe", err)
		}
	})
}
