package postgres

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// observe starts a witness on n for keys other than "ignored"; the
// changes arrive on the channel; stop runs at the test's end.
func observe(t *testing.T, n *Node) (<-chan backend.KeyChange, func()) {
	ch := make(chan backend.KeyChange, 1000)
	stop := n.ObserveKeys(func(k string) bool { return k != "ignored" },
		func(c backend.KeyChange) { ch <- c })
	t.Cleanup(stop)
	return ch, stop
}

// next waits for the next change of op (skipping none: any other change
// first fails the test).
func next(t *testing.T, ch <-chan backend.KeyChange, op backend.KeyOp, key, value string) backend.KeyChange {
	t.Helper()
	select {
	case c := <-ch:
		if c.Op != op || c.Key != key || (value != "" && c.Value != value) {
			t.Fatalf("got %+v, want %s %q %q", c, op, key, value)
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s %q within 10 s", op, key)
	}
	return backend.KeyChange{}
}

// lockID makes sure name has its row and returns its id.
func lockID(t *testing.T, conn *pgx.Conn, name string) int32 {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "INSERT INTO "+LocksTable+"(name) VALUES($1) ON CONFLICT DO NOTHING", name); err != nil {
		t.Fatal(err)
	}
	var id int32
	if err := conn.QueryRow(ctx, "SELECT id FROM "+LocksTable+" WHERE name=$1", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func backendPid(t *testing.T, conn *pgx.Conn) int32 {
	var pid int32
	if err := conn.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestWitnessAdvisoryTakenReleased(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "adv"})
	conn := connect(t, n)
	ctx := context.Background()
	ignored, id := lockID(t, conn, "ignored"), lockID(t, conn, "a")
	ch, _ := observe(t, n)
	next(t, ch, backend.Watching, "", "")
	holder := Holder(backendPid(t, conn))
	for _, k := range []int32{ignored, id} {
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", AdvisoryClass, k); err != nil {
			t.Fatal(err)
		}
	}
	set := next(t, ch, backend.KeySet, "a", holder)
	if set.Node != "adv" || set.At.IsZero() {
		t.Fatalf("KeySet without node or time: %+v", set)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", AdvisoryClass, id); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.KeyDel, "a", holder)
}

func TestWitnessRowLockTerminated(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "row"})
	admin, conn := connect(t, n), connect(t, n)
	ctx := context.Background()
	lockID(t, conn, "b")
	ch, _ := observe(t, n)
	next(t, ch, backend.Watching, "", "")
	pid := backendPid(t, conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+LocksTable+" WHERE name='b' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.KeySet, "b", Holder(pid))
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch, backend.KeyExpired, "b", Holder(pid)); c.Reason != "session ended: "+string(CauseTerminated) {
		t.Errorf("the terminated session's removal says %q; want the cause from the log", c.Reason)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		ends, err := SessionEnds(n.LogPath())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ends {
			if e.PID == pid {
				if e.Cause != CauseTerminated || e.Time.IsZero() || time.Since(e.Time) > time.Minute {
					t.Fatalf("session end %+v, want %q now", e, CauseTerminated)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session end for pid %d in %s: %+v", pid, n.LogPath(), ends)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWitnessBlindOnKillAndPause(t *testing.T) {
	before := runtime.NumGoroutine()
	n := startNode(t, backend.NodeConfig{Name: "blind"})
	ctx := context.Background()
	ch, stop := observe(t, n)
	next(t, ch, backend.Watching, "", "")
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch, backend.Blind, "", ""); c.Reason == "" {
		t.Fatal("Blind without a reason")
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.Watching, "", "")
	conn := connect(t, n)
	id := lockID(t, conn, "c")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", AdvisoryClass, id); err != nil {
		t.Fatal(err)
	}
	holder := Holder(backendPid(t, conn))
	next(t, ch, backend.KeySet, "c", holder)
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.Blind, "", "")
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.Watching, "", "")
	next(t, ch, backend.KeyPresent, "c", holder)
	stop()
	_ = conn.Close(ctx)
	_ = n.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after stop, %d before", g, before)
	}
}

// TestWitnessAbsentAfterKill: a lock held when the server was killed is
// reported absent when the witness sees the server again.
func TestWitnessAbsentAfterKill(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "absent"})
	ctx := context.Background()
	ch, _ := observe(t, n)
	next(t, ch, backend.Watching, "", "")
	conn := connect(t, n)
	id := lockID(t, conn, "k")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", AdvisoryClass, id); err != nil {
		t.Fatal(err)
	}
	holder := Holder(backendPid(t, conn))
	next(t, ch, backend.KeySet, "k", holder)
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.Blind, "", "")
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	next(t, ch, backend.Watching, "", "")
	next(t, ch, backend.KeyAbsent, "k", holder)
}
