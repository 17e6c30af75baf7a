package lockimpl_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// BenchmarkServiceCycle measures, in one run, one uncontended lock cycle
// (acquire, read the counter, write it plus one, release) of the Redis
// token lock, of every PostgreSQL lock and of the etcd locks, straight to
// their servers (etcd: three members), beside each service's floor (a
// bare round trip: Redis PING, PostgreSQL SELECT 1, etcd's linearizable
// Get, which the leader confirms with a heartbeat round). The resource of token, pg-row-outside and
// pg-advisory is the harness's own (in memory: free); pg-row's and
// pg-advisory-xact's is a row written and committed in the lock's
// transaction, so their cycle includes the write. Compare each figure with
// its floor: the ratio holds on any machine.
//
//	go test -run '^$' -bench BenchmarkServiceCycle -benchtime 3s ./lockimpl/
func BenchmarkServiceCycle(b *testing.B) {
	ctx := context.Background()
	rc := backendtest.Cluster(b, deployment.Config{Clients: 1})
	rdb, err := lockimpl.NewRedisClient(rc.Nodes()[0].Addr(), lockimpl.ClientConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rdb.Close() })
	b.Run("floor/redis-PING", func(b *testing.B) {
		for b.Loop() {
			if err := rdb.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lock/token", func(b *testing.B) {
		spec, _ := lockimpl.Lookup(lockimpl.NameToken)
		l, err := spec.Build(lockimpl.Env{Clients: []redis.UniversalClient{rdb}, TTL: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		benchCycles(b, l)
	})
	pg := pgServer(b, nil)
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close(context.Background()) })
	b.Run("floor/postgres-SELECT-1", func(b *testing.B) {
		for b.Loop() {
			var one int
			if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGRowOutside, lockimpl.NamePGAdvisory,
		lockimpl.NamePGAdvisoryXact} {
		b.Run("lock/"+name, func(b *testing.B) {
			benchCycles(b, pgPods(b, name, pg, 10*time.Second, nil)[0])
		})
	}
	ec := backendtest.Cluster(b, deployment.Config{Topology: deployment.Consensus, Clients: 1})
	var members []string
	for _, n := range ec.Nodes() {
		members = append(members, n.Addr())
	}
	b.Run("floor/etcd-Get", func(b *testing.B) {
		cli := ec.Admin()
		for b.Loop() {
			if _, err := cli.Get(ctx, "bench:floor"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{lockimpl.NameEtcdMutex, lockimpl.NameEtcdFenced, lockimpl.NameEtcdLease} {
		b.Run("lock/"+name, func(b *testing.B) {
			spec, _ := lockimpl.Lookup(name)
			l, err := spec.Build(lockimpl.Env{Addrs: members, TTL: 10 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			if c, ok := l.(interface{ Close() error }); ok {
				b.Cleanup(func() { _ = c.Close() })
			}
			benchCycles(b, l)
		})
	}
}

// benchCycles runs uncontended cycles of l on one key: a TxLease reads
// and commits through its transaction, any other lease has a counter in
// memory (as the harness's own resource).
func benchCycles(b *testing.B, l lockimpl.Locker) {
	ctx := context.Background()
	key, counter := "bench:cycle", int64(0)
	defer func() { _ = counter }()
	for b.Loop() {
		lease, err := l.Acquire(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if tx, ok := lease.(lockimpl.TxLease); ok {
			v, err := tx.ReadResource(ctx, key)
			if err == nil {
				err = tx.CommitWrite(ctx, key, v+1)
			}
			if err != nil {
				b.Fatal(err)
			}
		} else {
			counter++
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
