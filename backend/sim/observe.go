package sim

import (
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/lockchaos/lockchaos/backend"
)

// A simulated node's witness (backend.ObservableNode).
//
// miniredis has no keyspace notifications, so the node watches itself:
// while someone observes it, its pre-command hook runs every command a
// second time through miniredis's Dispatch (the first pass only marks the
// connection, so the second runs the command, native scripts included)
// and, once the command is done and miniredis's lock released, compares
// the matched string keys (the direct API: Keys, Get, TTL) with what it
// last saw: a new or different value is a set, the same value with
// another deadline an expire (zero: persisted), a key gone before its
// deadline a del, one gone at or past it expired. A command and its
// diff run under the observers' lock, one command at a time, so each
// diff is that command's effect alone (a release's del is never folded
// into the next acquire's set); a blocking command (BLPOP, XREAD BLOCK,
// ...) is let through unwrapped (it could wait under the lock for a
// command the lock holds back) and never writes a string key. A Lua
// script's own redis.call (and a native script's) is nested: it goes
// through the hook inside the script's command and passes untouched.
//
// The diff runs when a command ends, so what changes without a command
// is seen late: miniredis removes a key whose TTL ran out at its next
// database access (any command, any direct call: ClockTTL ticks every
// TTL then), not at its deadline, and nothing runs on an idle node. A key
// found gone (or holding a new value) past its deadline is reported
// expired when it is seen, At then, with the deadline it had: the
// history takes the earlier of the two. A forward clock jump
// (ShiftClock) is diffed at once: a key it expired is expired then, a
// key it shortened gets an expire with its new (earlier) deadline.
//
// With nobody observing, the pre-hook is the native scripts' alone, as
// before: nothing here runs per command.
//
// Deadlines and At are time.Now(): inside the bubble, virtual time, so a
// deadline is exact (the instant of the command plus miniredis's TTL).
// Only database 0 (the one every lock uses) is watched.

var _ backend.ObservableNode = (*Node)(nil)

// ObserveKeys implements backend.ObservableNode. sink is called with the
// node's observers' lock held, in the order the node changed, from the
// goroutine whose command made the change (or the one calling Kill,
// Start or ShiftClock): it must record and return, never call the node
// (a command would wait for the lock it holds) nor stop.
func (n *Node) ObserveKeys(match func(key string) bool, sink func(backend.KeyChange)) (stop func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.obs.add(n.state, match, sink)
}

// observers is a node's witnesses and what they watch.
type observers struct {
	mu     sync.Mutex
	node   string
	list   []*observer
	mr     *miniredis.Miniredis // the instance watched: the node's own, nil while it is down
	native server.Hook          // mr's own pre-hook (native scripts), or nil
	closed bool
	// inner is the connection whose command the hook is running (its
	// second pass through the hook).
	inner atomic.Pointer[server.Peer]
}

// observer is one ObserveKeys: its filter, its sink, and the matched
// string keys as it last saw them.
type observer struct {
	match func(string) bool
	sink  func(backend.KeyChange)
	known map[string]*keyState
	gen   uint64 // diffs so far; a key not seen in the latest one is gone
	gone  []string
}

type keyState struct {
	value    string
	deadline time.Time // zero: no expiry
	gen      uint64
}

// blocking names the commands that may wait inside miniredis (its
// blocking helper): never run under the observers' lock.
var blocking = map[string]bool{"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true,
	"BZPOPMIN": true, "BZPOPMAX": true, "BZMPOP": true, "XREAD": true, "XREADGROUP": true}

// attach watches a fresh instance (the node booted): native is its own
// pre-hook. Observers already there see Watching, then Absent for each
// key they knew (the instance is empty), then whatever it holds.
func (o *observers) attach(name string, mr *miniredis.Miniredis, native server.Hook) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.node, o.mr, o.native = name, mr, native
	o.install()
	if len(o.list) == 0 {
		return
	}
	now := time.Now()
	for _, ob := range o.list {
		o.emit(ob, backend.KeyChange{Op: backend.Watching, At: now})
		for _, k := range slices.Sorted(maps.Keys(ob.known)) {
			s := ob.known[k]
			o.emit(ob, backend.KeyChange{Key: k, Op: backend.KeyAbsent, Value: s.value, Deadline: s.deadline, At: now})
		}
		clear(ob.known)
	}
	o.diffAll(now, backend.KeyPresent, false)
}

// detach stops watching mr (the node was killed): what lapsed on it
// before is reported expired, then every observer goes blind.
func (o *observers) detach(mr *miniredis.Miniredis, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mr != mr || mr == nil {
		return
	}
	if len(o.list) > 0 {
		now := time.Now()
		o.diffAll(now, backend.KeySet, false)
		for _, ob := range o.list {
			o.emit(ob, backend.KeyChange{Op: backend.Blind, At: now, Reason: reason})
		}
	}
	o.mr, o.native = nil, nil
}

// close ends every observer, silently (the node is closed for good).
func (o *observers) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed, o.mr, o.native, o.list = true, nil, nil, nil
}

// shift moves mr's clock forward by d (miniredis's FastForward) and
// reports what that did at once.
func (o *observers) shift(mr *miniredis.Miniredis, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	mr.FastForward(d)
	if o.mr == mr && len(o.list) > 0 {
		o.diffAll(time.Now(), backend.KeySet, true)
	}
}

// add registers an observer on a node in state.
func (o *observers) add(state backend.NodeState, match func(string) bool, sink func(backend.KeyChange)) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	blind := func(reason string) func() {
		sink(backend.KeyChange{Node: o.node, Op: backend.Blind, At: now, Reason: reason})
		return func() {}
	}
	switch {
	case state == backend.NodeClosed || o.closed:
		return blind("node closed")
	case !learnPrivate():
		return blind("the sim cannot watch this miniredis version's keys (its private state is not what backend/sim expects)")
	}
	ob := &observer{match: match, sink: sink, known: map[string]*keyState{}}
	o.list = append(o.list, ob)
	if o.mr == nil {
		o.emit(ob, backend.KeyChange{Op: backend.Blind, At: now, Reason: "node killed"})
	} else {
		if len(o.list) == 1 {
			o.install()
		}
		o.emit(ob, backend.KeyChange{Op: backend.Watching, At: now})
		db := o.mr.DB(0)
		o.diff(ob, db, db.Keys(), now, backend.KeyPresent, false)
	}
	var once sync.Once
	return func() { once.Do(func() { o.remove(ob) }) }
}

func (o *observers) remove(ob *observer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := slices.Index(o.list, ob); i >= 0 {
		o.list = slices.Delete(o.list, i, i+1)
	}
	if len(o.list) == 0 && o.mr != nil {
		o.install()
	}
}

// install sets the watched instance's pre-hook: the native scripts'
// alone when nobody observes, wrapped by the observers' otherwise.
// Called with mu held and mr set.
func (o *observers) install() {
	h := o.native
	if len(o.list) > 0 {
		h = o.hook(o.mr, o.native)
	}
	o.mr.Server().SetPreHook(h)
}

// hook runs each top-level command of mr under the observers' lock and
// diffs after it (see the file's comment).
func (o *observers) hook(mr *miniredis.Miniredis, native server.Hook) server.Hook {
	srv := mr.Server()
	return func(c *server.Peer, cmd string, args ...string) bool {
		if o.inner.Load() == c || blocking[cmd] || nestedPeer(c) {
			return native != nil && native(c, cmd, args...)
		}
		full := make([]string, 1+len(args)) // a queued MULTI command keeps its args
		full[0] = cmd
		copy(full[1:], args)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.inner.Store(c)
		srv.Dispatch(c, full)
		o.inner.Store(nil)
		if o.mr == mr && len(o.list) > 0 {
			o.diffAll(time.Now(), backend.KeySet, false)
		}
		return true
	}
}

// nestedPeer: a connection context of a script's own redis.call (or
// one this code does not know, which is let through the same way).
func nestedPeer(c *server.Peer) bool {
	if c.Ctx == nil {
		return false
	}
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem() != private.ctxType {
		return true
	}
	return v.Elem().FieldByIndex(private.nested).Bool()
}

// diffAll diffs every observer against the watched instance now.
// Called with mu held and mr set.
func (o *observers) diffAll(now time.Time, fresh backend.KeyOp, jumped bool) {
	db := o.mr.DB(0) // ticks miniredis's TTLs: what ran out is gone
	keys := db.Keys()
	for _, ob := range o.list {
		o.diff(ob, db, keys, now, fresh, jumped)
	}
}

// diff reports how ob's matched string keys changed since it last looked:
// fresh is the op of a key it did not know (KeySet, or KeyPresent on
// first sight); jumped says the clock jumped (what is gone expired).
func (o *observers) diff(ob *observer, db *miniredis.RedisDB, keys []string, now time.Time, fresh backend.KeyOp, jumped bool) {
	ob.gen++
	for _, k := range keys {
		if !ob.match(k) {
			continue
		}
		v, err := db.Get(k)
		if err != nil {
			continue // not a string: no lock's key (gone, for a string known before)
		}
		var dl time.Time
		if ttl := db.TTL(k); ttl > 0 {
			dl = now.Add(ttl)
		}
		s := ob.known[k]
		at := func(op backend.KeyOp, v string, dl time.Time) {
			o.emit(ob, backend.KeyChange{Key: k, Op: op, Value: v, Deadline: dl, At: now})
		}
		switch {
		case s == nil:
			s = &keyState{}
			ob.known[k] = s
			at(fresh, v, dl)
		case lapsed(s.deadline, now):
			// The value known ran out unseen (miniredis removed it at
			// its deadline's first access); this one was written since.
			at(backend.KeyExpired, s.value, s.deadline)
			at(backend.KeySet, v, dl)
		case s.value != v:
			at(backend.KeySet, v, dl)
		case !s.deadline.Equal(dl):
			at(backend.KeyExpire, v, dl)
		}
		s.value, s.deadline, s.gen = v, dl, ob.gen
	}
	gone := ob.gone[:0]
	for k, s := range ob.known {
		if s.gen != ob.gen {
			gone = append(gone, k)
		}
	}
	if len(gone) > 1 {
		slices.Sort(gone)
	}
	ob.gone = gone
	for _, k := range gone {
		s := ob.known[k]
		op := backend.KeyDel
		if jumped || lapsed(s.deadline, now) {
			op = backend.KeyExpired
		}
		o.emit(ob, backend.KeyChange{Key: k, Op: op, Value: s.value, Deadline: s.deadline, At: now})
		delete(ob.known, k)
	}
}

// lapsed: a deadline that is set and not after now (miniredis removes a
// key whose TTL is down to zero).
func lapsed(dl, now time.Time) bool { return !dl.IsZero() && !now.Before(dl) }

func (o *observers) emit(ob *observer, c backend.KeyChange) {
	c.Node = o.node
	ob.sink(c)
}
