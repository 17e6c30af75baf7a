package lockimpl_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// The PostgreSQL locks with the server's defaults, and tuned.
var (
	pgLocks      = []string{lockimpl.NamePGRow, lockimpl.NamePGRowOutside, lockimpl.NamePGAdvisory, lockimpl.NamePGAdvisoryXact}
	pgTunedLocks = []string{lockimpl.NamePGRowTuned, lockimpl.NamePGRowOutsideTuned, lockimpl.NamePGAdvisoryTuned,
		lockimpl.NamePGAdvisoryXactTuned}
)

// pgServer starts a PostgreSQL node with extra server settings, closed
// with the test.
func pgServer(t testing.TB, args []string) *postgres.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := postgres.Start(ctx, backend.NodeConfig{Name: "pg", Service: service.Postgres, ExtraArgs: args})
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// pgAdmin is a connection to n that no lock's fault touches.
func pgAdmin(t testing.TB, n *postgres.Node) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), n.URL())
	if err != nil {
		t.Fatalf("admin connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// pgPods builds one Locker of the named lock per dialer (nil: a plain
// net.Dialer), each closed with the test.
func pgPods(t testing.TB, name string, n *postgres.Node, ttl time.Duration, dials ...func(context.Context, string, string) (net.Conn, error)) []lockimpl.Locker {
	t.Helper()
	spec, err := lockimpl.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]lockimpl.Locker, len(dials))
	for i, dial := range dials {
		l, err := spec.Build(lockimpl.Env{Pod: i, Addrs: []string{n.Addr()}, Dial: dial, TTL: ttl, CallTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.(interface{ Close() error }).Close() })
		out[i] = l
	}
	return out
}

// pgPID is the backend pid behind a lease's token ("pg-<pid>").
func pgPID(t testing.TB, lease lockimpl.Lease) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(lease.Token(), "pg-"))
	if err != nil || !strings.HasPrefix(lease.Token(), "pg-") {
		t.Fatalf("token %q is not pg-<pid>", lease.Token())
	}
	return pid
}

// pgValue reads the resource's counter for key through the admin session.
func pgValue(t testing.TB, admin *pgx.Conn, key string) int64 {
	t.Helper()
	var v int64
	err := admin.QueryRow(context.Background(), "SELECT value FROM "+postgres.ResourceTable+" WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return v
}

// acquireWithin retries until l acquires key or the time is up.
func acquireWithin(t testing.TB, l lockimpl.Locker, key string, d time.Duration) lockimpl.Lease {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		lease, err := l.Acquire(ctx, key)
		if err == nil {
			return lease
		}
		if time.Now().After(deadline) {
			t.Fatalf("acquire %s: still %v after %v", key, err, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loseCommitAnswer is a dialer whose connections, once armed, send a
// COMMIT, read the server's answer and then fail the read: the commit
// happened, its answer was lost on the way back.
type loseCommitAnswer struct {
	armed atomic.Bool
	lost  atomic.Int64 // answers dropped
	// swallow: the COMMIT never leaves, yet the client believes it was
	// sent, and the socket stays open (the server's session lives on,
	// idle in its transaction, as behind a cut network) until the test ends.
	swallow bool
	t       testing.TB
}

func (d *loseCommitAnswer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ac := &answerLosingConn{Conn: c, d: d}
	if d.swallow {
		d.t.Cleanup(func() { _ = c.Close() })
	}
	return ac, nil
}

type answerLosingConn struct {
	net.Conn
	d      *loseCommitAnswer
	commit bool
	cut    bool // swallowing: nothing more reaches the server
}

var errAnswerLost = errors.New("test: the commit's answer was lost")

func (c *answerLosingConn) Write(b []byte) (int, error) {
	if c.cut {
		return len(b), nil // pgx's goodbye (Terminate) is lost too
	}
	if c.d.armed.Load() && bytes.Contains(b, []byte("COMMIT")) {
		c.commit = true
		if c.d.swallow {
			c.cut = true
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

// Close leaves a swallowing connection's socket open: the server must
// not see the client go.
func (c *answerLosingConn) Close() error {
	if c.d.swallow {
		return nil
	}
	return c.Conn.Close()
}

func (c *answerLosingConn) Read(b []byte) (int, error) {
	if c.commit && c.d.swallow {
		c.commit = false
		c.d.lost.Add(1)
		return 0, errAnswerLost
	}
	n, err := c.Conn.Read(b)
	if c.commit && err == nil {
		// The server answered (so the commit is done); the client never
		// hears it.
		_ = c.Conn.Close()
		c.commit = false
		c.d.lost.Add(1)
		return 0, errAnswerLost
	}
	return n, err
}

// noDials is n pods' dialers, each the default (a plain TCP dial).
func noDials(n int) []func(context.Context, string, string) (net.Conn, error) {
	return make([]func(context.Context, string, string) (net.Conn, error), n)
}
