package deployment_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
)

// timedPing returns how long one PING took, and its error.
func timedPing(rdb *redis.Client) (time.Duration, error) {
	start := time.Now()
	err := rdb.Ping(context.Background()).Err()
	return time.Since(start), err
}

func singleClusterClient(t *testing.T) (*deployment.Deployment, *redis.Client) {
	t.Helper()
	c := backendtest.Cluster(t, deployment.Config{})
	rdb := backendtest.Client(t, c.Link(0, 0).Addr())
	if _, err := timedPing(rdb); err != nil {
		t.Fatalf("PING through the proxy: %v", err)
	}
	return c, rdb
}

func TestBlackholedLinkTimesOutAndHealRestores(t *testing.T) {
	c, rdb := singleClusterClient(t)
	link := c.Link(0, 0)
	if err := link.Blackhole(netfault.Both); err != nil {
		t.Fatal(err)
	}
	took, err := timedPing(rdb)
	if err == nil {
		t.Fatal("PING answered through a blackholed link")
	}
	var netErr interface{ Timeout() bool }
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("PING error %v is not a timeout", err)
	}
	if took < 250*time.Millisecond {
		t.Fatalf("PING failed after %v, before the 300ms read timeout: not a silent blackhole", took)
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	backendtest.Eventually(t, 3*time.Second, "PING works after heal", func() bool {
		_, err := timedPing(rdb)
		return err == nil
	})
	if ts := link.Toxics(); len(ts) != 0 {
		t.Fatalf("toxics after heal: %v", ts)
	}
}

func TestLatencyDelaysEachDirection(t *testing.T) {
	c, rdb := singleClusterClient(t)
	link := c.Link(0, 0)
	for _, dir := range []netfault.Direction{netfault.Upstream, netfault.Downstream} {
		if err := link.Latency(dir, 100*time.Millisecond, 0); err != nil {
			t.Fatal(err)
		}
		took, err := timedPing(rdb)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if took < 100*time.Millisecond {
			t.Fatalf("%s latency 100ms: PING took only %v", dir, took)
		}
		if err := link.Heal(); err != nil {
			t.Fatal(err)
		}
	}
	if err := link.Latency("sideways", time.Millisecond, 0); !errors.Is(err, netfault.ErrInvalidConfig) {
		t.Fatalf("bad direction: %v, want ErrInvalidConfig", err)
	}
}

func TestLatencyCallReplacesEarlierLatency(t *testing.T) {
	c, rdb := singleClusterClient(t)
	link := c.Link(0, 0)
	if err := link.Latency(netfault.Downstream, 200*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	if err := link.Latency(netfault.Downstream, 20*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	took, err := timedPing(rdb)
	if err != nil {
		t.Fatal(err)
	}
	if took >= 200*time.Millisecond {
		t.Fatalf("PING took %v: the first latency was stacked, not replaced", took)
	}
}

func TestDisabledLinkRefusesAndEnableRestores(t *testing.T) {
	c, rdb := singleClusterClient(t)
	link := c.Link(0, 0)
	if err := link.Disable(); err != nil {
		t.Fatal(err)
	}
	took, err := timedPing(rdb)
	if err == nil {
		t.Fatal("PING answered through a disabled link")
	}
	if took > 250*time.Millisecond {
		t.Fatalf("a loud partition should fail fast, took %v (%v)", took, err)
	}
	if err := link.Enable(); err != nil {
		t.Fatal(err)
	}
	backendtest.Eventually(t, 3*time.Second, "PING works after enable", func() bool {
		_, err := timedPing(rdb)
		return err == nil
	})
}

func TestResetLinkBreaksConnections(t *testing.T) {
	c, rdb := singleClusterClient(t)
	if err := c.Link(0, 0).Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := timedPing(rdb); err == nil {
		t.Fatal("PING answered through a reset link")
	}
	if err := c.Link(0, 0).Heal(); err != nil {
		t.Fatal(err)
	}
	backendtest.Eventually(t, 3*time.Second, "PING works after heal", func() bool {
		_, err := timedPing(rdb)
		return err == nil
	})
}

func TestFaultOnOneClientLinkLeavesOthersAlone(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Clients: 2})
	cut, ok := backendtest.Client(t, c.Link(0, 0).Addr()), backendtest.Client(t, c.Link(1, 0).Addr())
	if err := c.Link(0, 0).Blackhole(netfault.Both); err != nil {
		t.Fatal(err)
	}
	if _, err := timedPing(cut); err == nil {
		t.Fatal("client 0 reached the node through its blackholed link")
	}
	if _, err := timedPing(ok); err != nil {
		t.Fatalf("client 1 was hit by client 0's fault: %v", err)
	}
}

func TestProxiesHTTPAPIOnLoopback(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Clients: 2, Proxies: netfault.ProxiesConfig{APIAddr: "127.0.0.1:0"}})
	addr := c.Proxies().APIAddr()
	if addr == "" {
		t.Fatal("no API address")
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get("http://" + addr + "/proxies")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var proxies map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&proxies); err != nil {
		t.Fatal(err)
	}
	if len(proxies) != 2 {
		t.Fatalf("API lists %d proxies, want 2: %v", len(proxies), proxies)
	}
	if err := (netfault.ProxiesConfig{APIAddr: "0.0.0.0:8474"}).Validate(); !errors.Is(err, netfault.ErrInvalidConfig) {
		t.Fatalf("non-loopback API address accepted: %v", err)
	}
}

func TestFailoverBeforeReplicationLosesLockKey(t *testing.T) {
	ctx := context.Background()
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.PrimaryReplica})
	rdb := backendtest.Client(t, c.Link(0, 0).Addr())
	// Control: with a healthy replication link a lock key reaches the replica.
	if err := rdb.Set(ctx, "lock:control", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	replica := backendtest.Client(t, c.Node(1).Addr())
	backendtest.Eventually(t, 2*time.Second, "control key replicated", func() bool {
		return replica.Get(ctx, "lock:control").Val() == "a"
	})
	// Lag replication, take the lock on the primary, kill the primary, fail over.
	if err := c.ReplicationLink().Latency(netfault.Downstream, time.Second, 0); err != nil {
		t.Fatal(err)
	}
	ok, err := rdb.SetNX(ctx, "lock:order", "token-a", 5*time.Second).Result()
	if err != nil || !ok {
		t.Fatalf("SET NX on primary: %v %v", ok, err)
	}
	if err := c.Node(0).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Primary() != c.Node(1) {
		t.Fatal("clients still point at the old primary")
	}
	var got bool
	backendtest.Eventually(t, 3*time.Second, "client reaches the promoted replica", func() bool {
		got, err = rdb.SetNX(ctx, "lock:order", "token-b", 5*time.Second).Result()
		return err == nil
	})
	if !got {
		t.Fatal("a second client could not take lock:order: the key survived failover (no loss shown)")
	}
	if v := rdb.Get(ctx, "lock:control").Val(); v != "a" {
		t.Fatalf("replicated key lost too (%q): failover lost more than the lagged write", v)
	}
}

func TestFailoverNeedsReplica(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{})
	if err := c.Failover(context.Background()); !errors.Is(err, deployment.ErrTopology) {
		t.Fatalf("Failover on single = %v, want ErrTopology", err)
	}
}

func TestClusterConfigValidate(t *testing.T) {
	bad := []deployment.Config{
		{Topology: "ring"},
		{Topology: deployment.Single, Nodes: 3},
		{Topology: deployment.PrimaryReplica, Nodes: 3},
		{Topology: deployment.Independent, Nodes: 99},
		{Clients: -1},
	}
	for _, cfg := range bad {
		if err := cfg.Validate(); !invalidConfig(err) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	err := deployment.Config{Topology: "ring"}.Validate()
	if !strings.Contains(err.Error(), "primary-replica") {
		t.Errorf("unknown topology error does not list the valid ones: %v", err)
	}
}

func TestIndependentClusterHasOneLinkPerClientAndNode(t *testing.T) {
	c := backendtest.Cluster(t, deployment.Config{Topology: deployment.Independent, Clients: 2})
	if c.Slots() != 3 || len(c.ClientAddrs(1)) != 3 || len(c.SlotLinks(2)) != 2 {
		t.Fatalf("slots %d, client addrs %d, slot links %d", c.Slots(), len(c.ClientAddrs(1)), len(c.SlotLinks(2)))
	}
	seen := map[string]bool{}
	for cl := range 2 {
		for s := range 3 {
			seen[c.Link(cl, s).Addr()] = true
			if c.Link(cl, s).Upstream() != c.Node(s).Addr() {
				t.Fatalf("link %s goes to %s, want %s", c.Link(cl, s).Name(), c.Link(cl, s).Upstream(), c.Node(s).Addr())
			}
		}
	}
	if len(seen) != 6 {
		t.Fatalf("%d distinct proxy addresses, want 6", len(seen))
	}
}

// A one-way partition: with replies dropped, a command still lands on the
// node (the client times out not knowing); with requests dropped, it does
// not.
func TestOneWayBlackholeDropsOnlyItsDirection(t *testing.T) {
	for _, tc := range []struct {
		dir   netfault.Direction
		lands bool
	}{{netfault.Downstream, true}, {netfault.Upstream, false}} {
		t.Run(string(tc.dir), func(t *testing.T) {
			c, rdb := singleClusterClient(t)
			direct := backendtest.Client(t, c.Node(0).Addr())
			if err := c.Link(0, 0).Blackhole(tc.dir); err != nil {
				t.Fatal(err)
			}
			if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err == nil {
				t.Fatal("SET answered through a blackholed link")
			}
			n, err := direct.Exists(context.Background(), "k").Result()
			if err != nil {
				t.Fatal(err)
			}
			if (n == 1) != tc.lands {
				t.Fatalf("direction %s: key exists=%v, want %v", tc.dir, n == 1, tc.lands)
			}
		})
	}
}

// invalidConfig reports an error from a Config's Validate: the
// deployment's own, a node's or the proxies'.
func invalidConfig(err error) bool {
	return errors.Is(err, deployment.ErrInvalidConfig) || errors.Is(err, backend.ErrInvalidConfig) || errors.Is(err, netfault.ErrInvalidConfig)
}
