package lockimpl_test

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// BenchmarkPGLockCycle measures one uncontended cycle, one pod, straight
// to the server: acquire, read the resource, write it (pg-row: in the
// lock's transaction, whose commit also frees the lock; pg-advisory: on
// the app's own connection, autocommitted), release. Each lease after
// the first runs on the session the last one left spare; a fresh session
// (a backend fork) would cost about 7 ms more per cycle.
//
//	go test -run '^$' -bench BenchmarkPGLockCycle ./lockimpl/
func BenchmarkPGLockCycle(b *testing.B) {
	n := pgServer(b, nil)
	app := pgAdmin(b, n)
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGAdvisory} {
		b.Run(name, func(b *testing.B) {
			l := pgPods(b, name, n, 10*time.Second, nil)[0]
			key := "bench:" + name
			b.ResetTimer()
			start := time.Now()
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
					var v int64
					if err := app.QueryRow(ctx, "SELECT coalesce(max(value), 0) FROM "+postgres.ResourceTable+
						" WHERE key = $1", key).Scan(&v); err != nil {
						b.Fatal(err)
					}
					if _, err := app.Exec(ctx, "INSERT INTO "+postgres.ResourceTable+" (key, value) VALUES ($1, $2) "+
						"ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", key, v+1); err != nil {
						b.Fatal(err)
					}
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
		})
	}
}
