package lockimpl_test

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

// testTTL is short so expiry tests take a fraction of a second.
const testTTL = 300 * time.Millisecond

// redisLocks are the locks that live in Redis (every one but mutex).
var redisLocks = []string{lockimpl.NameNaive, lockimpl.NameToken, lockimpl.NameTokenWatchdog, lockimpl.NameRedlock, lockimpl.NameFenced,
	lockimpl.NameNoTTL, lockimpl.NameLongTTL}

// pods starts the topology the named lock needs and builds one Locker per
// simulated client, each over its own go-redis clients and its own proxies.
func pods(t *testing.T, name string, clients int, opts lockOptions) (*deployment.Deployment, []lockimpl.Locker) {
	t.Helper()
	return podsOn(t, nil, name, clients, opts)
}

// podsOn is pods on backend b (nil: local redis-server processes; the
// simulated one only inside simtest.Run's bubble, where a claim about
// what a lock does as its TTL passes takes no wall time).
func podsOn(t *testing.T, b backend.Backend, name string, clients int, opts lockOptions) (*deployment.Deployment, []lockimpl.Locker) {
	t.Helper()
	spec, err := lockimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := deployment.Config{Clients: clients, Backend: b}
	if spec.Nodes > 1 {
		cfg.Topology, cfg.Nodes = deployment.Independent, spec.Nodes
	}
	c := backendtest.Cluster(t, cfg)
	if opts.TTL == 0 {
		opts.TTL = testTTL
	}
	lockers := make([]lockimpl.Locker, clients)
	for i := range clients {
		var nodes []redis.UniversalClient
		for _, addr := range c.ClientAddrs(i) {
			rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
				Dialer: c.Dialer()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rdb.Close() })
			nodes = append(nodes, rdb)
		}
		l, err := opts.build(spec, lockimpl.Env{Pod: i, Clients: nodes, Addrs: c.ClientAddrs(i), TTL: opts.TTL, OnRenew: opts.OnRenew})
		if err != nil {
			t.Fatal(err)
		}
		lockers[i] = l
	}
	return c, lockers
}

// lockOptions are the knobs these tests turn on a lock.
type lockOptions struct {
	TTL              time.Duration
	WatchdogInterval time.Duration // token-watchdog only; 0 keeps its default
	OnRenew          func(lockimpl.Renewal)
}

// build makes one pod's lock from its spec, except a watchdog with a
// chosen interval, which the spec does not expose.
func (o lockOptions) build(spec lockimpl.Spec, env lockimpl.Env) (lockimpl.Locker, error) {
	if spec.Name != lockimpl.NameTokenWatchdog || o.WatchdogInterval == 0 {
		return spec.Build(env)
	}
	tok, err := lockimpl.NewToken(env.Clients[0], lockimpl.TokenConfig{TTL: env.TTL})
	if err != nil {
		return nil, err
	}
	return lockimpl.NewTokenWatchdog(tok, lockimpl.WatchdogConfig{TTL: env.TTL, Interval: o.WatchdogInterval, OnRenew: env.OnRenew})
}
