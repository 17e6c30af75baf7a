package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// startPair starts a primary and a standby of it (straight to the
// primary's port: no proxy), both closed at the test's end.
func startPair(t testing.TB) (primary, standby *Node) {
	t.Helper()
	primary = startNode(t, backend.NodeConfig{Name: "primary"})
	standby = startNode(t, backend.NodeConfig{Name: "standby"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := standby.ReplicaOf(ctx, primary.Addr()); err != nil {
		t.Fatalf("ReplicaOf: %v", err)
	}
	if err := standby.WaitLinkUp(ctx, 10*time.Second); err != nil {
		t.Fatalf("WaitLinkUp: %v", err)
	}
	return primary, standby
}

func caughtUp(t *testing.T, standby, primary *Node) {
	t.Helper()
	if err := standby.WaitCaughtUp(context.Background(), primary, 10*time.Second); err != nil {
		t.Fatalf("WaitCaughtUp: %v", err)
	}
}

func role(t *testing.T, n *Node) string {
	t.Helper()
	info, err := n.ReplicationInfo(context.Background())
	if err != nil {
		t.Fatalf("ReplicationInfo: %v", err)
	}
	return info["role"]
}

func TestStandbyFollowsAndPromotes(t *testing.T) {
	primary, standby := startPair(t)
	ctx := context.Background()
	if _, err := connect(t, primary).Exec(ctx, "INSERT INTO "+ResourceTable+" VALUES ('k', 7)"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, standby, primary)
	sc := connect(t, standby)
	var v int64
	if err := sc.QueryRow(ctx, "SELECT value FROM "+ResourceTable+" WHERE key='k'").Scan(&v); err != nil || v != 7 {
		t.Fatalf("the primary's row on the standby: %d, %v", v, err)
	}
	info, err := standby.ReplicationInfo(ctx)
	if err != nil || info["role"] != "standby" || info["receiver_status"] != "streaming" || info["lsn"] == "" {
		t.Fatalf("standby's ReplicationInfo: %v, %v", info, err)
	}
	if _, err := sc.Exec(ctx, "UPDATE "+ResourceTable+" SET value = 8"); err == nil {
		t.Fatal("a write on the standby was accepted")
	}
	if err := standby.ResetResource(ctx, ""); err != nil {
		t.Fatalf("ResetResource on a standby: %v", err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatalf("Promote: %v", err)
	}
	if _, err := sc.Exec(ctx, "UPDATE "+ResourceTable+" SET value = 8"); err != nil {
		t.Fatalf("a write on the promoted standby: %v", err)
	}
	if r := role(t, standby); r != "primary" {
		t.Fatalf("role after promotion %q", r)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatalf("Promote on a primary (a no-op): %v", err)
	}
	// The promoted node survives a restart as a primary.
	if err := standby.Restart(ctx); err != nil || role(t, standby) != "primary" {
		t.Fatalf("restart of the promoted node: %v", err)
	}
}

// TestLocksGoneOnPromotion confirms what the catalog expects of every
// PostgreSQL lock in the failover scenario: a session advisory lock and a
// row lock held on the primary are not held on the promoted standby, and
// another session takes both there at once.
func TestLocksGoneOnPromotion(t *testing.T) {
	primary, standby := startPair(t)
	ctx := context.Background()
	adv, row := connect(t, primary), connect(t, primary)
	advID, _ := lockID(t, adv, "adv"), lockID(t, adv, "row")
	var ok bool
	if err := adv.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", AdvisoryClass, advID).Scan(&ok); err != nil || !ok {
		t.Fatalf("advisory lock: %v %v", ok, err)
	}
	if _, err := row.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := row.Exec(ctx, "SELECT id FROM "+LocksTable+" WHERE name='row' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	// A commit flushes the WAL, the row lock's record with it, so the
	// standby replays the lock before it is promoted.
	if _, err := adv.Exec(ctx, "INSERT INTO "+ResourceTable+" VALUES ('flush', 1)"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, standby, primary)
	keys := []string{"adv", "row"}
	held, err := primary.ProbeKeys(ctx, keys)
	if err != nil || held["adv"] != Holder(backendPid(t, adv)) || held["row"] != Holder(backendPid(t, row)) {
		t.Fatalf("the primary's locks: %v, %v", held, err)
	}
	before, err := standby.ProbeKeys(ctx, keys)
	if err != nil {
		t.Fatalf("probe the standby: %v", err)
	}
	// The standby replays the row's lock (a primary's transaction in
	// progress) but no session of its own holds it.
	if len(before) != 0 {
		t.Fatalf("the standby holds %v before promotion, want nothing", before)
	}
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatalf("Promote: %v", err)
	}
	after, err := standby.ProbeKeys(ctx, keys)
	if err != nil || len(after) != 0 {
		t.Fatalf("the promoted standby holds %v (%v), want nothing", after, err)
	}
	takeBoth(t, connect(t, standby), advID)
}

// takeBoth takes the advisory lock on id and the row lock on "row" at once.
func takeBoth(t *testing.T, c *pgx.Conn, advID int32) {
	t.Helper()
	ctx := context.Background()
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", AdvisoryClass, advID).Scan(&ok); err != nil || !ok {
		t.Fatalf("advisory lock on the promoted standby: %v %v", ok, err)
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT id FROM "+LocksTable+" WHERE name='row' FOR UPDATE NOWAIT"); err != nil {
		t.Fatalf("row lock on the promoted standby: %v", err)
	}
}

// BenchmarkReplicaOf is what a failover's rejoin costs: a base backup of
// a fresh node's cluster, the standby started and streaming.
func BenchmarkReplicaOf(b *testing.B) {
	primary := startNode(b, backend.NodeConfig{Name: "primary"})
	standby := startNode(b, backend.NodeConfig{Name: "standby"})
	ctx := context.Background()
	for b.Loop() {
		if err := standby.ReplicaOf(ctx, primary.Addr()); err != nil {
			b.Fatal(err)
		}
		if err := standby.WaitLinkUp(ctx, 10*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPromote is a promotion's cost (a standby made before each, off the clock).
func BenchmarkPromote(b *testing.B) {
	primary := startNode(b, backend.NodeConfig{Name: "primary"})
	standby := startNode(b, backend.NodeConfig{Name: "standby"})
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		if err := standby.ReplicaOf(ctx, primary.Addr()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := standby.Promote(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
