package scenarios

import (
	"maps"

	"github.com/lockchaos/lockchaos/faults"
)

// The PostgreSQL locks' expectations, decided from what the PostgreSQL 15
// documentation says before any cell ran (issue 36). Two traits decide
// them:
//
//   - where the resource lives: in the lock's own transaction (pg-row,
//     pg-advisory-xact: a write commits only while the session lives, so
//     a holder whose session ended has its write refused) or outside the
//     database (pg-row-outside, pg-advisory: nothing stops a holder that
//     believes on);
//   - what ends a session: with the server's defaults nothing ends a
//     paused, hung or silently cut-off client's session
//     (idle_in_transaction_session_timeout, idle_session_timeout are 0,
//     keepalives the kernel's two hours), so its lock is held until the
//     client goes on, closes or dies: safe, but stuck meanwhile; tuned to
//     the cell's TTL, the server ends an idle holder's session after one
//     TTL and frees its lock, whether or not the holder still works.
//
// A disagreement with a measurement is a finding, not a tuning knob.

// The PostgreSQL lock rows.
const (
	pgRow           = "pg-row"
	pgRowOutside    = "pg-row-outside"
	pgAdvisory      = "pg-advisory"
	pgAdvisoryXact  = "pg-advisory-xact"
	tunedSuffix     = "-tuned"
	pgScenarioLongC = "client-partition-long"
	// pgStandbyPromotion is failover with critical sections long enough
	// to outlast a PostgreSQL promotion (tens of ms, against Redis's few):
	// with failover's 40-120 ms a holder had often released before the
	// promoted standby was read, and the cell was inconclusive.
	pgStandbyPromotion = "standby-promotion"
)

// pgExpect is one scenario's expectations for the four PostgreSQL locks,
// with the server's defaults and tuned: in-transaction locks and outside
// locks, each in both settings.
type pgExpect struct {
	defaults, tunedTx, tunedOutside Expect
	// outsideDefaults, when its Safety is set, differs from defaults for
	// the locks whose resource is outside the database.
	outsideDefaults Expect
}

func why(e Expect, reason string) Expect { e.Why = reason; return e }

// cells maps every PostgreSQL lock to its expectation.
func (x pgExpect) cells() map[string]Expect {
	od := x.defaults
	if x.outsideDefaults.Safety != "" {
		od = x.outsideDefaults
	}
	m := map[string]Expect{
		pgRow + tunedSuffix: x.tunedTx, pgAdvisoryXact + tunedSuffix: x.tunedTx,
		pgRowOutside + tunedSuffix: x.tunedOutside, pgAdvisory + tunedSuffix: x.tunedOutside,
	}
	if x.defaults.Safety != "" {
		m[pgRow], m[pgAdvisoryXact], m[pgRowOutside], m[pgAdvisory] = x.defaults, x.defaults, od, od
	}
	return m
}

// holderStopsWorking is a holder that stops (a pause, a slow section, a
// late reply) while it believes it holds: what tuning changes.
//
// The locks with the server's defaults are left out of these rows: their
// lock has no lease, so nothing can lapse under a paused, slow or cut-off
// holder, and the cell never reaches the row's dangerous moment (the
// witness shows the lock outliving the pause): it could only be
// inconclusive. What the defaults cost (others wait as long as the holder
// is stopped) is what client-partition-long and abandoned-lease measure.
func holderStopsWorking() pgExpect {
	return pgExpect{
		tunedTx: why(andLive(Safe), "the idle timeout ends the session after one TTL and frees the lock; "+
			"the holder's commit is then refused, so the transaction fences its write"),
		tunedOutside: why(andLive(Unsafe), "the idle timeout ends the session after one TTL and frees the lock "+
			"while the holder still works on a resource outside the database: two holders"),
	}
}

// slow-reply is left out for every PostgreSQL lock: an acquire is two
// round trips (BEGIN, or a fresh session's start, then the lock), each
// reply held back 1.5 TTL, so with the defaults nothing can lapse and,
// tuned, the idle timeout mostly ends the session between the two: the
// cells rarely reach the dangerous moment (measured, seed 190791056: 1
// and 2 of 16 and 12 windows for pg-row-tuned and pg-advisory-xact-tuned,
// inconclusive). When an acquire does win late, a lock whose resource is
// outside the database breaks (pg-row-outside-tuned, pg-advisory-tuned:
// two holders in the same run); docs/postgres.md says so.
func postgresExpectations() map[string]pgExpect {
	crash := why(andLive(Safe), "a crashed pod's connections close, the server ends its session and frees "+
		"its lock at once; nobody who crashed touches the resource again")
	return map[string]pgExpect{
		"baseline": {defaults: why(andLive(Safe), "no faults"), tunedTx: why(andLive(Safe), "no faults"),
			tunedOutside: why(andLive(Safe), "no faults")},
		"slow-holder": holderStopsWorking(),
		"gc-pause":    holderStopsWorking(),
		"client-partition": {
			tunedTx: why(andLive(Safe), "the idle timeout frees the lock after one TTL; the cut-off holder's "+
				"commit cannot land"),
			tunedOutside: why(andLive(Unsafe), "the idle timeout frees the lock after one TTL while the cut-off "+
				"holder still works on a resource outside the database"),
		},
		pgScenarioLongC: {
			defaults: why(andStuck(Safe), "with the defaults (keepalives after two hours) the server keeps a "+
				"silently cut-off holder's session for the whole 8 TTL partition: stuck, and safe"),
			tunedTx: why(andLive(Safe), "the idle timeout frees the lock after one TTL; the cut-off holder's "+
				"commit cannot land"),
			tunedOutside: why(andLive(Unsafe), "the idle timeout frees the lock after one TTL while the cut-off "+
				"holder still works on a resource outside the database"),
		},
		pgStandbyPromotion: {
			defaults: why(andLive(Unsafe), "advisory locks are not WAL-logged and row locks are not replicated: "+
				"after a standby is promoted every lock is gone"),
			tunedTx:      why(andLive(Unsafe), "every lock is gone after a promotion, whatever the timeouts"),
			tunedOutside: why(andLive(Unsafe), "every lock is gone after a promotion, whatever the timeouts"),
		},
		"node-restart":         serverRestart("restarts at once"),
		"node-restart-delayed": serverRestart("stays down past the TTL"),
		"pod-crash":            {defaults: crash, tunedTx: crash, tunedOutside: crash},
		"pod-crash-restart":    {defaults: crash, tunedTx: crash, tunedOutside: crash},
		"abandoned-lease": {
			defaults: why(andStuck(Safe), "a hung worker's process keeps its connection open and idle: with the "+
				"defaults nothing ends the session, so its lock is held for as long as the process lives"),
			tunedTx: why(andLive(Safe), "the idle timeout ends the hung holder's session after one TTL"),
			tunedOutside: why(andLive(Safe), "the idle timeout ends the hung holder's session after one TTL; "+
				"a hung holder never touches the resource again"),
		},
	}
}

// serverRestart: the server is killed (every session and lock with it)
// and comes back.
func serverRestart(how string) pgExpect {
	tx := why(andLive(Safe), "the server's kill ends every session: the holder's commit is refused, so the "+
		"transaction fences its write; the server "+how)
	return pgExpect{defaults: tx, tunedTx: tx,
		outsideDefaults: why(Expect{Safety: Either, Liveness: Live}, "the kill frees every lock while a holder "+
			"may still work outside the database; two holders only if another pod acquires after the server "+how+
			" before that holder's work ends"),
		tunedOutside: why(Expect{Safety: Either, Liveness: Live}, "as with the defaults: the kill, not a "+
			"timeout, frees the lock")}
}

// withPostgres adds the PostgreSQL locks' expectations to the catalog's
// scenarios, and the scenarios only PostgreSQL locks run.
func withPostgres(list []Scenario) []Scenario {
	pg := postgresExpectations()
	for i := range list {
		x, ok := pg[list[i].Name]
		if !ok {
			continue
		}
		m := maps.Clone(list[i].Expect)
		if m == nil {
			m = map[string]Expect{}
		}
		maps.Copy(m, x.cells())
		list[i].Expect = m
	}
	return append(list, Scenario{
		Name: pgStandbyPromotion,
		Description: "the primary dies while a lock is held, before its streaming standby replayed the last " +
			"writes; the standby is promoted (PostgreSQL: critical sections of 250-400 ms outlast a promotion)",
		WorkMin: ms(250), WorkMax: ms(400),
		// A TTL well past the work: the tuned in-transaction locks' idle
		// timeout (1 TTL) must not end holders mid-section, or few commits
		// land and the promotion has no committed write to lose (under 2
		// burners per core, sections of 400 ms took over the 300 ms
		// default TTL and 2 of 6 runs of pg-row-tuned missed).
		TTL:    ms(1000),
		Faults: []faults.Spec{{Kind: "failover"}},
		GapMin: ms(100), GapMax: ms(200),
		Expect: pg[pgStandbyPromotion].cells(),
	}, Scenario{
		Name: pgScenarioLongC,
		Description: "a holder is silently cut off from its server for 8 TTL during its critical section " +
			"(PostgreSQL's keepalives take hours to notice)",
		Faults: []faults.Spec{{Kind: "client-partition", Params: faults.ClientPartitionParams{Work: ms(2400)}}},
		GapMin: ms(300), GapMax: ms(500),
		Expect: pg[pgScenarioLongC].cells(),
	})
}
