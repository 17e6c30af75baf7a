package deployment_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"
)

// clusterClient is a pod's go-redis cluster client, every connection
// through the pod's own links.
func clusterClient(t *testing.T, c *deployment.Deployment, pod int) *redis.ClusterClient {
	t.Helper()
	r, ok := c.ClusterRoute(pod)
	if !ok {
		t.Fatal("no cluster route")
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.Seeds, ReadTimeout: time.Second,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			to, err := r.Route(addr)
			if err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		}})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// A cluster forms with its slots served and a replica behind every
// primary; a pod's client finds the key's shard through its own links.
func TestClusterFormsAndClientsFollowIt(t *testing.T) {
	start := time.Now()
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.Cluster, Clients: 2})
	t.Logf("3-shard cluster with replicas ready in %v", time.Since(start))
	if len(c.Nodes()) != 6 || c.Shards() != 3 {
		t.Fatalf("%d nodes, %d shards", len(c.Nodes()), c.Shards())
	}
	ctx := context.Background()
	rdb := clusterClient(t, c, 0)
	for _, k := range []string{"order:1", "{order:1}:fence", "a", "b", "c"} {
		if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	p, err := c.SlotPrimary(ctx, deployment.KeySlot("order:1"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Node(p).Do(ctx, "GET", "order:1"); err != nil || v != "v" {
		t.Fatalf("the key's primary %s has %v, %v", c.Node(p).Name(), v, err)
	}
	// Cut the key's primary from every other node: the others promote
	// its replica on their own; the pod's client follows.
	for _, l := range c.PeerLinks(p) {
		if err := l.Blackhole(netfault.Both); err != nil {
			t.Fatal(err)
		}
	}
	cut := time.Now()
	backendtest.Eventually(t, 15*time.Second, "the replica is promoted", func() bool {
		q, err := c.SlotPrimary(ctx, deployment.KeySlot("order:1"))
		return err == nil && q == c.ShardPeer(p)
	})
	t.Logf("replica promoted %v after the cut (node timeout 500ms)", time.Since(cut))
	for _, l := range c.PeerLinks(p) {
		if err := l.Heal(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitClusterSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "order:1", "w", 0).Err(); err != nil {
		t.Fatalf("SET after the failover: %v", err)
	}
}

// A slot moves to another shard with its keys and their TTLs, through the
// data link between the two primaries; the pod's client follows.
func TestClusterSlotMigratesWithItsKeys(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.Cluster, Clients: 1})
	ctx := context.Background()
	rdb := clusterClient(t, c, 0)
	for round := range 4 {
		for _, k := range []string{"{order:1}", "{order:1}:fence"} {
			if err := rdb.Set(ctx, k, "v", 10*time.Second).Err(); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
		}
		slot := deployment.KeySlot("{order:1}")
		from, err := c.SlotPrimary(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		to, err := c.ShardPrimary(ctx, (from/2+1)%c.Shards())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetSlot(ctx, to, slot, "IMPORTING", from); err != nil {
			t.Fatal(err)
		}
		if err := c.SetSlot(ctx, from, slot, "MIGRATING", to); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		keys, err := c.MigrateKeys(ctx, slot, from, to)
		if err != nil || len(keys) != 2 {
			t.Fatalf("round %d: MIGRATE %s -> %s: %v, %v (after %v)", round, c.Node(from).Name(), c.Node(to).Name(), keys, err, time.Since(start))
		}
		for _, i := range []int{to, from} {
			if err := c.SetSlot(ctx, i, slot, "NODE", to); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.WaitClusterSettled(ctx); err != nil {
			t.Fatal(err)
		}
		if v, err := rdb.Get(ctx, "{order:1}:fence").Result(); err != nil || v != "v" {
			t.Fatalf("round %d: after the move: %q, %v", round, v, err)
		}
	}
}
