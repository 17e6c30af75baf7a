package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
)

// WitnessPoll is how often the witness asks the server who holds what: a
// lock held and released within one poll is not seen, and a change is
// reported up to this late (plus the query's own time, ~1 ms here).
const WitnessPoll = 5 * time.Millisecond

// witnessTimeout bounds one poll's query and a (re)connect.
const witnessTimeout = time.Second

// heldSQL lists (lock name, backend pid) for every lock held on a name:
// the two-int advisory locks (AdvisoryClass, id) and the row locks on
// LocksTable's rows (pgrowlocks lists a row's lockers, several for a
// shared lock). A locker with pid 0 has no session here: a standby
// replaying the primary's row lock, whose transaction runs on the
// primary; nobody holds the lock on the standby (and a promotion ends it).
var heldSQL = `SELECT l.name, a.pid FROM pg_locks a JOIN ` + LocksTable + ` l ON a.objid = l.id::oid
WHERE a.locktype = 'advisory' AND a.granted AND a.objsubid = 2 AND a.classid = ` +
	strconv.Itoa(int(AdvisoryClass)) + `::oid
UNION ALL
SELECT l.name, p FROM pgrowlocks('` + LocksTable + `') r JOIN ` + LocksTable + ` l ON l.ctid = r.locked_row, unnest(r.pids) p WHERE p <> 0`

const liveSQL = `SELECT pid FROM pg_stat_activity`

// Holder is the value the witness reports for a lock held by the session
// whose backend pid is pid: "pg-<pid>", which the locks use as their token.
func Holder(pid int32) string { return "pg-" + strconv.Itoa(int(pid)) }

// held is who holds one name: its backend pids, sorted.
type held []int32

// value is the reported holder: "pg-<pid>", or for a shared lock held by
// several sessions their values joined with ",".
func (h held) value() string {
	parts := make([]string, len(h))
	for i, p := range h {
		parts[i] = Holder(p)
	}
	return strings.Join(parts, ",")
}

// ObserveKeys is the server's view of the locks, polled every WitnessPoll
// on an admin connection straight to the server (no proxy, so no network
// fault touches it). Keys are lock names (LocksTable's name). It reports
// KeySet (Value: the holder, see Holder) when a name gets a holder, and
// when it loses it KeyDel if the holder's session still exists (the
// client released it) or KeyExpired if the session is gone (the server
// ended it: a timeout, a dropped connection, pg_terminate_backend, a
// crash). A session released and disconnected within ~2 ms reads as
// KeyExpired; SessionEnds tells from the log how a session ended. Blind
// (with Reason) when the node is killed or paused or the connection fails;
// Watching when it sees again, then KeyPresent for each name held. stop
// ends the polling, closes the connection and returns when both are done.
func (n *Node) ObserveKeys(match func(key string) bool, sink func(backend.KeyChange)) (stop func()) {
	return Watch(n.Name(), n.URL(), n.LogPath(), n.State, match, sink)
}

// Watch is ObserveKeys for any lockchaos server, whoever runs it (a
// process node here, a container in backend/docker): name labels the
// changes, url is the admin connection straight to the server, and state
// says what the node is doing (the witness is Blind unless it runs).
// logPath is the server's log, from which a removal says why the server
// ended the session ("" when the harness cannot read it: the removal then
// says only that the session ended).
func Watch(name, url, logPath string, state func() backend.NodeState, match func(key string) bool,
	sink func(backend.KeyChange)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &witness{name: name, url: url, logPath: logPath, state: state, match: match, sink: sink}
	first := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, first) })
	// The cell's first acquire comes after the first poll (as the Redis
	// witness waits for its subscription), unless the server takes longer
	// than a second to answer.
	select {
	case <-first:
	case <-time.After(time.Second):
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

var _ backend.ObservableNode = (*Node)(nil)

type witnessStatus int

const (
	statusNew witnessStatus = iota
	statusWatching
	statusBlind
)

type witness struct {
	name    string
	url     string
	logPath string
	state   func() backend.NodeState
	match   func(string) bool
	sink    func(backend.KeyChange)
	conn    *pgx.Conn
	status  witnessStatus
	prev    map[string]held
	// lost is what was held when the witness went blind: a name gone
	// when it sees again is reported KeyAbsent (a server killed while a
	// lock was held), as the Redis witness does.
	lost map[string]held
}

func (w *witness) run(ctx context.Context, first chan<- struct{}) {
	defer w.closeConn()
	tick := time.NewTicker(WitnessPoll)
	defer tick.Stop()
	for {
		w.step(ctx)
		if first != nil {
			close(first)
			first = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// step is one poll: reconnect if need be, read who holds what, report
// the differences.
func (w *witness) step(ctx context.Context) {
	if st := w.state(); st != backend.NodeRunning {
		w.blind("the PostgreSQL server is " + st.String())
		return
	}
	if w.conn == nil {
		cfg, err := pgx.ParseConfig(w.url)
		if err != nil {
			w.blind("admin connection: " + err.Error())
			return
		}
		cfg.RuntimeParams["application_name"] = "lockchaos-witness"
		// A tuned lock's timeouts are the server's: the witness's own
		// session must not be the one they end.
		cfg.RuntimeParams["idle_session_timeout"] = "0"
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "0"
		cctx, cancel := context.WithTimeout(ctx, witnessTimeout)
		w.conn, err = pgx.ConnectConfig(cctx, cfg)
		cancel()
		if err != nil {
			w.conn = nil
			w.blind("admin connection: " + err.Error())
			return
		}
	}
	cur, live, err := w.poll(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.blind("admin connection: " + err.Error())
		}
		return
	}
	at := time.Now()
	if w.status != statusWatching {
		w.status = statusWatching
		w.emit(backend.KeyChange{Op: backend.Watching, At: at})
		for _, name := range sortedNames(w.lost) {
			if _, ok := cur[name]; !ok {
				w.emit(backend.KeyChange{Key: name, Op: backend.KeyAbsent, Value: w.lost[name].value(), At: at})
			}
		}
		w.lost = nil
		for _, name := range sortedNames(cur) {
			w.emit(backend.KeyChange{Key: name, Op: backend.KeyPresent, Value: cur[name].value(), At: at})
		}
		w.prev = cur
		return
	}
	w.report(ctx, cur, live, at)
}

// blind reports Blind once per stretch and drops the connection, so that
// seeing again starts from a fresh one.
func (w *witness) blind(reason string) {
	w.closeConn()
	if w.prev != nil {
		w.lost = w.prev
	}
	w.prev = nil
	if w.status == statusBlind {
		return
	}
	w.status = statusBlind
	w.emit(backend.KeyChange{Op: backend.Blind, Reason: reason, At: time.Now()})
}

func (w *witness) closeConn() {
	if w.conn == nil {
		return
	}
	// A paused server reads nothing: do not wait on its goodbye.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_ = w.conn.Close(ctx)
	cancel()
	w.conn = nil
}

func (w *witness) emit(c backend.KeyChange) {
	if c.Key != "" && !w.match(c.Key) {
		return
	}
	c.Node = w.name
	w.sink(c)
}

// poll reads who holds each name and which sessions exist, in one round trip.
func (w *witness) poll(ctx context.Context) (map[string]held, map[int32]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(heldSQL)
	b.Queue(liveSQL)
	res := w.conn.SendBatch(ctx, b)
	defer res.Close()
	cur := map[string]held{}
	rows, err := res.Query()
	if err != nil {
		return nil, nil, err
	}
	var name string
	var pid int32
	_, err = pgx.ForEachRow(rows, []any{&name, &pid}, func() error {
		if !slices.Contains(cur[name], pid) {
			cur[name] = append(cur[name], pid)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, h := range cur {
		slices.Sort(h)
	}
	live, err := readLive(res)
	if err != nil {
		return nil, nil, err
	}
	return cur, live, res.Close()
}

func readLive(res pgx.BatchResults) (map[int32]bool, error) {
	rows, err := res.Query()
	if err != nil {
		return nil, err
	}
	live := map[int32]bool{}
	var pid int32
	_, err = pgx.ForEachRow(rows, []any{&pid}, func() error { live[pid] = true; return nil })
	return live, err
}

func sortedNames(m map[string]held) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
