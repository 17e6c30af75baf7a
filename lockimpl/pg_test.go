package lockimpl_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
	"github.com/lockchaos/lockchaos/workload"
)

// TestPGSchemaAgrees: lockimpl repeats what service/postgres creates (it
// cannot import it); the two must agree.
func TestPGSchemaAgrees(t *testing.T) {
	for _, c := range []struct{ name, got, want string }{
		{"database", lockimpl.PGDatabase, postgres.Database},
		{"user", lockimpl.PGUser, postgres.Role},
		{"locks table", lockimpl.PGLocksTable, postgres.LocksTable},
		{"resource table", lockimpl.PGResourceTable, postgres.ResourceTable},
	} {
		if c.got != c.want {
			t.Errorf("%s: lockimpl says %q, service/postgres %q", c.name, c.got, c.want)
		}
	}
	if lockimpl.PGAdvisoryClass != postgres.AdvisoryClass {
		t.Errorf("advisory class: lockimpl says %#x, service/postgres %#x", lockimpl.PGAdvisoryClass, postgres.AdvisoryClass)
	}
}

// TestPGExcludesAndReleases: a held lock refuses every other session
// (definitely), its release frees it, a second release is ErrNotHeld.
func TestPGExcludesAndReleases(t *testing.T) {
	n := pgServer(t, nil)
	for _, name := range pgLocks {
		t.Run(name, func(t *testing.T) {
			ls := pgPods(t, name, n, testTTL, noDials(2)...)
			a := mustAcquire(t, ls[0], "order:"+name)
			wantNotAcquired(t, ls[1], "order:"+name)
			wantNotAcquired(t, ls[0], "order:"+name) // another session of the same pod
			if err := a.Release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
			if err := a.Release(ctx); !errors.Is(err, lockimpl.ErrNotHeld) {
				t.Fatalf("second release: %v, want ErrNotHeld", err)
			}
			for range 2 { // the second on the session the first left spare
				b := mustAcquire(t, ls[1], "order:"+name)
				if b.Token() == a.Token() {
					t.Errorf("two pods' leases share token %s: a lease is a session of its own", a.Token())
				}
				wantNotAcquired(t, ls[0], "order:"+name)
				if err := b.Release(ctx); err != nil {
					t.Fatalf("release: %v", err)
				}
			}
		})
	}
}

// TestPGCommitWrite: an in-transaction lock's write commits with the
// lock's transaction and frees the lock.
func TestPGCommitWrite(t *testing.T) {
	n := pgServer(t, nil)
	admin := pgAdmin(t, n)
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGAdvisoryXact} {
		t.Run(name, func(t *testing.T) {
			ls := pgPods(t, name, n, testTTL, noDials(2)...)
			key := "res:" + name
			for i, want := range []int64{0, 7} {
				tx := mustAcquire(t, ls[i], key).(lockimpl.TxLease)
				v, err := tx.ReadResource(ctx, key)
				if err != nil || v != want {
					t.Fatalf("read: %d, %v; want %d", v, err, want)
				}
				if err := tx.CommitWrite(ctx, key, v+7); err != nil {
					t.Fatalf("commit: %v", err)
				}
				if err := tx.Release(ctx); err != nil {
					t.Fatalf("release after commit: %v", err)
				}
			}
			if got := pgValue(t, admin, key); got != 14 {
				t.Fatalf("value %d after two commits, want 14", got)
			}
		})
	}
}

// TestPGTerminatedHolder: a holder whose session the server ended finds
// out definitely: its commit (or release) is ErrNotHeld, its write did
// not happen, and someone else can take the lock.
func TestPGTerminatedHolder(t *testing.T) {
	n := pgServer(t, nil)
	admin := pgAdmin(t, n)
	for _, name := range pgLocks {
		t.Run(name, func(t *testing.T) {
			ls := pgPods(t, name, n, testTTL, noDials(2)...)
			key := "term:" + name
			a := mustAcquire(t, ls[0], key)
			tx, inTx := a.(lockimpl.TxLease)
			if inTx {
				if _, err := tx.ReadResource(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			var ok bool
			if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", pgPID(t, a)).Scan(&ok); err != nil || !ok {
				t.Fatalf("terminate: %v %v", ok, err)
			}
			b := acquireWithin(t, ls[1], key, 2*time.Second)
			defer func() { _ = b.Release(ctx) }()
			var err error
			if inTx {
				err = tx.CommitWrite(ctx, key, 99)
				if got := pgValue(t, admin, key); got != 0 {
					t.Errorf("a terminated holder's write landed: value %d", got)
				}
			} else {
				err = a.Release(ctx)
			}
			if !errors.Is(err, lockimpl.ErrNotHeld) {
				t.Fatalf("terminated holder: %v, want ErrNotHeld", err)
			}
		})
	}
}

// TestPGTunedIdleHolderLoses: a tuned lock's holder idle past the TTL
// (paused, slow) has its session ended by the server, so another pod
// takes the lock, and the old holder learns it only when it next speaks.
func TestPGTunedIdleHolderLoses(t *testing.T) {
	const ttl = 200 * time.Millisecond
	servers := map[string]*postgres.Node{}
	for _, name := range pgTunedLocks {
		spec, _ := lockimpl.Lookup(name)
		args := spec.ServerArgs(ttl)
		id := strings.Join(args, " ")
		if servers[id] == nil {
			servers[id] = pgServer(t, args)
		}
		n := servers[id]
		t.Run(name, func(t *testing.T) {
			admin := pgAdmin(t, n)
			ls := pgPods(t, name, n, ttl, noDials(2)...)
			key := "idle:" + name
			a := mustAcquire(t, ls[0], key)
			b := acquireWithin(t, ls[1], key, 20*ttl)
			defer func() { _ = b.Release(ctx) }()
			var err error
			if tx, ok := a.(lockimpl.TxLease); ok {
				err = tx.CommitWrite(ctx, key, 99)
				if got := pgValue(t, admin, key); got != 0 {
					t.Errorf("an idle holder's write landed after its session ended: value %d", got)
				}
			} else {
				err = a.Release(ctx)
			}
			if !errors.Is(err, lockimpl.ErrNotHeld) {
				t.Fatalf("idle holder after the timeout: %v, want ErrNotHeld", err)
			}
		})
	}
}

// TestPGDeadSpareIsReplaced: the session a release left spare, ended by
// idle_session_timeout while the pod did nothing, costs the next attempt
// nothing: it starts again on a fresh session.
func TestPGDeadSpareIsReplaced(t *testing.T) {
	const ttl = 100 * time.Millisecond
	spec, _ := lockimpl.Lookup(lockimpl.NamePGAdvisoryTuned)
	n := pgServer(t, spec.ServerArgs(ttl))
	l := pgPods(t, spec.Name, n, ttl, nil)[0]
	first := mustAcquire(t, l, "spare")
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * ttl)
	second := mustAcquire(t, l, "spare")
	if second.Token() == first.Token() {
		t.Fatalf("second lease on the dead spare %s", first.Token())
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPGDefaultsIdleHolderKeeps: with the server's defaults nothing ends
// an idle holder's session: the lock stays held long past the TTL.
func TestPGDefaultsIdleHolderKeeps(t *testing.T) {
	n := pgServer(t, nil)
	ls := pgPods(t, lockimpl.NamePGAdvisory, n, 50*time.Millisecond, noDials(2)...)
	a := mustAcquire(t, ls[0], "keep")
	time.Sleep(300 * time.Millisecond)
	wantNotAcquired(t, ls[1], "keep")
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPGCloseFreesLocks: closing a pod's locker (its crash) drops its
// sessions, and the server frees what they held.
func TestPGCloseFreesLocks(t *testing.T) {
	n := pgServer(t, nil)
	for _, name := range pgLocks {
		t.Run(name, func(t *testing.T) {
			ls := pgPods(t, name, n, testTTL, noDials(2)...)
			mustAcquire(t, ls[0], "crash:"+name)
			_ = ls[0].(interface{ Close() error }).Close()
			b := acquireWithin(t, ls[1], "crash:"+name, 2*time.Second)
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPGCommitAnswerLostIsSettled: a COMMIT that applied but whose answer
// never arrived is settled with pg_xact_status on a fresh session: nil,
// and the write is there.
func TestPGCommitAnswerLostIsSettled(t *testing.T) {
	n := pgServer(t, nil)
	admin := pgAdmin(t, n)
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGAdvisoryXact} {
		t.Run(name, func(t *testing.T) {
			var lose loseCommitAnswer
			ls := pgPods(t, name, n, testTTL, lose.dial)
			key := "lost:" + name
			tx := mustAcquire(t, ls[0], key).(lockimpl.TxLease)
			lose.armed.Store(true)
			if err := tx.CommitWrite(ctx, key, 42); err != nil {
				t.Fatalf("commit whose answer was lost: %v, want nil (settled: committed)", err)
			}
			if lose.lost.Load() != 1 {
				t.Fatalf("%d commit answers lost, want 1: the settling path did not run", lose.lost.Load())
			}
			if got := pgValue(t, admin, key); got != 42 {
				t.Fatalf("value %d, want 42", got)
			}
			if err := tx.Release(ctx); err != nil {
				t.Fatalf("release after a settled commit: %v", err)
			}
		})
	}
}

// TestPGCommitNeverArrivedIsSettled: a COMMIT the client believes sent
// but the server never got, over a socket the server still sees open
// (its session idle in the transaction): settling finds the transaction
// in progress, ends the old session (its pid still running that
// transaction), and answers ErrNotHeld; the write is not there, and the
// lock is free.
func TestPGCommitNeverArrivedIsSettled(t *testing.T) {
	n := pgServer(t, nil)
	admin := pgAdmin(t, n)
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGAdvisoryXact} {
		t.Run(name, func(t *testing.T) {
			lose := &loseCommitAnswer{swallow: true, t: t}
			ls := pgPods(t, name, n, testTTL, lose.dial, nil)
			key := "never:" + name
			tx := mustAcquire(t, ls[0], key).(lockimpl.TxLease)
			lose.armed.Store(true)
			err := tx.CommitWrite(ctx, key, 42)
			if !errors.Is(err, lockimpl.ErrNotHeld) {
				t.Fatalf("commit that never arrived: %v, want ErrNotHeld (settled: aborted)", err)
			}
			if lose.lost.Load() != 1 {
				t.Fatalf("%d commits swallowed, want 1", lose.lost.Load())
			}
			if got := pgValue(t, admin, key); got != 0 {
				t.Fatalf("value %d, want 0", got)
			}
			b := mustAcquire(t, ls[1], key)
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPGSpecs: every PostgreSQL lock is registered as one node of the
// PostgreSQL service with a client of its own; the defaults run on the
// server's defaults, the tuned ones say their settings and give them to
// the server in whole milliseconds (at least 1).
func TestPGSpecs(t *testing.T) {
	for i, name := range append(slices.Clone(pgLocks), pgTunedLocks...) {
		spec, err := lockimpl.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Service != service.Postgres || spec.Nodes != 1 || !spec.BringsClient || spec.Doc == "" {
			t.Errorf("%s: %+v", name, spec)
		}
		tuned := i >= len(pgLocks)
		if !tuned {
			if spec.Settings != "" || spec.ServerArgs != nil || spec.Lease >= 0 {
				t.Errorf("%s runs on the server's defaults, yet says %q", name, spec.Settings)
			}
			continue
		}
		setting := "idle_in_transaction_session_timeout"
		if name == lockimpl.NamePGAdvisoryTuned {
			setting = "idle_session_timeout"
		}
		if !strings.HasPrefix(spec.Settings, setting+" = 1 TTL") {
			t.Errorf("%s: settings %q, want %s first", name, spec.Settings, setting)
		}
		for ttl, want := range map[time.Duration]string{300 * time.Millisecond: "300ms", 500 * time.Microsecond: "1ms"} {
			if args := spec.ServerArgs(ttl); !slices.Contains(args, setting+"="+want) {
				t.Errorf("%s: ServerArgs(%v) = %q, want %s=%s", name, ttl, args, setting, want)
			}
		}
	}
}

// TestPGPausedHolder: a holder whose pod is paused (its connections
// frozen, as a stopped process's) mid-transaction. With the server's
// defaults it keeps the lock for the whole pause and commits after it;
// tuned, the server ends its session after one TTL idle, another pod
// takes the lock, and the holder's commit after the pause is refused.
func TestPGPausedHolder(t *testing.T) {
	const ttl = 150 * time.Millisecond
	for _, name := range []string{lockimpl.NamePGRow, lockimpl.NamePGRowTuned} {
		t.Run(name, func(t *testing.T) {
			spec, _ := lockimpl.Lookup(name)
			var args []string
			if spec.ServerArgs != nil {
				args = spec.ServerArgs(ttl)
			}
			n := pgServer(t, args)
			admin := pgAdmin(t, n)
			ctl := workload.NewControl(2)
			defer ctl.Close()
			ls := pgPods(t, name, n, ttl, ctl.Dial(0), ctl.Dial(1))
			tx := mustAcquire(t, ls[0], "paused").(lockimpl.TxLease)
			if _, err := tx.ReadResource(ctx, "paused"); err != nil {
				t.Fatal(err)
			}
			ctl.Pause(0)
			done := make(chan error, 1)
			go func() { done <- tx.CommitWrite(ctx, "paused", 1) }()
			if spec.ServerArgs == nil {
				time.Sleep(5 * ttl)
				wantNotAcquired(t, ls[1], "paused")
			} else {
				b := acquireWithin(t, ls[1], "paused", 20*ttl)
				defer func() { _ = b.Release(ctx) }()
			}
			ctl.Resume(0)
			err := <-done
			want := int64(1)
			if spec.ServerArgs != nil {
				want = 0
				if !errors.Is(err, lockimpl.ErrNotHeld) {
					t.Fatalf("paused past the timeout: commit %v, want ErrNotHeld", err)
				}
			} else if err != nil {
				t.Fatalf("paused under the defaults: commit %v, want nil", err)
			}
			if got := pgValue(t, admin, "paused"); got != want {
				t.Fatalf("value %d, want %d", got, want)
			}
		})
	}
}
