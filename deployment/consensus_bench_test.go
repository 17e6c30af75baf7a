package deployment_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
)

// BenchmarkConsensusReady: three etcd members, from the first process to
// every member naming one leader and a linearizable read going through
// (the target: under 3 s on the process backend).
func BenchmarkConsensusReady(b *testing.B) {
	for b.Loop() {
		c := backendtest.Cluster(b, deployment.Config{Topology: deployment.Consensus, Clients: 8})
		b.StopTimer()
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkConsensusLeaderKill: the SIGKILL of the leader, and what it
// does to a lock's lease. Per op: outage-ms, from the kill to the first
// write the two members left commit (an election); lease-ms, how long a
// key on a lease granted 2 s just before the kill lived on the servers
// (the new leader gives every lease a fresh TTL when it takes over, so a
// dead holder's lock outlives its TTL by about the election). Each op
// restarts the old leader and waits for the three to agree again. Run
// with -benchtime Nx.
func BenchmarkConsensusLeaderKill(b *testing.B) {
	c := backendtest.Cluster(b, deployment.Config{Topology: deployment.Consensus})
	ctx := context.Background()
	cli := c.Admin()
	const ttl = 2
	var outage, lived time.Duration
	for b.Loop() {
		lead, ok := c.Leader(ctx)
		if !ok {
			b.Fatal("no leader")
		}
		g, err := cli.Grant(ctx, ttl)
		if err != nil {
			b.Fatal(err)
		}
		granted := time.Now()
		if _, err := cli.Put(ctx, "bench:lock", "x", clientv3.WithLease(g.ID)); err != nil {
			b.Fatal(err)
		}
		if err := c.Node(lead).Kill(); err != nil {
			b.Fatal(err)
		}
		killed := time.Now()
		for {
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err := cli.Put(cctx, "bench:probe", "x")
			cancel()
			if err == nil {
				break
			}
		}
		outage += time.Since(killed)
		for {
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			r, err := cli.Get(cctx, "bench:lock")
			cancel()
			if err == nil && len(r.Kvs) == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lived += time.Since(granted)
		b.StopTimer()
		if err := c.Node(lead).Start(ctx); err != nil {
			b.Fatal(err)
		}
		if err := c.WaitConsensusHealthy(ctx, 20*time.Second); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(outage.Milliseconds())/float64(b.N), "outage-ms")
	b.ReportMetric(float64(lived.Milliseconds())/float64(b.N), "lease-ms")
	b.ReportMetric(ttl*1000, "ttl-ms")
}
