package deployment_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/service/etcd"
)

func consensus(t *testing.T, clients int) *deployment.Deployment {
	t.Helper()
	if err := etcd.Check(); err != nil {
		t.Fatal(err) // make test installs it (.ci/ensure-etcd)
	}
	return backendtest.Cluster(t, deployment.Config{Topology: deployment.Consensus, Clients: clients})
}

// podClient is a pod's etcd client: every connection through its links.
func podClient(t *testing.T, c *deployment.Deployment, pod int) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.ClientAddrs(pod), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Three members form one cluster through the relays; a pod writes
// through its links; the leader cut from its peers (its clients still
// reach it) loses the leadership to one of the other two, and the cut
// member's raft connections crossed the pair links (nothing slipped past
// the cut).
func TestConsensusFormsAndALeaderCutFromItsPeersIsReplaced(t *testing.T) {
	start := time.Now()
	c := consensus(t, 1)
	t.Logf("3-member etcd cluster ready in %v", time.Since(start))
	ctx := context.Background()
	cli := podClient(t, c, 0)
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	lead, ok := c.Leader(ctx)
	if !ok {
		t.Fatal("no leader")
	}
	// Every peer connection crosses a pair's link: none is carried
	// without knowing which member opened it (a probe, a forwarded lease
	// renewal are known by their process).
	time.Sleep(500 * time.Millisecond)
	if by := c.PeerConnsByCaller(); by[""] != 0 || len(by) < 3 {
		t.Errorf("peer connections by caller: %v", by)
	}
	cut := time.Now()
	for _, l := range c.MemberPeerLinks(lead) {
		if err := l.Disable(); err != nil {
			t.Fatal(err)
		}
	}
	next, err := c.AwaitLeader(ctx, lead, 10*time.Second)
	if err != nil {
		t.Fatalf("member%d cut from its peers: %v", lead, err)
	}
	t.Logf("member%d cut from its peers; member%d leads after %v", lead, next, time.Since(cut))
	if err := c.HealAll(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConsensusHealthy(ctx, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "k", "w"); err != nil {
		t.Fatal(err)
	}
}
