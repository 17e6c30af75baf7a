package postgres

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// startNode starts a node closed at the test's end.
func startNode(t testing.TB, cfg backend.NodeConfig) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func connect(t testing.TB, n *Node) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), n.URL())
	if err != nil {
		t.Fatalf("connect %s: %v", n.URL(), err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// serverPids is the postmaster pid and its children's.
func serverPids(n *Node) []int {
	pm := n.PID()
	return append([]int{pm}, children(pm)...)
}

// waitPidsGone fails unless every one of pids has died within 5 s.
func waitPidsGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for {
			state, _ := procStat(p)
			if state == "" || state == "Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("server process %d still alive (state %s)", p, state)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestLifecycleLeavesNothing(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "life"})
	ctx := context.Background()
	conn := connect(t, n)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %v %d", err, one)
	}
	pids := serverPids(n)
	if len(pids) < 4 {
		t.Fatalf("want a postmaster, its helpers and a backend, got %v", pids)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	waitPidsGone(t, pids)
	if n.State() != backend.NodeKilled {
		t.Fatalf("state %s after Kill", n.State())
	}
	port := n.Port()
	if err := n.Start(ctx); err != nil {
		t.Fatalf("Start after Kill: %v", err)
	}
	if n.Port() != port {
		t.Fatalf("port %d after restart, was %d", n.Port(), port)
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	conn2 := connect(t, n)
	if err := conn2.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("SELECT 1 after restart and resume: %v", err)
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	conn3 := connect(t, n)
	pids = serverPids(n)
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		// A child that ended just before (Z, or reaped) is no longer
		// the server's.
		if state, _ := procStat(p); state != "T" && state != "Z" && state != "" {
			t.Fatalf("process %d state %q while paused, want T (stopped)", p, state)
		}
	}
	_ = conn3
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	waitPidsGone(t, pids)
	if _, err := os.Stat(n.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("node folder %s still there: %v", n.Dir(), err)
	}
	for _, live := range backend.LiveNodes() {
		if live == backend.RedisNode(n) {
			t.Fatal("closed node still tracked")
		}
	}
	if err := n.Start(ctx); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("Start after Close: %v, want ErrClosed", err)
	}
}

func TestSchemaAndRedisOnly(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "schema", ExtraArgs: []string{"-c", "application_name=x"}})
	conn := connect(t, n)
	ctx := context.Background()
	for _, table := range []string{LocksTable, ResourceTable} {
		var name *string
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1)::text", table).Scan(&name); err != nil || name == nil {
			t.Fatalf("table %s: %v", table, err)
		}
	}
	var ext int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_extension WHERE extname='pgrowlocks'").Scan(&ext); err != nil || ext != 1 {
		t.Fatalf("pgrowlocks: %v %d", err, ext)
	}
	var maxConn string
	if err := conn.QueryRow(ctx, "SHOW max_connections").Scan(&maxConn); err != nil || maxConn != "200" {
		t.Fatalf("max_connections %q: %v", maxConn, err)
	}
	if _, err := n.Do(ctx, "PING"); !errors.Is(err, backend.ErrUnsupported) ||
		!strings.Contains(err.Error(), "a PostgreSQL server does not answer Redis commands") {
		t.Fatalf("Do: %v", err)
	}
	if got := n.ConnString("127.0.0.1:1"); got != "postgres://lockchaos@127.0.0.1:1/lockchaos?sslmode=disable&"+
		"application_name=lockchaos-admin&idle_session_timeout=0&idle_in_transaction_session_timeout=0" {
		t.Fatalf("ConnString: %s", got)
	}
}

func TestBadBinary(t *testing.T) {
	_, err := Start(context.Background(), backend.NodeConfig{Binary: "/nonexistent/pg/bin"})
	if !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("err %v, want ErrNoPostgres", err)
	}
	for _, words := range []string{"apt-get install postgresql", BinEnv} {
		if !strings.Contains(err.Error(), words) {
			t.Fatalf("error %q does not say %q", err, words)
		}
	}
	t.Setenv(BinEnv, t.TempDir())
	if _, err := Find(); !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("Find with an empty %s: %v", BinEnv, err)
	}
}

// BenchmarkStart is a node's start until it accepts connections and has
// its schema (the template cluster made before the clock runs).
func BenchmarkStart(b *testing.B) {
	startNode(b, backend.NodeConfig{Name: "warm"})
	b.ResetTimer()
	for range b.N {
		n, err := Start(context.Background(), backend.NodeConfig{Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = n.Close()
		b.StartTimer()
	}
}

// BenchmarkRestart is a Kill then a Start of a running node (what a
// node-restart fault costs; NodeOpTime).
func BenchmarkRestart(b *testing.B) {
	n := startNode(b, backend.NodeConfig{Name: "restart"})
	ctx := context.Background()
	for range b.N {
		if err := n.Restart(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAdminSessionOutlivesTunedTimeouts: a server started with a tuned
// lock's idle timeouts ends an idle lock session, but not the harness's
// own admin session (URL), which idles between a standby's calls.
func TestAdminSessionOutlivesTunedTimeouts(t *testing.T) {
	ctx := context.Background()
	n, err := Start(ctx, backend.NodeConfig{Name: "tuned", ExtraArgs: []string{"-c", "idle_session_timeout=100ms",
		"-c", "idle_in_transaction_session_timeout=100ms"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	admin, err := pgx.Connect(ctx, n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	plain, err := pgx.Connect(ctx, "postgres://"+Role+"@"+n.Addr()+"/"+Database+"?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	time.Sleep(400 * time.Millisecond)
	if _, err := admin.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("the admin session died idle under the tuned timeouts: %v", err)
	}
	if _, err := plain.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a plain session idle past idle_session_timeout still answered: the test proves nothing")
	}
}
