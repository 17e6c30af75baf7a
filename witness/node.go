package witness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
)

// wantFlags are the notification classes the witness needs: keyspace
// channels (K), generic commands (g: del, expire, persist, rename),
// string commands ($: set), expiries (x) and evictions (e).
const wantFlags = "Kg$xe"

// errCannotWatch is a node that will never be watched (notifications
// refused): the watcher reports it once and stops.
var errCannotWatch = errors.New("witness: cannot watch")

// nodeWatch is one node's watcher. What it knows of the node's keys
// outlives a connection, so a node back from a restart is checked for
// the leases it held.
type nodeWatch struct {
	node  backend.RedisNode
	cfg   Config
	match Matcher
	// live is each lease key's last value on the node, by the server's
	// name; counters are keys written by INCR and the like (a fence
	// counter), which are no lease and are not reported.
	live      map[string]string
	deadlines map[string]time.Time
	counters  map[string]bool
	blind     bool // Blind was reported and Watching not since
	// ready closes when the first connection is watching or has failed.
	ready     chan struct{}
	readyOnce sync.Once
	// restore is the notification setting the node had before the
	// witness changed it (nil: unchanged), put back when it stops: on
	// someone else's Redis the witness leaves the server as it found it.
	restore *string
}

func (w *nodeWatch) emit(c backend.KeyChange) {
	c.Node = w.node.Name()
	key := ""
	if c.Key != "" {
		key, _ = w.match.Match(c.Key)
	}
	w.cfg.Sink(key, c)
}

func (w *nodeWatch) isReady() { w.readyOnce.Do(func() { close(w.ready) }) }

func (w *nodeWatch) lost(why string) {
	defer w.isReady()
	if !w.blind {
		w.blind = true
		w.emit(backend.KeyChange{Op: backend.Blind, At: time.Now(), Reason: why})
	}
}

// run watches the node until ctx ends, dialing it again whenever the
// connection drops (a killed or restarted node).
func (w *nodeWatch) run(ctx context.Context) {
	defer w.putBack()
	for ctx.Err() == nil {
		err := w.session(ctx)
		if ctx.Err() != nil {
			return
		}
		w.lost(reason(err))
		if errors.Is(err, errCannotWatch) {
			return
		}
		wait.Sleep(ctx, w.cfg.Retry)
	}
}

func reason(err error) string {
	if err == nil {
		return "connection closed"
	}
	return strings.TrimPrefix(err.Error(), "witness: ")
}

// session is one connection's life: set up, watch, return when it drops.
func (w *nodeWatch) session(ctx context.Context) error {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", w.node.Addr())
	if err != nil {
		return fmt.Errorf("witness: node %s unreachable: %w", w.node.Name(), err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	s := &session{w: w, conn: conn, r: bufio.NewReaderSize(conn, 16<<10), last: map[string]*pending{}}
	if err := s.setup(); err != nil {
		return err
	}
	w.blind = false
	w.emit(backend.KeyChange{Op: backend.Watching, At: time.Now()})
	s.snapshot()
	w.isReady()
	return s.loop()
}

// session is one connection: what was asked and not yet answered.
type session struct {
	w    *nodeWatch
	conn net.Conn
	r    *bufio.Reader
	out  []byte
	// queue holds changes in the server's order; one waiting for its read
	// holds back the ones after it.
	queue []*pending
	last  map[string]*pending // the change each key's last notification made
	// asking: a Redis Cluster node, where each read follows ASKING.
	asking bool
}

// pending is a change, with the read that completes it if it needs one.
type pending struct {
	c       backend.KeyChange
	read    bool  // waits for GET+PTTL
	replies int   // replies still due: GET, PTTL (each after ASKING's on a cluster node)
	got     frame // the GET's reply, until the PTTL's comes
	sent    time.Time
	stale   bool // the value changed again before the read ran
	dedupe  bool // an expire: drop it if it changed nothing
	// ownExpiry: a set whose command's own expire notification came
	// (SET PX), read together.
	ownExpiry bool
}

// call sends one command and reads its reply (during setup, before any
// notification can arrive).
func (s *session) call(args ...string) (frame, error) {
	if _, err := s.conn.Write(appendCommand(nil, args...)); err != nil {
		return frame{}, err
	}
	_ = s.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = s.conn.SetReadDeadline(time.Time{}) }()
	for {
		f, err := readFrame(s.r)
		if err != nil || !f.push {
			return f, err
		}
	}
}

// setup speaks RESP3, turns on the notifications the witness needs (on
// top of any the server already sends) and subscribes to the cell's
// namespace.
func (s *session) setup() error {
	name := s.w.node.Name()
	if f, err := s.call("HELLO", "3"); err != nil {
		return err
	} else if f.err != "" {
		return fmt.Errorf("%w %s: it does not speak RESP3 (%s)", errCannotWatch, name, f.err)
	}
	_, _ = s.call("CLIENT", "SETNAME", "lockchaos-witness")
	// A cluster node answers a read of a key in a slot it is importing
	// with MOVED, unless the read follows ASKING: the key a slot
	// migration just restored there would go unseen.
	// A cluster replica answers every read with MOVED unless the
	// connection is READONLY (harmless on a primary).
	if f, err := s.call("CLUSTER", "MYID"); err == nil && f.err == "" {
		s.asking = true
		_, _ = s.call("READONLY")
	}
	have := ""
	if f, err := s.call("CONFIG", "GET", "notify-keyspace-events"); err == nil && f.err == "" && len(f.items) == 2 {
		have = f.items[1].str
	}
	if !covers(have, wantFlags) {
		if s.w.restore == nil {
			s.w.restore = &have
		}
		f, err := s.call("CONFIG", "SET", "notify-keyspace-events", union(have, wantFlags))
		if err != nil {
			return err
		}
		if f.err != "" {
			return fmt.Errorf("%w %s: keyspace notifications are %q and CONFIG SET was refused (%s); "+
				"enable them with notify-keyspace-events %s to have leases observed", errCannotWatch, name, have, f.err, wantFlags)
		}
	}
	pattern := "__keyspace@0__:" + globEscape(s.w.cfg.Prefix) + "*"
	if _, err := s.conn.Write(appendCommand(nil, "PSUBSCRIBE", pattern)); err != nil {
		return err
	}
	// Its confirmation is a push; nothing else can come before it.
	_ = s.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = s.conn.SetReadDeadline(time.Time{}) }()
	f, err := readFrame(s.r)
	if err != nil {
		return err
	}
	if f.err != "" || len(f.items) == 0 || f.items[0].str != "psubscribe" {
		return fmt.Errorf("%w %s: PSUBSCRIBE %s answered %+v", errCannotWatch, name, pattern, f)
	}
	return nil
}

// covers reports whether the flags have sends every class in want ("A"
// is every class but K, E, m, n and t).
func covers(have, want string) bool {
	for _, c := range want {
		if !strings.ContainsRune(have, c) && (!strings.ContainsRune(have, 'A') || !strings.ContainsRune("g$lshzxetd", c)) {
			return false
		}
	}
	return true
}

// union adds want's classes to have's.
func union(have, want string) string {
	for _, c := range want {
		if !strings.ContainsRune(have, c) {
			have += string(c)
		}
	}
	return have
}

// snapshot reads, on (re)connecting, every key the witness knew live on
// the node and each workload key by its own name: what a restarted node
// kept and lost, what was there before the witness came.
func (s *session) snapshot() {
	keys := map[string]bool{}
	for k := range s.w.live {
		keys[k] = true
	}
	for _, k := range s.w.cfg.Keys {
		if !s.w.counters[k] {
			keys[k] = true
		}
	}
	for k := range keys {
		s.ask(&pending{c: backend.KeyChange{Key: k, Op: backend.KeyPresent, At: time.Now()}, read: true})
	}
	_ = s.flushOut()
}

// putBack restores the node's notification setting, best effort: a node
// killed at the cell's end has none to restore.
func (w *nodeWatch) putBack() {
	if w.restore == nil {
		return
	}
	conn, err := net.DialTimeout("tcp", w.node.Addr(), time.Second)
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	s := &session{w: w, conn: conn, r: bufio.NewReader(conn)}
	_, _ = s.call("CONFIG", "SET", "notify-keyspace-events", *w.restore)
}
