package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// recheckDelay is how long the witness waits before asking again whether
// a session that lost its lock still exists: a backend the server ends
// releases its locks a moment before it leaves pg_stat_activity, and
// must read as KeyExpired, not KeyDel.
const recheckDelay = 2 * time.Millisecond

// report sends what changed between the last poll and cur: first every
// name that lost its holder (KeyDel or KeyExpired), then every name that
// got one (KeySet), so a lock passed from one session to another reads
// as a release then a take.
func (w *witness) report(ctx context.Context, cur map[string]held, live map[int32]bool, at time.Time) {
	var lost []string
	for _, name := range sortedNames(w.prev) {
		if h, ok := cur[name]; !ok || !slices.Equal(h, w.prev[name]) {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 && w.anyLive(lost, live) {
		live = w.recheck(ctx, live)
	}
	for _, name := range lost {
		op := backend.KeyExpired
		if w.anyLive([]string{name}, live) {
			op = backend.KeyDel
		}
		c := backend.KeyChange{Key: name, Op: op, Value: w.prev[name].value(), At: at}
		if op == backend.KeyExpired {
			c.Reason = w.causeOf(w.prev[name])
		}
		w.emit(c)
	}
	for _, name := range sortedNames(cur) {
		if h, ok := w.prev[name]; !ok || !slices.Equal(h, cur[name]) {
			w.emit(backend.KeyChange{Key: name, Op: backend.KeySet, Value: cur[name].value(), At: at})
		}
	}
	w.prev = cur
}

// anyLive reports whether any former holder of names still has a session.
func (w *witness) anyLive(names []string, live map[int32]bool) bool {
	for _, name := range names {
		for _, pid := range w.prev[name] {
			if live[pid] {
				return true
			}
		}
	}
	return false
}

// recheck reads the sessions again after recheckDelay; on a failure it
// keeps what it had (the removal then reads as KeyDel).
func (w *witness) recheck(ctx context.Context, live map[int32]bool) map[int32]bool {
	select {
	case <-ctx.Done():
		return live
	case <-time.After(recheckDelay):
	}
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	rows, err := w.conn.Query(ctx, liveSQL)
	if err != nil {
		return live
	}
	again := map[int32]bool{}
	var pid int32
	for rows.Next() {
		if rows.Scan(&pid) == nil {
			again[pid] = true
		}
	}
	if rows.Err() != nil {
		return live
	}
	return again
}

// causeOf says why the server ended the sessions of pids, from its log
// ("session ended: idle-in-transaction timeout"), or "session ended" when
// the log does not say yet: the backend logs its end as it exits, so the
// log is read again once after a short wait.
func (w *witness) causeOf(pids held) string {
	for try := range 2 {
		if w.logPath == "" {
			break
		}
		if try > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		ends, err := SessionEnds(w.logPath)
		if err != nil {
			break
		}
		for i := len(ends) - 1; i >= 0; i-- {
			if slices.Contains(pids, ends[i].PID) {
				return "session ended: " + string(ends[i].Cause)
			}
		}
	}
	return "session ended"
}
