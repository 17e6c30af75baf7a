package docker_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/docker"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// pgBackend returns the shared docker backend, or skips the test when no
// engine answers or the PostgreSQL image is missing.
func pgBackend(t testing.TB) *docker.Backend {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = docker.NewBackend(context.Background(), docker.Config{})
	})
	if sharedErr != nil {
		t.Skipf("docker backend unavailable: %v", sharedErr)
	}
	if err := shared.Supports(backend.Needs{Service: service.Postgres}); err != nil {
		t.Skip(err)
	}
	return shared
}

// pgNode starts a PostgreSQL container node, closed at the test's end.
func pgNode(t testing.TB, extra ...string) *docker.PostgresNode {
	t.Helper()
	b := pgBackend(t)
	rn, err := b.StartNode(context.Background(), backend.NodeConfig{Name: "pg", Service: service.Postgres, ExtraArgs: extra})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rn.Close() })
	return rn.(*docker.PostgresNode)
}

func pgConnect(t testing.TB, n *docker.PostgresNode) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// A container node answers on loopback with the schema and the extra
// settings; a kill and a start keep its rows; a paused one answers
// nothing until resumed; ResetResource empties the resource; Close
// leaves no container.
func TestDockerPostgresNodeKillStartPauseClose(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	n := pgNode(t, "-c", "lock_timeout=4321")
	t.Logf("node started in %v", time.Since(start))
	if !strings.HasPrefix(n.Addr(), "127.0.0.1:") {
		t.Fatalf("container node at %s, want loopback", n.Addr())
	}
	conn := pgConnect(t, n)
	var timeout string
	if err := conn.QueryRow(ctx, "SHOW lock_timeout").Scan(&timeout); err != nil || timeout != "4321ms" {
		t.Fatalf("lock_timeout = %q, %v; want the extra argument's 4321ms", timeout, err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO "+postgres.LocksTable+"(name) VALUES('a'); INSERT INTO "+
		postgres.ResourceTable+"(key, value) VALUES('k', 7)"); err != nil {
		t.Fatalf("the schema is not there: %v", err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("the connection answers after a kill")
	}
	start = time.Now()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed node back in %v", time.Since(start))
	conn = pgConnect(t, n)
	var v int64
	if err := conn.QueryRow(ctx, "SELECT value FROM "+postgres.ResourceTable+" WHERE key='k'").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after kill and start: value %d, %v; want the committed 7", v, err)
	}
	pauseResume(t, n, conn)
	if err := n.ResetResource(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+postgres.ResourceTable).Scan(&v); err != nil || v != 0 {
		t.Fatalf("after ResetResource: %d rows, %v", v, err)
	}
	id := n.ContainerID()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("docker", "ps", "-a", "-q", "--no-trunc", "--filter", "id="+id).Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("container %s still listed after Close", id)
	}
}

// pauseResume: a query on a paused node waits (no answer in 300 ms) and
// completes once it is resumed.
func pauseResume(t *testing.T, n *docker.PostgresNode, conn *pgx.Conn) {
	t.Helper()
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := conn.Exec(context.Background(), "SELECT 1"); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("a query returned %v while the container was paused", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the query after resume: %v", err)
	}
}

// The witness (service/postgres's, on the published port) sees an
// advisory lock taken and released, with the holder's backend pid.
func TestDockerPostgresWitnessSeesAdvisoryLock(t *testing.T) {
	ctx := context.Background()
	n := pgNode(t)
	conn := pgConnect(t, n)
	var id, pid int32
	if err := conn.QueryRow(ctx, "INSERT INTO "+postgres.LocksTable+"(name) VALUES('order') RETURNING id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	ch := make(chan backend.KeyChange, 100)
	stop := n.ObserveKeys(func(string) bool { return true }, func(c backend.KeyChange) { ch <- c })
	t.Cleanup(stop)
	want := func(op backend.KeyOp, key string) {
		t.Helper()
		select {
		case c := <-ch:
			if c.Op != op || c.Key != key || c.Node != "pg" || (key != "" && c.Value != postgres.Holder(pid)) {
				t.Fatalf("got %+v, want %s %q by %s", c, op, key, postgres.Holder(pid))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s %q within 5 s", op, key)
		}
	}
	want(backend.Watching, "")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", postgres.AdvisoryClass, id); err != nil {
		t.Fatal(err)
	}
	want(backend.KeySet, "order")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", postgres.AdvisoryClass, id); err != nil {
		t.Fatal(err)
	}
	want(backend.KeyDel, "order")
}

// PostgreSQL cells run here but for a standby, clocks and power loss,
// each refused with its reason.
func TestDockerPostgresSupports(t *testing.T) {
	b := pgBackend(t)
	if err := b.Supports(backend.Needs{Service: service.Postgres, NodeControl: true, Nodes: 3}); err != nil {
		t.Fatalf("node control on PostgreSQL refused: %v", err)
	}
	for _, c := range []struct {
		needs backend.Needs
		says  string
	}{
		{backend.Needs{Replica: true}, "standby"},
		{backend.Needs{Sentinel: true}, "standby"},
		{backend.Needs{Clock: true}, "clock"},
		{backend.Needs{Persistence: true}, "power loss"},
	} {
		c.needs.Service = service.Postgres
		err := b.Supports(c.needs)
		if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(backend.Reason(err), c.says) {
			t.Errorf("Supports(%+v) = %v, want unsupported saying %q", c.needs, err, c.says)
		}
	}
}

// The image runs postgres with every setting of service/postgres's
// process nodes (build-postgres-image.sh copies the list; this catches
// the two drifting apart).
func TestDockerPostgresImageHasTheNodeSettings(t *testing.T) {
	pgBackend(t)
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{json .Config.Entrypoint}}",
		docker.DefaultPostgresImage).Output()
	if err != nil {
		t.Fatal(err)
	}
	var entry []string
	if err := json.Unmarshal(out, &entry); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(postgres.Settings(), "listen_addresses=*", "port=5432") {
		if i := slices.Index(entry, s); i < 1 || entry[i-1] != "-c" {
			t.Errorf("the image's entrypoint %q lacks -c %q", entry, s)
		}
	}
}

// BenchmarkDockerPostgresNodeStart: a PostgreSQL container node from
// StartNode to the schema in place, then Close (a process node: ~70 ms).
//
//	go test ./backend/docker -run '^$' -bench DockerPostgresNodeStart -benchtime 10x
func BenchmarkDockerPostgresNodeStart(b *testing.B) {
	be := pgBackend(b)
	var started time.Duration
	for b.Loop() {
		t0 := time.Now()
		rn, err := be.StartNode(context.Background(), backend.NodeConfig{Name: "bench", Service: service.Postgres})
		if err != nil {
			b.Fatal(err)
		}
		started += time.Since(t0)
		if err := rn.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(started.Milliseconds())/float64(b.N), "start-ms/op")
}
