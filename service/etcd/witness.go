package etcd

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
)

// ObserveKeys is the member's own record of the lock keys: a watch on
// every key, from the first revision after the member was first seen,
// on a client straight to this member (no proxy, so no fault touches
// it). Each member applies the same log, so the three views agree, each
// at the moment that member applied a change; a member killed or paused
// is Blind until it answers again, and its watch then resumes from the
// next revision it had not reported: nothing committed is missed.
//
// What it reports, per workload key (match):
//
//   - a plain key (etcd-lease): KeySet with its value when put, KeyDel
//     when deleted while its lease lives (a release), KeyExpired when its
//     lease is gone (the leader revoked it at its TTL);
//   - a concurrency.Mutex's keys (workload key + "/" + lease id): a key
//     that won when it was created (no older key under the prefix: the
//     test TryLock makes in the same transaction), reported as KeySet on
//     the workload key with MutexToken as the value (the lock's token),
//     and its removal as KeyDel or KeyExpired. A waiter's key, which
//     TryLock deletes at once, is not reported, even when the owner goes
//     first and the recipe would count the waiter as the owner for that
//     moment: nobody acquires that way with TryLock.
//
// A set's deadline is its lease's granted TTL counted from when the
// witness saw the write: keepalives move a lease's expiry without a
// write, which no watch sees, so for a renewed lease that deadline is the
// lease as written (as the Redis witness's is before a renewal), and its
// end is its removal, which the watch does see. Every change carries its
// revision and lease.
func (n *Node) ObserveKeys(match func(key string) bool, sink func(backend.KeyChange)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{name: n.Name(), addr: n.Addr(), state: n.State, match: match, sink: sink,
		live: map[string]map[string]int64{}, held: map[string]owned{}, plain: map[string]owned{}}
	first := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, first) })
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

type owned struct {
	key    string
	create int64
	lease  int64
}

type watcher struct {
	name  string
	addr  string
	state func() backend.NodeState
	match func(string) bool
	sink  func(backend.KeyChange)

	next  int64                       // the first revision not yet reported (0: from now)
	live  map[string]map[string]int64 // mutex keys per workload key: create revision by name
	held  map[string]owned            // the mutex key that won, per workload key
	plain map[string]owned            // plain keys live
	blind bool
}

// emit reports c as seen when its event arrived (At, when the caller
// set it: a lease's question asked first must not make it late).
func (w *watcher) emit(c backend.KeyChange) {
	c.Node = w.name
	if c.At.IsZero() {
		c.At = time.Now()
	}
	w.sink(c)
}

func (w *watcher) goBlind(why string) {
	if !w.blind {
		w.blind = true
		w.emit(backend.KeyChange{Op: backend.Blind, Reason: why})
	}
}

func (w *watcher) run(ctx context.Context, first chan struct{}) {
	once := sync.OnceFunc(func() { close(first) })
	defer once()
	// A member without a leader ends every watch at once: back off to
	// 100 ms, not a new client every 10 ms on a machine the cell shares.
	pause := 10 * time.Millisecond
	for ctx.Err() == nil {
		if st := w.state(); st != backend.NodeRunning {
			w.goBlind("member " + st.String())
			once()
			wait.Sleep(ctx, 10*time.Millisecond)
			continue
		}
		err := w.watchOnce(ctx, once)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.goBlind(err.Error())
			pause = min(2*pause, 100*time.Millisecond)
		} else {
			pause = 10 * time.Millisecond
		}
		once()
		wait.Sleep(ctx, pause)
	}
}

// watchOnce connects to the member alone, reads where the keys stand
// (on the first connect), and watches until the connection fails.
func (w *watcher) watchOnce(ctx context.Context, ready func()) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{w.addr}, DialTimeout: time.Second,
		DialKeepAliveTime: 300 * time.Millisecond, DialKeepAliveTimeout: 300 * time.Millisecond,
		Logger: nopLogger})
	if err != nil {
		return err
	}
	defer cli.Close()
	if w.next == 0 {
		// Serializable: this member's own answer, even while it has no
		// leader.
		gctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := cli.Get(gctx, "", clientv3.WithFromKey(), clientv3.WithSerializable())
		cancel()
		if err != nil {
			return err
		}
		w.seeAgain()
		// Who won is the oldest key under a prefix: see them in the
		// order they were created.
		kvs := slices.Clone(resp.Kvs)
		slices.SortFunc(kvs, func(a, b *mvccpb.KeyValue) int { return cmp.Compare(a.CreateRevision, b.CreateRevision) })
		for _, kv := range kvs {
			w.found(kv)
		}
		w.next = resp.Header.Revision + 1
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := cli.Watch(wctx, "", clientv3.WithFromKey(), clientv3.WithRev(w.next), clientv3.WithPrevKV(),
		clientv3.WithCreatedNotify())
	seen := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case resp, ok := <-ch:
			if !ok {
				return errWatchEnded
			}
			if err := resp.Err(); err != nil {
				return err
			}
			if !seen {
				seen = true
				w.seeAgain()
				ready()
			}
			for _, ev := range resp.Events {
				w.event(ctx, cli, ev, resp.Header.Revision)
				w.next = ev.Kv.ModRevision + 1
			}
		case <-time.After(200 * time.Millisecond):
			// A member killed or paused under an open watch sends
			// nothing: ask after its state.
			if st := w.state(); st != backend.NodeRunning {
				return errMemberDown(st)
			}
		}
	}
}

type errMemberDown backend.NodeState

func (e errMemberDown) Error() string { return "member " + backend.NodeState(e).String() }

var errWatchEnded = watchError("the watch ended")

type watchError string

func (e watchError) Error() string { return string(e) }

// seeAgain reports Watching after a stretch of Blind (or at first).
func (w *watcher) seeAgain() {
	if w.blind || w.next == 0 {
		w.blind = false
		w.emit(backend.KeyChange{Op: backend.Watching})
	}
}

// workloadKey splits a server key into its workload key and whether it
// is a mutex's (workload key + "/" + lease id in hex).
func (w *watcher) workloadKey(k string) (string, bool, bool) {
	// The mutex's form first: the matcher also takes a workload key
	// with a suffix of the lock's (Redis locks name fence keys so).
	if i := strings.LastIndexByte(k, '/'); i > 0 {
		if _, err := strconv.ParseUint(k[i+1:], 16, 64); err == nil && w.match(k[:i]) {
			return k[:i], true, true
		}
	}
	if w.match(k) {
		return k, false, true
	}
	return "", false, false
}

// found reports a key present when the watcher first connected.
func (w *watcher) found(kv *mvccpb.KeyValue) {
	// Not fresh: put asks the server nothing, so no client is needed.
	w.put(context.Background(), nil, kv, backend.KeyPresent, time.Now(), false)
}

// MutexToken is the token of a concurrency.Mutex hold as the etcd locks
// and the witness both name it: the lock key and the revision it was
// created at, unique per acquisition (a session's key has the same name
// every time).
func MutexToken(key string, createRevision int64) string {
	return key + "@" + strconv.FormatInt(createRevision, 10)
}

// put reports a key written: a plain key at once; a mutex key only if it
// won (no other key under its prefix was older when it was created, as
// concurrency.Mutex's TryLock decides in the same transaction). A
// waiter's key, which TryLock deletes at once, is never reported.
// fresh says the write is the store's latest or nearly (not replayed
// after a stretch blind, nor found on connecting): only then does a
// question to the server now tell about the write.
func (w *watcher) put(ctx context.Context, cli *clientv3.Client, kv *mvccpb.KeyValue, op backend.KeyOp, at time.Time, fresh bool) {
	name := string(kv.Key)
	key, mutex, ok := w.workloadKey(name)
	if !ok {
		return
	}
	o := owned{key: name, create: kv.CreateRevision, lease: kv.Lease}
	if !mutex {
		w.plain[key] = o
		c := backend.KeyChange{Key: key, Op: op, Value: string(kv.Value), Revision: kv.ModRevision, Lease: hexLease(kv.Lease), At: at}
		if fresh {
			c.Deadline = w.deadline(ctx, cli, kv.Lease, at)
		}
		w.emit(c)
		return
	}
	if w.live[key] == nil {
		w.live[key] = map[string]int64{}
	}
	won := true
	for other, rev := range w.live[key] {
		if other != name && rev < kv.CreateRevision {
			won = false
		}
	}
	w.live[key][name] = kv.CreateRevision
	if won && kv.CreateRevision == kv.ModRevision || won && op == backend.KeyPresent {
		w.held[key] = o
		// No deadline: the session's lease is kept alive by keepalives no
		// watch sees; its end is the key's removal, which the watch sees.
		w.emit(backend.KeyChange{Key: key, Op: op, Value: MutexToken(name, kv.CreateRevision), Revision: kv.ModRevision,
			Lease: hexLease(kv.Lease), At: at})
	}
}

func hexLease(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 16)
}

// event reports one put or delete of the store's log.
func (w *watcher) event(ctx context.Context, cli *clientv3.Client, ev *clientv3.Event, head int64) {
	at := time.Now()
	fresh := head-ev.Kv.ModRevision < freshRevisions
	if ev.Type == clientv3.EventTypePut {
		w.put(ctx, cli, ev.Kv, backend.KeySet, at, fresh)
		return
	}
	name := string(ev.Kv.Key)
	key, mutex, ok := w.workloadKey(name)
	if !ok {
		return
	}
	rev := ev.Kv.ModRevision
	var lease int64
	if ev.PrevKv != nil {
		lease = ev.PrevKv.Lease
	}
	if !mutex {
		old := w.plain[key]
		delete(w.plain, key)
		value := ""
		if ev.PrevKv != nil {
			value = string(ev.PrevKv.Value)
		}
		if lease == 0 {
			lease = old.lease
		}
		op, why := w.removal(ctx, cli, lease, fresh)
		w.emit(backend.KeyChange{Key: key, Op: op, Value: value, Revision: rev, Lease: hexLease(lease), At: at, Reason: why})
		return
	}
	delete(w.live[key], name)
	h, held := w.held[key]
	if !held || h.key != name {
		return // a waiter's key, never the owner
	}
	delete(w.held, key)
	if lease == 0 {
		lease = h.lease
	}
	op, why := w.removal(ctx, cli, lease, fresh)
	w.emit(backend.KeyChange{Key: key, Op: op, Value: MutexToken(name, h.create), Revision: rev,
		Lease: hexLease(lease), At: at, Reason: why})
}

// deadline is when a lease granted now would lapse: its granted TTL from
// now (zero: no lease, or its TTL could not be asked).
func (w *watcher) deadline(ctx context.Context, cli *clientv3.Client, lease int64, seen time.Time) time.Time {
	if lease == 0 {
		return time.Time{}
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	r, err := cli.TimeToLive(cctx, clientv3.LeaseID(lease))
	if err != nil || r.GrantedTTL <= 0 {
		return time.Time{}
	}
	return seen.Add(time.Duration(r.GrantedTTL) * time.Second)
}

// removal tells a release from an expiry: a key deleted while its lease
// lives was deleted by a client; one whose lease is gone went with it
// (the leader revokes a lease at its TTL, deleting its keys in the same
// revision). A lease whose state cannot be asked reads as a delete.
func (w *watcher) removal(ctx context.Context, cli *clientv3.Client, lease int64, fresh bool) (backend.KeyOp, string) {
	if lease == 0 {
		return backend.KeyDel, ""
	}
	if !fresh {
		// Replayed after a stretch blind: the lease may have lapsed since
		// a release, and asking now cannot tell.
		return backend.KeyDel, "replayed after the member was out of sight: a release or an expiry, not told apart"
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	r, err := cli.TimeToLive(cctx, clientv3.LeaseID(lease))
	if err == nil && r.TTL == -1 {
		return backend.KeyExpired, ""
	}
	return backend.KeyDel, ""
}

// freshRevisions is how far behind the store's head a watched write may
// be and still count as fresh: a busy cell's watch response carries a
// few writes, a member back from a kill replays hundreds.
const freshRevisions = 16
