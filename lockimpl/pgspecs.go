package lockimpl

import (
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/service"
)

// The PostgreSQL locks' names: each kind with the server's defaults, and
// tuned (timeouts that free a stuck holder's lock after one TTL).
const (
	NamePGRow                = "pg-row"
	NamePGRowTuned           = "pg-row-tuned"
	NamePGRowOutside         = "pg-row-outside"
	NamePGRowOutsideTuned    = "pg-row-outside-tuned"
	NamePGAdvisory           = "pg-advisory"
	NamePGAdvisoryTuned      = "pg-advisory-tuned"
	NamePGAdvisoryXact       = "pg-advisory-xact"
	NamePGAdvisoryXactTuned  = "pg-advisory-xact-tuned"
	pgDefaultsDoc            = "server defaults: nothing frees a stuck holder's lock but its connection closing"
	pgTunedTxDoc             = "idle_in_transaction_session_timeout = 1 TTL ends the session of a holder idle that long"
	pgTunedSessionDoc        = "idle_session_timeout = 1 TTL ends the session of a holder idle that long"
	pgKeepaliveSettings      = "tcp_keepalives_idle = 1 s, tcp_keepalives_interval = 1 s, tcp_keepalives_count = 2"
	pgTunedTxSettings        = "idle_in_transaction_session_timeout = 1 TTL, " + pgKeepaliveSettings
	pgTunedSessionSettings   = "idle_session_timeout = 1 TTL, " + pgKeepaliveSettings
	pgFencedByTransaction    = " (its commit is refused: the write is fenced)"
	pgUnfencedOutsideTheLock = " (even one still working: nothing fences the resource outside)"
)

// pgTunedArgs is the tuned locks' server command line for a TTL: the
// idle timeout (in ms, at least 1) that ends a holder's session, and
// keepalives at their minimum (seconds) so a peer that vanished from the
// network is noticed in about 3 s rather than hours. The idle timeout
// frees the lock of a holder that is paused or slow just as surely as of
// one that is gone: for a resource outside the database that is unsafe.
func pgTunedArgs(setting string) func(time.Duration) []string {
	return func(ttl time.Duration) []string {
		return []string{
			"-c", fmt.Sprintf("%s=%dms", setting, max(1, ttl.Milliseconds())),
			"-c", "tcp_keepalives_idle=1",
			"-c", "tcp_keepalives_interval=1",
			"-c", "tcp_keepalives_count=2",
		}
	}
}

// pgSpec is a PostgreSQL lock's Spec, defaults or tuned.
func pgSpec(name string, kind PGKind, doc string, tuned bool) Spec {
	s := Spec{
		Name:          name,
		Doc:           doc,
		Service:       service.Postgres,
		Nodes:         1,
		BringsClient:  true,
		InTransaction: kind == PGRow || kind == PGAdvisoryXact,
		Lease:         -1, // server defaults: held until the session ends
		New:           func(env Env) (Locker, error) { return NewPGLock(kind, env) },
	}
	if tuned {
		s.Lease = 0 // one TTL idle, then the server ends the session
		setting, words := "idle_in_transaction_session_timeout", pgTunedTxSettings
		if kind == PGAdvisory {
			// A session lock's holder is idle outside any transaction.
			setting, words = "idle_session_timeout", pgTunedSessionSettings
		}
		s.ServerArgs, s.Settings = pgTunedArgs(setting), words
		// The same settings on every session too: they hold on a server
		// the harness did not start (--postgres-url), and mean the same
		// where it did.
		s.New = func(env Env) (Locker, error) {
			env.Postgres = env.Postgres.withSession(sessionSettings(pgTunedArgs(setting)(env.TTL)))
			return NewPGLock(kind, env)
		}
	}
	return s
}

// pgSpecs are the PostgreSQL locks, registered after the Redis ones
// (spec.go).
var pgSpecs = []Spec{
	pgSpec(NamePGRow, PGRow, "SELECT ... FOR UPDATE NOWAIT on the key's row, the resource's write in the same transaction; "+
		pgDefaultsDoc, false),
	pgSpec(NamePGRowTuned, PGRow, "pg-row, tuned: "+pgTunedTxDoc+pgFencedByTransaction, true),
	pgSpec(NamePGRowOutside, PGRowOutside, "SELECT ... FOR UPDATE NOWAIT held by an open transaction, the resource outside "+
		"the database; "+pgDefaultsDoc, false),
	pgSpec(NamePGRowOutsideTuned, PGRowOutside, "pg-row-outside, tuned: "+pgTunedTxDoc+pgUnfencedOutsideTheLock, true),
	pgSpec(NamePGAdvisory, PGAdvisory, "session advisory lock (pg_try_advisory_lock, pg_advisory_unlock), the resource "+
		"outside the database; "+pgDefaultsDoc, false),
	pgSpec(NamePGAdvisoryTuned, PGAdvisory, "pg-advisory, tuned: "+pgTunedSessionDoc+pgUnfencedOutsideTheLock, true),
	pgSpec(NamePGAdvisoryXact, PGAdvisoryXact, "transaction advisory lock (pg_try_advisory_xact_lock), the resource's "+
		"write in the same transaction; "+pgDefaultsDoc, false),
	pgSpec(NamePGAdvisoryXactTuned, PGAdvisoryXact, "pg-advisory-xact, tuned: "+pgTunedTxDoc+pgFencedByTransaction, true),
}
