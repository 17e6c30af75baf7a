package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/etcd"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

func TestVersionReadsEtcdsOwnLine(t *testing.T) {
	for out, want := range map[string][2]int{
		"etcd Version: 3.4.23\nGit SHA: Not provided\n": {3, 4},
		"etcd Version: 3.6.0\n":                         {3, 6},
	} {
		if ma, mi, ok := etcd.Version(out); !ok || ma != want[0] || mi != want[1] {
			t.Errorf("%q: %d.%d %v", out, ma, mi, ok)
		}
	}
	if _, _, ok := etcd.Version("Redis server v=7.0.15"); ok {
		t.Error("a Redis version read as etcd's")
	}
}

// LeaderIndex needs a majority of the members to name the same leader.
func TestLeaderIndexNeedsAMajority(t *testing.T) {
	sts := []etcd.MemberStatus{{ID: 1, Leader: 2}, {ID: 2, Leader: 2}, {ID: 3, Err: context.DeadlineExceeded}}
	if i, ok := etcd.LeaderIndex(sts, 2); !ok || i != 1 {
		t.Fatalf("leader %d %v, want member 1", i, ok)
	}
	sts[1].Leader = 3
	if _, ok := etcd.LeaderIndex(sts, 2); ok {
		t.Fatal("two members naming two leaders is no majority")
	}
}

// A member alone (a cluster of one) starts, answers, is paused, killed
// and started again with its data, and leaves nothing behind when closed
// (TestMain checks processes and folders).
func TestMemberLifecycle(t *testing.T) {
	ctx := context.Background()
	n := startSolo(t)
	cli, err := etcd.Admin([]string{n.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := etcd.WaitHealthy(ctx, cli, []string{n.Addr()}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cli.Get(cctx, "k")
	cancel()
	if err == nil {
		t.Fatal("a paused member answered")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.WaitHealthy(ctx, cli, []string{n.Addr()}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r, err := cli.Get(ctx, "k")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
		t.Fatalf("after a restart: %v %v", r, err)
	}
	dir := n.Dir()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind: %v", dir, err)
	}
}

// A missing etcd says how to get one, and a binary that is not etcd is
// named as such.
func TestNoEtcdSaysHowToGetOne(t *testing.T) {
	t.Setenv(etcd.BinEnv, "/nonexistent/etcd")
	if err := etcd.Check(); !errors.Is(err, etcd.ErrNoEtcd) || !strings.Contains(err.Error(), "apt-get install etcd-server") {
		t.Errorf("missing binary: %v", err)
	}
	t.Setenv(etcd.BinEnv, "/bin/true")
	if err := etcd.Check(); !errors.Is(err, etcd.ErrNoEtcd) || !strings.Contains(err.Error(), "not an etcd version") {
		t.Errorf("not etcd: %v", err)
	}
}

// TestMemberWhosePortWasTakenWhileDownSaysSo: a killed member's client
// port taken by another process before its restart must fail the restart
// as a port clash, not hand the harness a member it reaches as a stranger.
func TestMemberWhosePortWasTakenWhileDownSaysSo(t *testing.T) {
	ctx := context.Background()
	n := startSolo(t)
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	stranger, err := net.Listen("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	go func() {
		for {
			c, err := stranger.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	err = n.Start(ctx)
	if err == nil {
		t.Fatal("the member started on a port another process listens on")
	}
	if !errors.Is(err, backend.ErrNodeStart) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want a start error naming the port clash", err)
	}
}

// startSolo starts a one-member etcd cluster, closed with the test.
func startSolo(t *testing.T) *etcd.Node {
	t.Helper()
	if err := etcd.Check(); err != nil {
		t.Fatal(err) // make test installs it (.ci/ensure-etcd)
	}
	peer, err := backend.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", peer)
	// The member listens for peers on its own port: announce that one.
	n, err := etcd.Start(context.Background(), backend.NodeConfig{Name: "solo", Service: service.Etcd, ExtraArgs: []string{
		"--initial-cluster", "solo=" + url, "--initial-advertise-peer-urls", url, "--listen-peer-urls", url}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}
