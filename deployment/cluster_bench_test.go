package deployment_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
)

// BenchmarkClusterReady: a 3-shard cluster with a replica each, from the
// first redis-server to every node agreeing and every replica having
// acknowledged a write (the target: under 3 s on the process backend).
func BenchmarkClusterReady(b *testing.B) {
	for b.Loop() {
		c := backendtest.Cluster(b, deployment.Config{Topology: deployment.Cluster, Clients: 8})
		b.StopTimer()
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkClusterFailover: the cluster's own failover, from the SIGKILL of
// a primary to its replica answering a write to the dead primary's slots,
// beside cluster-node-timeout (failover-ms and node-timeout-ms per op;
// ns/op also counts the old primary's return as a replica). Run with
// -benchtime Nx: each op is a failover of a second or more.
func BenchmarkClusterFailover(b *testing.B) {
	for _, nt := range []time.Duration{500 * time.Millisecond, 2 * time.Second} {
		b.Run(nt.String(), func(b *testing.B) {
			c := backendtest.Cluster(b, deployment.Config{Topology: deployment.Cluster,
				Cluster: deployment.ClusterConfig{NodeTimeout: nt}})
			ctx := context.Background()
			key := "{order:1}"
			var total time.Duration
			for b.Loop() {
				p, r, err := c.KeyNodes(ctx, key)
				if err != nil {
					b.Fatal(err)
				}
				admin := backend.Admin(c.Node(r).Addr())
				if err := c.Node(p).Kill(); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for admin.Set(ctx, key, "x", time.Second).Err() != nil {
					if time.Since(start) > deployment.ClusterReadyTimeout {
						b.Fatalf("no write on %s within %v", c.Node(r).Name(), deployment.ClusterReadyTimeout)
					}
					time.Sleep(2 * time.Millisecond)
				}
				total += time.Since(start)
				admin.Close()
				if err := c.Node(p).Start(ctx); err != nil {
					b.Fatal(err)
				}
				if err := c.WaitClusterSettled(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "failover-ms")
			b.ReportMetric(float64(nt.Milliseconds()), "node-timeout-ms")
		})
	}
}
