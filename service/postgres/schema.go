package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// The locks' schema: every node has it once Start returns.
const (
	// LocksTable has one row per lock name: the row a row lock (SELECT
	// ... FOR UPDATE) locks, and the id an advisory lock takes.
	LocksTable = "lockchaos_locks"
	// ResourceTable is the resource the locks guard: key, value.
	ResourceTable = "lockchaos_resource"
	// AdvisoryClass is the first key of the two-int advisory locks the
	// locks take: pg_advisory_lock(AdvisoryClass, lockchaos_locks.id).
	// It keeps them apart from anyone else's advisory locks (pg_locks
	// shows it as classid). 0x4C43 is "LC".
	AdvisoryClass int32 = 0x4C43
)

// SchemaSQL creates the schema, idempotently (every start runs it, here
// and in backend/docker's containers).
const SchemaSQL = `CREATE EXTENSION IF NOT EXISTS pgrowlocks;
` + TablesSQL

// TablesSQL creates the locks' two tables in the first schema of the
// search_path, idempotently (a user's server gets them in a cell's own
// schema: backend/external).
const TablesSQL = `CREATE TABLE IF NOT EXISTS ` + LocksTable + `(name text PRIMARY KEY, id int GENERATED ALWAYS AS IDENTITY UNIQUE);
CREATE TABLE IF NOT EXISTS ` + ResourceTable + `(key text PRIMARY KEY, value bigint NOT NULL DEFAULT 0)`

// waitReady waits until the postmaster says it is ready (its pid file's
// status line, which costs no connection and no log line), then creates
// the schema on one connection.
func (n *Node) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	// A hot standby says "standby" once it takes read-only connections;
	// its schema is the primary's, replicated (and it could not write it).
	standby := n.standby()
	for !n.pidFileSays("ready") && (!standby || !n.pidFileSays("standby")) {
		select {
		case <-exited:
			return errors.New("postgres exited")
		case <-ctx.Done():
			return fmt.Errorf("not ready within %v: %w", n.cfg.StartTimeout, ctx.Err())
		case <-time.After(startPoll):
		}
	}
	if standby {
		return nil
	}
	conn, err := pgx.Connect(ctx, n.URL())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, SchemaSQL); err != nil {
		return fmt.Errorf("create the schema: %w", err)
	}
	return nil
}

// pidFile reads postmaster.pid's lines (nil if there is none).
func (n *Node) pidFile() []string {
	b, err := os.ReadFile(filepath.Join(n.dataDir(), "postmaster.pid"))
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\n")
}

// pidFileSays reports whether postmaster.pid's status (its 8th line) is status.
func (n *Node) pidFileSays(status string) bool {
	lines := n.pidFile()
	return len(lines) > 7 && strings.TrimSpace(lines[7]) == status
}

// clearStale removes what a killed postmaster leaves: its System V shared
// memory segment (named in postmaster.pid's 7th line; without this each
// kill would leak one until reboot) and postmaster.pid itself (whose pid
// may belong to another process by the next start, which would then
// refuse to run). The whole group is dead, so nothing is attached.
func (n *Node) clearStale() {
	lines := n.pidFile()
	if len(lines) > 6 {
		if f := strings.Fields(lines[6]); len(f) == 2 {
			if id, err := strconv.Atoi(f[1]); err == nil {
				const ipcRMID = 0
				_, _, _ = syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), ipcRMID, 0)
			}
		}
	}
	_ = os.Remove(filepath.Join(n.dataDir(), "postmaster.pid"))
}

// errNotRedis is what the Redis-only methods return.
func (n *Node) errNotRedis(what string) error {
	return fmt.Errorf("postgres node %s: %s: a PostgreSQL server does not answer Redis commands: %w",
		n.cfg.Name, what, backend.ErrUnsupported)
}

// Do is a Redis command: unsupported.
func (n *Node) Do(context.Context, ...any) (any, error) { return nil, n.errNotRedis("Do") }

var _ backend.RedisNode = (*Node)(nil)
