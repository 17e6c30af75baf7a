package external_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/backend/process"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

var ctx = context.Background()

// usersServer starts a redis-server that stands in for a user's own (the
// process backend starts it; the external backend only gets its address)
// and returns a client to it.
func usersServer(t *testing.T) (string, *redis.Client) {
	t.Helper()
	n, err := process.Backend{}.StartNode(ctx, backend.NodeConfig{Name: "users"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: n.Addr(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return n.Addr(), rdb
}

// keyTTLs is every key on the server with its PTTL, by SCAN.
func keyTTLs(t *testing.T, rdb *redis.Client) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		out[iter.Val()] = rdb.PTTL(ctx, iter.Val()).Val()
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func set(t *testing.T, rdb *redis.Client, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if err := rdb.Set(ctx, kv[i], kv[i+1], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// bootID is the first field of this machine's markers.
func bootID(t *testing.T) string {
	t.Helper()
	if backend.BootID() == "" {
		t.Skip("no /proc/sys/kernel/random/boot_id: markers of this machine cannot be told apart")
	}
	return backend.BootID()
}

// The start of an external-backend run sweeps what killed runs left:
// every key under "lockchaos:<seed>:" whose owner marker is gone, or names
// a process of this machine that no longer runs. Keys of a live owner, of
// another machine, outside "lockchaos:<digits>:" (the user's own, even one
// named like ours) stay, values and expiries untouched.
func TestNewSweepsOnlyKeysOfRunsThatAreGone(t *testing.T) {
	addr, rdb := usersServer(t)
	boot := bootID(t)
	self := boot + " " + backend.ProcessID() + " here"
	dead := fmt.Sprintf("%s %d/0 here", boot, os.Getpid()) // our pid, another start time: a reused pid
	keep := []string{"app:x", "lockchaos", "lockchaos:replication-probe", "lockchaos:abc:order:1", "lockchaosx:1:order:1",
		"lockchaos::order:1", "lockchaos:1", "lockchaos:22:order:1:fence", "lockchaos:44:order:1:fence"}
	set(t, rdb, "app:x", "precious", "lockchaos", "v", "lockchaos:replication-probe", "1", "lockchaos:abc:order:1", "v",
		"lockchaosx:1:order:1", "v", "lockchaos::order:1", "v", "lockchaos:1", "v",
		// no marker: a run killed more than OwnerTTL ago (or an older harness)
		"lockchaos:11:order:1", "tok", "lockchaos:11:order:1:fence", "7", "lockchaos:-5:order:2:fence", "3",
		// a live owner (this process), another machine's, a gone one of this
		// machine, and a gone one's marker alone (its cell's keys expired)
		"lockchaos:22:order:1:fence", "4", "lockchaos:22:owner", self, "lockchaos:66:owner", dead,
		"lockchaos:44:order:1:fence", "5", "lockchaos:44:owner", "another-boot/pid:[1] 12/34 elsewhere",
		"lockchaos:33:order:1:fence", "6", "lockchaos:33:owner", dead)
	if err := rdb.PExpire(ctx, "app:x", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 1200 { // more than one SCAN page and one sweep batch, under a gone owner's marker
		set(t, rdb, fmt.Sprintf("lockchaos:33:k%d", i), "v")
	}
	b, err := external.New(external.Config{RedisAddrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	left := keyTTLs(t, rdb)
	want := append(slices.Clone(keep), "lockchaos:22:owner", "lockchaos:44:owner")
	var gone []string
	for _, k := range want {
		if _, ok := left[k]; !ok {
			gone = append(gone, k)
		}
		delete(left, k)
	}
	if len(gone) > 0 || len(left) > 0 {
		stayed := slices.Sorted(maps.Keys(left))
		t.Fatalf("the sweep deleted %v (must stay) and left %d key(s) of gone runs: %v", gone, len(stayed), stayed[:min(len(stayed), 8)])
	}
	if want := 1200 + 6; b.Swept != want { // with the gone owners' markers
		t.Errorf("Swept = %d, want %d", b.Swept, want)
	}
	if v, ttl := rdb.Get(ctx, "app:x").Val(), rdb.PTTL(ctx, "app:x").Val(); v != "precious" || ttl < 59*time.Minute {
		t.Errorf("the user's key: %q, PTTL %v: touched", v, ttl)
	}
}

// While a cell runs its prefix is claimed: the marker has an expiry, is
// pushed out before it lapses, keeps a sweep away, and is gone with the
// release.
func TestClaimKeepsASweepAwayUntilRelease(t *testing.T) {
	addr, rdb := usersServer(t)
	bootID(t)
	defer external.SetOwnerTTL(600 * time.Millisecond)()
	b, err := external.New(external.Config{RedisAddrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	release, err := b.Claim("lockchaos:7:", []string{addr, addr})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	set(t, rdb, "lockchaos:7:order:1:fence", "1")
	time.Sleep(1500 * time.Millisecond) // 2.5 marker lifetimes: only the refresh keeps it
	ttl := rdb.PTTL(ctx, "lockchaos:7:owner").Val()
	if ttl <= 0 || ttl > 600*time.Millisecond {
		t.Fatalf("marker PTTL %v while claimed, want (0, 600ms]", ttl)
	}
	if n := external.Sweep([]string{addr}, 5*time.Second); n != 0 {
		t.Fatalf("a sweep during the claim deleted %d key(s)", n)
	}
	release()
	if n := rdb.Exists(ctx, "lockchaos:7:owner").Val(); n != 0 {
		t.Fatal("marker left after release")
	}
	if n := external.Sweep([]string{addr}, 5*time.Second); n != 1 {
		t.Fatalf("a sweep after the release deleted %d key(s), want the one the cell left", n)
	}
	if _, err := b.Claim("app:", []string{addr}); !errors.Is(err, backend.ErrInvalidConfig) {
		t.Fatalf("a claim outside lockchaos: = %v, want ErrInvalidConfig", err)
	}
}

// A server that does not answer is named with the flag to check, under
// its own sentinel: not "redis-server did not start" (nothing was started).
func TestNoAnswerNamesTheAddressAndTheFlag(t *testing.T) {
	_, err := external.New(external.Config{RedisAddrs: []string{"127.0.0.1:1"}})
	if !errors.Is(err, external.ErrNoAnswer) || errors.Is(err, backend.ErrNodeStart) {
		t.Fatalf("err = %v, want ErrNoAnswer and not ErrNodeStart", err)
	}
	msg := err.Error()
	for _, w := range []string{"external: redis 127.0.0.1:1 does not answer PING: ", "connection refused", "check --redis-addr"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q does not say %q", msg, w)
		}
	}
	if strings.Count(msg, "external:") != 1 || strings.Contains(msg, "did not start") {
		t.Errorf("%q: one prefix, nothing about starting", msg)
	}
	if _, err := external.New(external.Config{RedisAddrs: []string{"localhost"}}); !errors.Is(err, backend.ErrInvalidConfig) ||
		!strings.Contains(err.Error(), "--redis-addr") {
		t.Fatalf("an address without a port: %v", err)
	}
}
