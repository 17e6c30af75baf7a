package witness_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/witness"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

// seen collects what a witness reports.
type seen struct {
	mu  sync.Mutex
	all []string
	chs []backend.KeyChange
}

func (s *seen) sink(key string, c backend.KeyChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, fmt.Sprintf("%s %s %s=%s", c.Node, c.Op, key, c.Value))
	s.chs = append(s.chs, c)
}

func (s *seen) ops() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

func (s *seen) has(t *testing.T, want string) {
	t.Helper()
	backendtest.Eventually(t, 3*time.Second, want, func() bool { return slices.Contains(s.ops(), want) })
}

func start(t *testing.T, dep *deployment.Deployment, keys ...string) *seen {
	t.Helper()
	s := &seen{}
	w := witness.Start(context.Background(), witness.Config{Nodes: dep.Nodes(), Keys: keys, Sink: s.sink})
	t.Cleanup(w.Stop)
	s.has(t, "node0 watching =")
	return s
}

// A lease's life as a token lock lives it: written with its expiry, a
// refused SET NX that changes nothing, a release script's delete with the
// value it deleted, a renewal, an expiry; a fence counter beside it is no
// lease; a key outside the namespace is not reported.
func TestWitnessSeesALeaseLifeOnRealRedis(t *testing.T) {
	dep := backendtest.Cluster(t, deployment.Config{})
	rdb := backendtest.Client(t, dep.Node(0).Addr())
	s := start(t, dep, "order:1")
	ctx := context.Background()
	before := time.Now()
	if ok, err := rdb.SetNX(ctx, "order:1", "tokA", 300*time.Millisecond).Result(); err != nil || !ok {
		t.Fatalf("SET NX: %v %v", ok, err)
	}
	if ok, _ := rdb.SetNX(ctx, "order:1", "tokB", 300*time.Millisecond).Result(); ok {
		t.Fatal("second SET NX took a held key")
	}
	rdb.Incr(ctx, "order:1:fence")
	rdb.PExpire(ctx, "order:1:fence", time.Hour)
	rdb.Set(ctx, "order:10", "other", time.Second)
	s.has(t, "node0 set order:1=tokA")
	del, err := rdb.Eval(ctx, `if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0`,
		[]string{"order:1"}, "tokA").Result()
	if err != nil || del != int64(1) {
		t.Fatalf("release deleted %v", del)
	}
	s.has(t, "node0 del order:1=tokA")
	rdb.Set(ctx, "order:1", "tokC", 100*time.Millisecond)
	rdb.PExpire(ctx, "order:1", 200*time.Millisecond)
	s.has(t, "node0 expire order:1=tokC")
	s.has(t, "node0 expired order:1=tokC")
	for _, o := range s.ops() {
		if strings.Contains(o, "fence") || strings.Contains(o, "order:10") || strings.Contains(o, "tokB") {
			t.Errorf("reported what is no lease of order:1: %s", o)
		}
	}
	// The first set's deadline is its write's time plus the TTL, to the
	// millisecond the server counts in.
	for _, c := range s.chs {
		if c.Op == backend.KeySet && c.Value == "tokA" {
			got := c.Deadline.Sub(before)
			if got < 295*time.Millisecond || got > 320*time.Millisecond {
				t.Errorf("deadline %v after the write, want about 300ms", got)
			}
		}
	}
	want := []string{"node0 watching =", "node0 set order:1=tokA", "node0 del order:1=tokA", "node0 set order:1=tokC",
		"node0 expire order:1=tokC", "node0 expired order:1=tokC"}
	if got := s.ops(); !slices.Equal(got, want) {
		t.Errorf("witness saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A node killed under a live lease: the witness goes blind, comes back
// when the node does, and finds the lease gone.
func TestWitnessSeesANodeRestartEmpty(t *testing.T) {
	dep := backendtest.Cluster(t, deployment.Config{})
	rdb := backendtest.Client(t, dep.Node(0).Addr())
	s := start(t, dep, "order:1")
	ctx := context.Background()
	rdb.Set(ctx, "order:1", "tokA", 10*time.Second)
	s.has(t, "node0 set order:1=tokA")
	if err := dep.Node(0).Restart(ctx); err != nil {
		t.Fatal(err)
	}
	s.has(t, "node0 absent order:1=tokA")
	ops := s.ops()
	if i := slices.Index(ops, "node0 blind ="); i < 0 || i > slices.Index(ops, "node0 absent order:1=tokA") {
		t.Errorf("no blind before the lease was found lost: %v", ops)
	}
}

// The witness leaves a server's notification setting as it found it (on
// someone else's Redis, that matters).
func TestWitnessPutsTheNotificationSettingBack(t *testing.T) {
	dep := backendtest.Cluster(t, deployment.Config{})
	rdb := backendtest.Client(t, dep.Node(0).Addr())
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "Elg").Err(); err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	w := witness.Start(ctx, witness.Config{Nodes: dep.Nodes(), Keys: []string{"order:1"}, Sink: s.sink})
	s.has(t, "node0 watching =")
	during, _ := rdb.ConfigGet(ctx, "notify-keyspace-events").Result()
	w.Stop()
	after, _ := rdb.ConfigGet(ctx, "notify-keyspace-events").Result()
	if got := during["notify-keyspace-events"]; !strings.Contains(got, "K") || !strings.Contains(got, "x") {
		t.Errorf("while watching the setting was %q, want keyspace events and expiries", got)
	}
	if got := after["notify-keyspace-events"]; got != "glE" && got != "Elg" && got != "lgE" {
		t.Errorf("after the witness the setting is %q, want the user's Elg back", got)
	}
}

// A server that refuses CONFIG (a managed Redis): the witness cannot turn
// notifications on, says so once with the reason, and never claims to
// have watched it.
func TestWitnessOnAServerThatRefusesConfigIsBlindAndSaysWhy(t *testing.T) {
	port := freePort(t)
	srv := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--rename-command", "CONFIG", "")
	if err := srv.Start(); err != nil {
		t.Skipf("redis-server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	rdb := backendtest.Client(t, addr)
	backendtest.Eventually(t, 5*time.Second, "redis-server up", func() bool { return rdb.Ping(context.Background()).Err() == nil })
	s := &seen{}
	w := witness.Start(context.Background(), witness.Config{Nodes: []backend.RedisNode{addrNode{addr: addr}}, Keys: []string{"order:1"}, Sink: s.sink})
	defer w.Stop()
	s.has(t, "managed blind =")
	rdb.Set(context.Background(), "order:1", "tokA", time.Second)
	time.Sleep(50 * time.Millisecond)
	for _, c := range s.chs {
		if c.Op != backend.Blind {
			t.Errorf("reported %s on a node it cannot watch", c.Op)
		}
		if !strings.Contains(c.Reason, "CONFIG SET was refused") || !strings.Contains(c.Reason, "notify-keyspace-events Kg$xe") {
			t.Errorf("reason %q does not say what was refused and how to enable it", c.Reason)
		}
	}
}

// addrNode is a node the test started itself: only its name and address.
type addrNode struct {
	backend.RedisNode
	addr string
}

func (n addrNode) Name() string { return "managed" }
func (n addrNode) Addr() string { return n.addr }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
