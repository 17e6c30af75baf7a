package lockimpl_test

import (
	"io"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/backend/sim/simtest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// keyTTLs returns every key on the nodes with its PTTL (SCAN, as the
// harness reads someone else's server).
func keyTTLs(t *testing.T, nodes []backend.RedisNode) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, n := range nodes {
		cursor := "0"
		for {
			v, err := n.Do(ctx, "SCAN", cursor, "COUNT", 1000)
			if err != nil {
				t.Fatal(err)
			}
			reply := v.([]any)
			cursor = reply[0].(string)
			for _, k := range reply[1].([]any) {
				ttl, err := n.Do(ctx, "PTTL", k)
				if err != nil {
					t.Fatal(err)
				}
				out[n.Name()+" "+k.(string)] = ttl.(int64)
			}
			if cursor == "0" {
				break
			}
		}
	}
	return out
}

// A harness killed outright (SIGKILL) deletes nothing: every key a
// built-in lock writes must then lapse on its own. Each lock acquires and
// is never released, as after a SIGKILL; every key left has an expiry.
// Before the fence counter had one, fenced left "order:1:fence" with
// PTTL -1, for ever, on the user's server. (token-wait needs a replica,
// which a user's server never gives the harness: it does not run there;
// its key is token's SET NX PX.)
//
// no-ttl is left out: a key that never expires is what it exists to show.
// On a user's server its key lives under the cell's prefix, which the cell
// deletes as it ends and the next run sweeps when a killed run left it.
func TestEveryKeyALockLeavesBehindExpires(t *testing.T) {
	for _, name := range redisLocks {
		if name == lockimpl.NameNoTTL {
			continue
		}
		t.Run(name, func(t *testing.T) {
			dep, ls := pods(t, name, 1, lockOptions{TTL: 5 * time.Second})
			mustAcquire(t, ls[0], "order:1")
			if c, ok := ls[0].(io.Closer); ok {
				defer c.Close() // the watchdog's goroutine; its key stays
			}
			keys := keyTTLs(t, dep.Nodes())
			if len(keys) == 0 {
				t.Fatal("no key written")
			}
			for k, ttl := range keys {
				if ttl <= 0 || time.Duration(ttl)*time.Millisecond > lockimpl.DefaultFenceTTL {
					t.Errorf("%s: PTTL %d ms, want an expiry in (0, %v]", k, ttl, lockimpl.DefaultFenceTTL)
				}
			}
			t.Logf("keys left: %v", keys)
		})
	}
}

// The fence counter's expiry is pushed out by every acquire, in the same
// script as the INCR, so a counter in use never lapses (a fence must never
// go backwards while a cell runs); a negative FenceTTL keeps it for ever.
func TestFenceCounterExpiryIsPushedOutByEveryAcquire(t *testing.T) {
	simtest.Run(t, fenceCounterExpiry)
}

func fenceCounterExpiry(t *testing.T, be sim.Backend) {
	dep, _ := podsOn(t, be, lockimpl.NameFenced, 1, lockOptions{})
	rdb, err := lockimpl.NewRedisClient(dep.ClientAddrs(0)[0], lockimpl.ClientConfig{Dialer: dep.Dialer()})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	f, err := lockimpl.NewFenced(rdb, lockimpl.FencedConfig{TTL: time.Second, FenceTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range 4 {
		lease := mustAcquire(t, f, "order:1")
		if lease.Fence() <= last {
			t.Fatalf("acquire %d: fence %d after %d", i, lease.Fence(), last)
		}
		last = lease.Fence()
		if ttl := rdb.PTTL(ctx, "order:1:fence").Val(); ttl < 1900*time.Millisecond || ttl > 2*time.Second {
			t.Fatalf("acquire %d: counter PTTL %v right after the acquire, want ~2s", i, ttl)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // 4 x 0.7 s > 2 s: only the refresh keeps it
	}
	if last != 4 {
		t.Fatalf("fence after 4 acquires over %v = %d, want 4 (the counter lapsed between acquires)", 4*700*time.Millisecond, last)
	}
	forever, err := lockimpl.NewFenced(rdb, lockimpl.FencedConfig{FenceTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	lease := mustAcquire(t, forever, "order:2")
	defer func() { _ = lease.Release(ctx) }()
	if ttl := rdb.PTTL(ctx, "order:2:fence").Val(); ttl != -1 {
		t.Fatalf("FenceTTL -1: counter PTTL %v, want -1 (no expiry)", ttl)
	}
}
