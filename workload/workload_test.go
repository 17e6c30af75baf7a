package workload_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

func TestResourceFencing(t *testing.T) {
	off := workload.NewResource(workload.FenceOff)
	if err := off.Write("k", 1, 9); err != nil {
		t.Fatal(err)
	}
	if err := off.Write("k", 2, 1); err != nil {
		t.Fatalf("fencing off must accept any fence: %v", err)
	}

	// Write-only fencing: the stale holder's write lands first and is
	// accepted, the newer holder's write follows: both wrote 1.
	w := workload.NewResource(workload.FenceWrites)
	a, _ := w.Read("k", 1)
	b, _ := w.Read("k", 2)
	if err := w.Write("k", a+1, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Write("k", b+1, 2); err != nil {
		t.Fatal(err)
	}
	if w.Value("k") != 1 {
		t.Fatalf("value %d", w.Value("k"))
	}
	if err := w.Write("k", 5, 1); !errors.Is(err, workload.ErrStaleFence) {
		t.Fatalf("write with fence 1 after 2: %v, want ErrStaleFence", err)
	}

	// Reads and writes fenced: the newer holder's read raises the bar, so
	// the stale holder's write is refused and no increment is lost.
	rw := workload.NewResource(workload.FenceReadsAndWrites)
	a, _ = rw.Read("k", 1)
	b, _ = rw.Read("k", 2)
	if err := rw.Write("k", a+1, 1); !errors.Is(err, workload.ErrStaleFence) {
		t.Fatalf("stale write accepted: %v", err)
	}
	if err := rw.Write("k", b+1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Read("k", 1); !errors.Is(err, workload.ErrStaleFence) {
		t.Fatalf("stale read accepted: %v", err)
	}
	if err := workload.FenceMode("sometimes").Validate(); err == nil || !strings.Contains(err.Error(), "reads-and-writes") {
		t.Fatalf("unknown mode error does not list valid ones: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []workload.Config{
		{Clients: -1}, {Keys: []string{""}}, {Duration: -time.Second},
		{Work: workload.Dist{Min: 5 * time.Millisecond, Max: time.Millisecond}}, {Fencing: "maybe"},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, workload.ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
}

// redisFactory builds one Locker per client over the client's own proxies.
func redisFactory(t *testing.T, c *deployment.Deployment, name string, ttl time.Duration) workload.Factory {
	return func(i int) (lockimpl.Locker, error) {
		var nodes []redis.UniversalClient
		for _, addr := range c.ClientAddrs(i) {
			rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{Dialer: c.Dialer()}) // nil: a real network
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { _ = rdb.Close() })
			nodes = append(nodes, rdb)
		}
		spec, err := lockimpl.Lookup(name)
		if err != nil {
			return nil, err
		}
		return spec.Build(lockimpl.Env{Pod: i, Clients: nodes, Addrs: c.ClientAddrs(i), TTL: ttl})
	}
}

func runAndCheck(t *testing.T, lock string, cfg workload.Config) (*checker.Report, *history.History, *workload.Resource) {
	t.Helper()
	c := backendtest.Cluster(t, deployment.Config{Clients: cfg.Clients})
	path := filepath.Join(t.TempDir(), "history.jsonl")
	spec, err := lockimpl.Lookup(lock)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := history.NewRecorder(path, history.Header{Scenario: "baseline", Lock: lock, Clients: cfg.Clients, Fencing: string(cfg.Fencing), InProcess: spec.Nodes == 0})
	if err != nil {
		t.Fatal(err)
	}
	res, err := workload.Run(context.Background(), cfg, redisFactory(t, c, lock, time.Second), rec, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := history.LoadFile(path)
	if err != nil {
		t.Fatalf("the recorded file must load: %v", err)
	}
	if len(disk.Events) != len(mem.Events) {
		t.Fatalf("file has %d events, memory %d", len(disk.Events), len(mem.Events))
	}
	return checker.Check(context.Background(), disk, checker.Options{}), disk, res
}

func TestTokenLockWithoutFaultsPasses(t *testing.T) {
	rep, h, res := runAndCheck(t, lockimpl.NameToken, workload.Config{Clients: 8, Duration: 2 * time.Second})
	if rep.Verdict != checker.Pass {
		t.Fatalf("verdict %s: %+v", rep.Verdict, rep.Results)
	}
	s := rep.Stats
	t.Logf("token x 8 clients x 2s: %d cycles (%.0f/s), %d refused, acquire p50 %v p99 %v, %d events",
		s.Cycles, s.CyclesPerSecond, s.AcquireRefused, time.Duration(s.AcquireP50), time.Duration(s.AcquireP99), len(h.Events))
	// Work is 2-10ms per critical section, so one key serialises at most
	// ~170 cycles/s; a healthy run gets most of that.
	if s.CyclesPerSecond < 60 {
		t.Fatalf("only %.0f cycles/s", s.CyclesPerSecond)
	}
	if got := res.Value("order:1"); got != int64(s.Writes) {
		t.Fatalf("counter %d after %d accepted writes", got, s.Writes)
	}
	// Without faults an attempt only times out (250ms) on a badly
	// overloaded machine; allow a trace of that, not more.
	if attempts := s.AcquireOK + s.AcquireRefused + s.AcquireIndefinite; s.AcquireIndefinite*100 > attempts {
		t.Fatalf("%d of %d acquires indefinite without any fault", s.AcquireIndefinite, attempts)
	}
}

// TestMutexPerPodFails shows why sync.Mutex is not enough: each pod's
// mutex excludes only its own goroutines, so eight pods overlap freely.
func TestMutexPerPodFails(t *testing.T) {
	rep, _, _ := runAndCheck(t, lockimpl.NameMutex, workload.Config{Clients: 8, Duration: time.Second})
	if rep.Verdict != checker.Fail {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	me, res := rep.Result(checker.MutualExclusion), rep.Result(checker.ResourceLinearizable)
	if me.Status != checker.Fail || res.Status != checker.Fail || res.ViolationCount == 0 {
		t.Fatalf("mutual-exclusion %s, resource %s (%d)", me.Status, res.Status, res.ViolationCount)
	}
	if !strings.Contains(res.Violations[0].Summary, "one increment lost") {
		t.Fatalf("first violation: %s", res.Violations[0].Summary)
	}
	t.Logf("mutex x 8: %d overlaps, %d lost increments; first: %s", me.ViolationCount, res.ViolationCount, res.Violations[0].Summary)
}

// losingLock is a per-test Locker whose leases say they are lost after a
// while: the workload must record the signal and skip the write.
type losingLock struct {
	mu    sync.Mutex
	after time.Duration
}

type losingLease struct {
	mu   *sync.Mutex
	lost chan struct{}
	once sync.Once
}

func (l *losingLock) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	if !l.mu.TryLock() {
		return nil, lockimpl.ErrNotAcquired
	}
	ls := &losingLease{mu: &l.mu, lost: make(chan struct{})}
	time.AfterFunc(l.after, func() { close(ls.lost) })
	return ls, nil
}

func (*losingLease) Token() string           { return "" }
func (*losingLease) Fence() uint64           { return 0 }
func (l *losingLease) Lost() <-chan struct{} { return l.lost }
func (l *losingLease) Release(context.Context) error {
	l.once.Do(l.mu.Unlock)
	return nil
}

func TestLostLeaseStopsTheWork(t *testing.T) {
	rec, _ := history.NewRecorder("", history.Header{Lock: "losing"})
	shared := &losingLock{after: 5 * time.Millisecond}
	var slow atomic.Int64
	cfg := workload.Config{Clients: 2, Duration: 300 * time.Millisecond, Work: workload.Dist{Min: time.Millisecond, Max: time.Millisecond}}
	hooks := workload.Hooks{Hold: func(client int, key string, d time.Duration) time.Duration {
		if slow.Add(1)%2 == 0 {
			return 50 * time.Millisecond // past the lease: the lock says so
		}
		return d
	}}
	_, err := workload.Run(context.Background(), cfg, func(int) (lockimpl.Locker, error) { return shared, nil }, rec, hooks)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := rec.Close()
	rep := checker.Check(context.Background(), h, checker.Options{})
	if rep.Stats.LostSignals == 0 {
		t.Fatal("no lost-lease signal recorded")
	}
	if rep.Verdict != checker.Pass {
		t.Fatalf("a lock that tells its holder is safe here, verdict %s: %+v", rep.Verdict, rep.Results)
	}
	if rep.Stats.Writes == 0 || rep.Stats.Writes >= rep.Stats.AcquireOK {
		t.Fatalf("writes %d, acquires %d: the lost leases should have skipped their writes", rep.Stats.Writes, rep.Stats.AcquireOK)
	}
}

func TestFactoryErrorStopsBeforeTraffic(t *testing.T) {
	rec, _ := history.NewRecorder("", history.Header{})
	_, err := workload.Run(context.Background(), workload.Config{Clients: 3}, func(i int) (lockimpl.Locker, error) {
		if i == 2 {
			return nil, errors.New("no redis for you")
		}
		return lockimpl.NewMutex(lockimpl.MutexConfig{}), nil
	}, rec, workload.Hooks{})
	if err == nil || !strings.Contains(err.Error(), "client 2") {
		t.Fatalf("err = %v", err)
	}
	if h, _ := rec.Close(); len(h.Events) != 0 {
		t.Fatalf("%d events recorded before the factory failed", len(h.Events))
	}
}
