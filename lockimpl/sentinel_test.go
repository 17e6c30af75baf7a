package lockimpl_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/redis/go-redis/v9"
)

// sentinelClient is pod 0's failover client through its own proxies.
func sentinelClient(t *testing.T, c *deployment.Deployment) *redis.Client {
	t.Helper()
	r, ok := c.SentinelRoute(0)
	if !ok {
		t.Fatal("no Sentinel route on a Sentinel cluster")
	}
	rdb, err := lockimpl.NewFailoverClient(r.Master, r.Sentinels, r.Route, lockimpl.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Three real Sentinels fail a killed primary over on their own, and a
// client that asks them finds the new primary; every connection goes
// through the pod's proxies (cutting the pod's links cuts the client).
func TestSentinelsFailOverAndClientsFollowThroughTheirProxies(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.Sentinel, Clients: 1})
	if r, _ := c.SentinelRoute(0); func() error { _, err := r.Route("127.0.0.1:1"); return err }() == nil {
		t.Fatal("the route dials an address that is not the deployment's, around the pod's proxies")
	}
	rdb := sentinelClient(t, c)
	if err := rdb.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatalf("write through Sentinel: %v", err)
	}
	if got := c.SentinelPrimary(ctx); got != 0 {
		t.Fatalf("Sentinels name node %d as primary, want 0", got)
	}
	for _, l := range c.ClientLinks(0) {
		if err := l.Disable(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Close()
	cut := sentinelClient(t, c)
	if err := cut.Set(ctx, "k", "cut", 0).Err(); err == nil {
		t.Fatal("a write succeeded with every link of the pod cut: the client does not go through its proxies")
	}
	if err := c.HealAll(); err != nil {
		t.Fatal(err)
	}
	rdb = sentinelClient(t, c)

	start := time.Now()
	if err := c.Primary().Kill(); err != nil {
		t.Fatal(err)
	}
	backendtest.Eventually(t, 15*time.Second, "the Sentinels promote the replica", func() bool { return c.SentinelPrimary(ctx) == 1 })
	t.Logf("the Sentinels failed over in %s", time.Since(start).Round(time.Millisecond))
	backendtest.Eventually(t, 5*time.Second, "the client writes to the new primary", func() bool {
		return rdb.Set(ctx, "k", "after", 0).Err() == nil
	})
	v, err := c.Node(1).Do(ctx, "GET", "k")
	if err != nil || v != "after" {
		t.Fatalf("new primary has k = %v (%v), want after", v, err)
	}
}

// token-wait believes it holds only once a replica has the key: with the
// replication cut it gives the key back and reports not acquired; with
// replication it acquires and the replica has the key.
func TestTokenWaitHoldsOnlyWhatAReplicaHas(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.PrimaryReplica, Clients: 1})
	rdb := backendtest.Client(t, c.ClientAddrs(0)[0])
	l, err := lockimpl.NewTokenWait(rdb, lockimpl.TokenConfig{TTL: 2 * time.Second}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	lease := mustAcquire(t, l, "w")
	v, err := c.Replica().Do(ctx, "GET", "w")
	if err != nil || v != lease.Token() {
		t.Fatalf("replica has w = %v (%v) after acquire, want the token %s", v, err, lease.Token())
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplicationLink().Blackhole(netfault.Downstream); err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(ctx, "w")
	if !errors.Is(err, lockimpl.ErrNotReplicated) || !lockimpl.IsDefinite(err) {
		t.Fatalf("acquire without a replica's ack: %v, want definite ErrNotReplicated", err)
	}
	if n, _ := rdb.Exists(ctx, "w").Result(); n != 0 {
		t.Fatal("the unreplicated key was left behind on the primary")
	}
}
