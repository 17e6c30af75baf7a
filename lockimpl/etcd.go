package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/lockchaos/lockchaos/service"
)

// The etcd locks' names.
const (
	NameEtcdMutex  = "etcd-mutex"
	NameEtcdFenced = "etcd-fenced"
	NameEtcdLease  = "etcd-lease"
)

// etcdSpecs are the etcd locks, registered after the PostgreSQL ones
// (spec.go). Each connects to the three members through the pod's links
// with a client of its own (go.etcd.io/etcd/client/v3).
var etcdSpecs = []Spec{
	{Name: NameEtcdMutex, Service: service.Etcd, Nodes: 3, BringsClient: true, Renews: true, SignalsLoss: true,
		Doc: "concurrency.Mutex on a session lease of 1 TTL kept alive every TTL/3 (etcd's own lock recipe); " +
			"the pod stops when the session ends",
		New: func(env Env) (Locker, error) { return newEtcdMutex(env, false) }},
	{Name: NameEtcdFenced, Service: service.Etcd, Nodes: 3, BringsClient: true, Renews: true, SignalsLoss: true, Fencing: true,
		Doc: "etcd-mutex, with the revision the lock was taken at as the fencing token the resource checks",
		New: func(env Env) (Locker, error) { return newEtcdMutex(env, true) }},
	{Name: NameEtcdLease, Service: service.Etcd, Nodes: 3, BringsClient: true,
		Doc: "a key put on a fresh lease of 1 TTL if absent (a transaction), no keepalive; released by a " +
			"transaction that deletes it if still ours (the token lock's twin)",
		New: newEtcdLease},
}

// EtcdLeaseSeconds is the lease etcd grants for a TTL: whole seconds,
// rounded up, at least 1 (etcd's leases count seconds, and the leader
// raises one below its minimum, 1.5 election timeouts, to that).
func EtcdLeaseSeconds(ttl time.Duration) int64 {
	return max(1, int64(math.Ceil(ttl.Seconds())))
}

// newEtcdClient is a pod's client: every connection through the pod's
// links (Env.Dial), gRPC keepalives asked for at half a TTL, as a careful
// deployment sets them (grpc-go raises anything under 10 s to 10 s, so a
// silently vanished member is found dead after 10 s at the earliest:
// catalog_etcd.go's etcd-member-cut).
func newEtcdClient(env Env) (*clientv3.Client, error) {
	if len(env.Addrs) == 0 {
		return nil, fmt.Errorf("%w: an etcd lock needs the members' addresses", ErrInvalidConfig)
	}
	dial := env.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	ka := max(env.TTL/2, 100*time.Millisecond)
	return clientv3.New(clientv3.Config{
		Endpoints: env.Addrs, DialTimeout: callTimeout(env), Logger: zap.NewNop(),
		DialKeepAliveTime: ka, DialKeepAliveTimeout: ka,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		})},
	})
}

func callTimeout(env Env) time.Duration {
	if env.CallTimeout > 0 {
		return env.CallTimeout
	}
	return time.Second
}

// etcdMutex is concurrency.Mutex as etcd's documentation uses it: one
// session (a lease kept alive by the client) per pod, a Mutex per
// acquisition, TryLock for one attempt.
type etcdMutex struct {
	env    Env
	cli    *clientv3.Client
	fenced bool

	mu      sync.Mutex
	sess    *concurrency.Session
	paused  bool
	resumed chan struct{} // closed at the end of the current pause
	// dirty are the keys whose last TryLock or Release failed without a
	// definite answer: the session's key may still be there (TryLock's
	// own cleanup or the release's delete did not land), and a TryLock on
	// it would find it, write nothing, and hold under an old revision.
	dirty map[string]bool
	// closed is closed by Close: every lease's watch ends.
	closed    chan struct{}
	closeOnce sync.Once
}

func newEtcdMutex(env Env, fenced bool) (Locker, error) {
	cli, err := newEtcdClient(env)
	if err != nil {
		return nil, err
	}
	l := &etcdMutex{env: env, cli: cli, fenced: fenced, dirty: map[string]bool{}, closed: make(chan struct{})}
	if env.OnPause != nil {
		env.OnPause(l.pause, l.resume)
	}
	return l, nil
}

// A pod pause freezes the pod's connections, not the client's own
// goroutines, whose deadline check would end the session during the
// pause and tell the pod before it writes. In a process that is really
// frozen (a GC pause) that check is frozen too, and after the pause runs
// at its next tick (clientv3 checks keepalive deadlines every 500 ms)
// while the pod goes on at once: pause and resume model that.
func (l *etcdMutex) pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.paused {
		l.paused, l.resumed = true, make(chan struct{})
	}
}

func (l *etcdMutex) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused {
		l.paused = false
		close(l.resumed)
	}
}

// deadlineTick is how often clientv3 checks its keepalives' deadlines.
const deadlineTick = 500 * time.Millisecond

// session is the pod's live session, a new one when the last ended (its
// lease expired or was revoked). The lease is granted here with the
// call's deadline: NewSession's own grant has none.
func (l *etcdMutex) session(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	s := l.sess
	l.mu.Unlock()
	if s != nil {
		select {
		case <-s.Done():
		default:
			return s, nil
		}
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout(l.env))
	defer cancel()
	g, err := l.cli.Grant(cctx, EtcdLeaseSeconds(l.env.TTL))
	if err != nil {
		return nil, err
	}
	s, err = concurrency.NewSession(l.cli, concurrency.WithLease(g.ID))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.sess = s
	l.mu.Unlock()
	return s, nil
}

type etcdMutexLease struct {
	l     *etcdMutex
	key   string
	m     *concurrency.Mutex
	token string
	fence uint64
	lost  chan struct{}
	once  sync.Once
	stop  context.CancelFunc // ends renewals (nil: not recorded)
	// released is closed by the first Release: the lease's watch ends.
	released    chan struct{}
	releaseOnce sync.Once
}

// Acquire implements Locker: one TryLock on key's prefix.
func (l *etcdMutex) Acquire(ctx context.Context, key string) (Lease, error) {
	s, err := l.session(ctx)
	if err != nil {
		return nil, err
	}
	if err := l.clean(ctx, key, s); err != nil {
		return nil, err
	}
	m := concurrency.NewMutex(s, key)
	cctx, cancel := context.WithTimeout(ctx, callTimeout(l.env))
	defer cancel()
	if err := m.TryLock(cctx); err != nil {
		if errors.Is(err, concurrency.ErrLocked) {
			return nil, ErrNotAcquired
		}
		l.setDirty(key, true)
		return nil, err
	}
	// The revision the lock was taken at: the key's create revision (each
	// acquisition puts a fresh key: a release deletes it, and a key left
	// in doubt is deleted first, clean), higher for every later holder,
	// whichever member answered.
	rev := m.Header().Revision
	ls := &etcdMutexLease{l: l, key: key, m: m, lost: make(chan struct{}), released: make(chan struct{}),
		token: etcdMutexToken(m.Key(), rev)}
	if l.fenced {
		ls.fence = uint64(rev)
	}
	go ls.watch(s.Done())
	ls.renewals(key, s.Lease())
	return ls, nil
}

// renewals records the session's keepalives while the lease is held
// (Env.OnRenew): a second listener on the client's one keepalive of the
// lease, which sends nothing of its own.
func (ls *etcdMutexLease) renewals(key string, id clientv3.LeaseID) {
	if ls.l.env.OnRenew == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ls.stop = cancel
	ch, err := ls.l.cli.KeepAlive(ctx, id)
	if err != nil {
		cancel()
		return
	}
	go func() {
		for r := range ch {
			now := time.Now()
			ls.l.env.OnRenew(Renewal{Key: key, Token: ls.token, Start: now, End: now, Renewed: r.TTL > 0})
		}
	}()
}

// sessionKey is the key concurrency.Mutex writes for session s under key.
func sessionKey(key string, s *concurrency.Session) string {
	return fmt.Sprintf("%s/%x", key, s.Lease())
}

func (l *etcdMutex) setDirty(key string, d bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d {
		l.dirty[key] = true
	} else {
		delete(l.dirty, key)
	}
}

// clean deletes the session's key under key before a TryLock when an
// earlier call left it in doubt: a hold the pod never learned of (a
// TryLock whose answer was lost) is given up, and the next TryLock puts a
// fresh key. A failed delete is the attempt's indefinite error.
func (l *etcdMutex) clean(ctx context.Context, key string, s *concurrency.Session) error {
	l.mu.Lock()
	d := l.dirty[key]
	l.mu.Unlock()
	if !d {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout(l.env))
	defer cancel()
	if _, err := l.cli.Delete(cctx, sessionKey(key, s)); err != nil {
		return err
	}
	l.setDirty(key, false)
	return nil
}

// Close stops the session's keepalive without revoking its lease (a
// crashed pod's lease lapses on the server, as a dead process's would)
// and closes the client.
func (l *etcdMutex) Close() error {
	l.mu.Lock()
	if l.sess != nil {
		l.sess.Orphan()
	}
	if l.paused {
		l.paused = false
		close(l.resumed)
	}
	l.mu.Unlock()
	l.closeOnce.Do(func() { close(l.closed) })
	return l.cli.Close()
}

// watch forwards the session's end to Lost, late by a deadline tick when
// it ended while the pod was paused.
// It ends with the lease's release or the lock's close.
func (ls *etcdMutexLease) watch(sessDone <-chan struct{}) {
	select {
	case <-sessDone:
	case <-ls.released:
		return
	case <-ls.l.closed:
		return
	}
	ls.l.mu.Lock()
	paused, resumed := ls.l.paused, ls.l.resumed
	ls.l.mu.Unlock()
	if paused {
		select {
		case <-resumed:
		case <-ls.l.closed:
			return
		}
		t := time.NewTimer(deadlineTick)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ls.l.closed:
			return
		}
	}
	ls.once.Do(func() { close(ls.lost) })
}

func (ls *etcdMutexLease) Token() string         { return ls.token }
func (ls *etcdMutexLease) Fence() uint64         { return ls.fence }
func (ls *etcdMutexLease) Lost() <-chan struct{} { return ls.lost }

// Release deletes the lock's key (Mutex.Unlock: unconditional, by the
// key's own name, which only this session writes). A key already gone
// (the lease expired) is ErrNotHeld.
func (ls *etcdMutexLease) Release(ctx context.Context) error {
	if ls.stop != nil {
		ls.stop()
	}
	ls.releaseOnce.Do(func() { close(ls.released) })
	cctx, cancel := context.WithTimeout(ctx, callTimeout(ls.l.env))
	defer cancel()
	resp, err := ls.l.cli.Delete(cctx, ls.m.Key())
	if err != nil {
		ls.l.setDirty(ls.key, true)
		return err
	}
	if resp.Deleted == 0 {
		return ErrNotHeld
	}
	return nil
}

// etcdMutexToken names one hold of a concurrency.Mutex: its key (the
// session's, the same for every acquisition of a pod) and the revision it
// was created at. service/etcd's witness names it the same way
// (etcd.MutexToken; a test checks they agree).
func etcdMutexToken(key string, rev int64) string { return key + "@" + strconv.FormatInt(rev, 10) }
