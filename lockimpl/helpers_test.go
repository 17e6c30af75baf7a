package lockimpl_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/faults/faultstest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

func TestMain(m *testing.M) { faultstest.Main(m) }

// testTTL is short so expiry tests take a fraction of a second.
const testTTL = 300 * time.Millisecond

// redisLocks are the locks that live in Redis (every one but mutex).
var redisLocks = []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameTokenWatchdog, lockimpl.NameRedlock, lockimpl.NameFenced}

// pods starts the topology the named lock needs and builds one Locker per
// simulated client, each over its own go-redis clients and its own proxies.
func pods(t *testing.T, name string, clients int, opts lockimpl.Options) (*faults.Cluster, []lockimpl.Locker) {
	t.Helper()
	need, err := lockimpl.NodesNeeded(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := faults.ClusterConfig{Clients: clients}
	if need > 1 {
		cfg.Topology, cfg.Nodes = faults.Independent, need
	}
	c := faultstest.Cluster(t, cfg)
	if opts.TTL == 0 {
		opts.TTL = testTTL
	}
	lockers := make([]lockimpl.Locker, clients)
	for i := range clients {
		var nodes []redis.UniversalClient
		for _, addr := range c.ClientAddrs(i) {
			rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rdb.Close() })
			nodes = append(nodes, rdb)
		}
		l, err := lockimpl.New(name, nodes, opts)
		if err != nil {
			t.Fatal(err)
		}
		lockers[i] = l
	}
	return c, lockers
}
