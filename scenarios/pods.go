package scenarios

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockchaos/lockchaos/deployment"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/workload"
	"github.com/redis/go-redis/v9"
)

// pods builds each pod's lock over that pod's own clients (through its
// proxies, frozen with it) and closes what they hold when the cell ends.
type pods struct {
	p       *Plan
	dep     *deployment.Deployment
	control *workload.Control
	// rec is the part's recorder, set by record once the pods are built
	// (atomic: a watchdog may renew while close holds mu).
	rec atomic.Pointer[history.Recorder]

	mu    sync.Mutex
	incs  []*incarnation // every pod's, in the order built
	built []lockimpl.Locker
}

// incarnation is what one life of a pod holds: its lock and its clients.
type incarnation struct {
	locker lockimpl.Locker
	rdbs   []redis.UniversalClient
	closed bool
}

// close closes the incarnation once: its locker's goroutines (a
// watchdog), even for leases never released, then its clients.
func (in *incarnation) close() {
	if in.closed {
		return
	}
	in.closed = true
	if c, ok := in.locker.(io.Closer); ok {
		_ = c.Close()
	}
	for _, r := range in.rdbs {
		_ = r.Close()
	}
}

func newPods(p *Plan, dep *deployment.Deployment, control *workload.Control) *pods {
	return &pods{p: p, dep: dep, control: control}
}

// record gives the built pods the part's recorder, for their renewals;
// the history starts after every pod is ready, before the first cycle.
func (ps *pods) record(rec *history.Recorder) { ps.rec.Store(rec) }

// onRenew records a pod's renewals in the part's history.
func (ps *pods) onRenew(pod int) func(lockimpl.Renewal) {
	return func(r lockimpl.Renewal) {
		if rec := ps.rec.Load(); rec != nil {
			workload.RenewalRecorder(rec, pod)(r)
		}
	}
}

// build makes every pod's lock at once (in parallel: driver processes
// start slowly); locker then hands them to the workload.
func (ps *pods) build(n int) error {
	ps.built = make([]lockimpl.Locker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for pod := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps.built[pod], errs[pod] = ps.newLocker(pod)
		}()
	}
	wg.Wait()
	for pod, err := range errs {
		if err != nil {
			return fmt.Errorf("client %d: %w", pod, err)
		}
	}
	return nil
}

// locker is the workload's factory: the pod's lock, built by build, for
// its first incarnation; a new one (new clients, a new driver process)
// for each restart after a crash.
func (ps *pods) locker(pod int) (lockimpl.Locker, error) {
	ps.mu.Lock()
	l := ps.built[pod]
	ps.built[pod] = nil
	ps.mu.Unlock()
	if l != nil {
		return l, nil
	}
	return ps.newLocker(pod)
}

// newLocker builds one pod's lock from its spec.
func (ps *pods) newLocker(pod int) (lockimpl.Locker, error) {
	in := &incarnation{}
	ps.mu.Lock()
	ps.incs = append(ps.incs, in) // closed with the cell even if the build fails
	ps.mu.Unlock()
	env, err := ps.env(pod, in)
	if err != nil {
		return nil, err
	}
	l, err := ps.p.Lock.Build(env)
	if err != nil {
		return nil, err
	}
	ps.mu.Lock()
	in.locker = l
	ps.mu.Unlock()
	// A crash takes the incarnation's goroutines (a watchdog) and clients
	// with it, as a killed process's; after the lock's own crash hooks (a
	// driver's SIGKILL), registered while it was built.
	ps.control.OnCrash(pod, func() {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		in.close()
	})
	return l, nil
}

// env is what a pod's lock is built with: the servers' addresses and a
// dialer through the pod's own links, its go-redis clients (kept in in,
// closed with it), the cell's times and the pod's hooks.
func (ps *pods) env(pod int, in *incarnation) (lockimpl.Env, error) {
	dial := ps.control.Dial(pod)
	addrs := ps.dep.ClientAddrs(pod)
	if _, ok := ps.dep.SentinelRoute(pod); ok {
		addrs = nil // behind Sentinel no node has a fixed address
	}
	if _, ok := ps.dep.ClusterRoute(pod); ok {
		addrs = nil // on a cluster a key's node moves with failovers and slots
	}
	env := lockimpl.Env{Pod: pod, Addrs: addrs, Dial: dial, TTL: ps.p.Scenario.TTL, CallTimeout: ps.p.Scenario.CallTimeout,
		OnRenew: ps.onRenew(pod),
		OnPause: func(stop, cont func()) { ps.control.OnPause(pod, stop, cont) },
		OnCrash: func(kill func()) { ps.control.OnCrash(pod, kill) }}
	if ps.p.History != "" {
		env.Dir = filepath.Dir(ps.p.History)
	}
	if t, ok := ps.p.Backend.(pgTargeter); ok && ps.p.Lock.Service == service.Postgres && ps.p.KeyPrefix != "" {
		var err error
		if env.Postgres, err = t.PostgresTarget(ps.p.KeyPrefix); err != nil {
			return env, err
		}
	}
	clients, err := ps.clients(pod, dial)
	ps.mu.Lock()
	in.rdbs = append(in.rdbs, clients...)
	ps.mu.Unlock()
	env.Clients = append(env.Clients, clients...)
	return env, err
}

// clients makes one pod's go-redis clients: one per node address, or
// behind Sentinel one failover client that finds the primary through the
// Sentinels (every connection through the pod's own proxies).
func (ps *pods) clients(pod int, dial func(context.Context, string, string) (net.Conn, error)) ([]redis.UniversalClient, error) {
	if !ps.p.Lock.Service.IsRedis() {
		return nil, nil // its lock dials the service itself (Env.Addrs, Env.Dial)
	}
	cfg := lockimpl.ClientConfig{ReadTimeout: ps.p.Scenario.CallTimeout, WriteTimeout: ps.p.Scenario.CallTimeout, Dialer: dial}
	if r, ok := ps.dep.SentinelRoute(pod); ok {
		rdb, err := lockimpl.NewFailoverClient(r.Master, r.Sentinels, r.Route, cfg)
		return []redis.UniversalClient{rdb}, err
	}
	if r, ok := ps.dep.ClusterRoute(pod); ok {
		rdb, err := lockimpl.NewClusterClient(r.Seeds, r.Route, cfg)
		return []redis.UniversalClient{rdb}, err
	}
	var out []redis.UniversalClient
	for _, addr := range ps.dep.ClientAddrs(pod) {
		rdb, err := lockimpl.NewRedisClient(addr, cfg)
		if err != nil {
			return out, err
		}
		out = append(out, rdb)
	}
	return out, nil
}

// close shuts the pods down: lockers that hold goroutines (watchdogs) stop
// them, even for leases an interrupted run never released; then the
// clients close.
func (ps *pods) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, in := range ps.incs {
		in.close()
	}
}

// pgTargeter is a backend on someone else's PostgreSQL (external.Backend):
// a cell's PostgreSQL locks keep to a schema and an advisory class of its
// own there.
type pgTargeter interface {
	PostgresTarget(keyPrefix string) (lockimpl.PGTarget, error)
}

// keyClaimer is a backend on someone else's Redis (external.Backend):
// while a cell runs, it marks the keys under the cell's prefix as a live
// run's on the servers at addrs, so that another run's sweep of what
// killed runs left behind keeps away from them.
type keyClaimer interface {
	Claim(prefix string, addrs []string) (release func(), err error)
}

// ownKeys claims the plan's key prefix on the deployment's nodes, on a
// backend that asks for it, before any key is written, and returns what
// the cell runs when it ends: the claim released, then every key under the
// prefix deleted. Without a prefix (the harness's own nodes) it does
// nothing.
func ownKeys(p *Plan, dep *deployment.Deployment) (done func(), err error) {
	if p.KeyPrefix == "" {
		return func() {}, nil
	}
	release := func() {}
	if c, ok := p.Backend.(keyClaimer); ok {
		addrs := make([]string, 0, len(dep.Nodes()))
		for _, n := range dep.Nodes() {
			addrs = append(addrs, n.Addr())
		}
		if release, err = c.Claim(p.KeyPrefix, addrs); err != nil {
			return nil, err
		}
	}
	return func() {
		release()
		deleteOwnKeys(dep, p.KeyPrefix)
	}, nil
}

// deleteOwnKeys removes every key under prefix on every node (SCAN, never
// KEYS: the server may be busy with real work).
func deleteOwnKeys(c *deployment.Deployment, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.Nodes() {
		cursor := "0"
		for {
			v, err := n.Do(ctx, "SCAN", cursor, "MATCH", prefix+"*", "COUNT", 1000)
			if err != nil {
				break
			}
			reply, _ := v.([]any)
			if len(reply) != 2 {
				break
			}
			cursor, _ = reply[0].(string)
			keys, _ := reply[1].([]any)
			for _, k := range keys {
				_, _ = n.Do(ctx, "DEL", k)
			}
			if cursor == "0" {
				break
			}
		}
	}
}
