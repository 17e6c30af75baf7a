package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// allNodes is a user's 3-node lock that needs every node, not a majority:
// safe, but one node down stops everyone.
type allNodes struct{ rdbs []redis.UniversalClient }

type allNodesLease struct {
	l          *allNodes
	key, token string
}

var unlock = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (a *allNodes) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	token := fmt.Sprintf("%d", time.Now().UnixNano())
	got := 0
	var err error
	for _, r := range a.rdbs {
		ok, e := r.SetNX(ctx, key, token, 300*time.Millisecond).Result()
		if e != nil {
			err = e
			break
		}
		if !ok {
			break
		}
		got++
	}
	lease := &allNodesLease{l: a, key: key, token: token}
	if got == len(a.rdbs) {
		return lease, nil
	}
	_ = lease.Release(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	return nil, lockimpl.ErrNotAcquired
}

func (l *allNodesLease) Token() string         { return l.token }
func (l *allNodesLease) Fence() uint64         { return 0 }
func (l *allNodesLease) Lost() <-chan struct{} { return nil }
func (l *allNodesLease) Release(ctx context.Context) error {
	for _, r := range l.l.rdbs {
		_ = unlock.Run(ctx, r, []string{l.key}, l.token).Err()
	}
	return nil
}

// TestLockThatNeedsEveryNodeFailsFaultTolerance: a lock that stops
// working while one node of three is cut off is a liveness failure
// (fault-tolerant), never an inconclusive cell blamed on the harness.
func TestLockThatNeedsEveryNodeFailsFaultTolerance(t *testing.T) {
	spec := lockimpl.Spec{Name: "acme-all-nodes", Nodes: 3,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) { return &allNodes{rdbs: env.Clients}, nil }}
	res := scenarios.Run(context.Background(), short("minority-partition", 2*time.Second), spec, scenarios.Safe,
		scenarios.Options{Backend: process.Backend{}, Seed: 5, TimeScale: 1})
	if res.LivenessVerdict != checker.Fail || res.Outcome != results.Regression {
		t.Fatalf("%s", res.Summary())
	}
	ft := res.Report.Result(checker.FaultTolerant)
	if ft == nil || ft.Status != checker.Fail || len(ft.Violations) == 0 ||
		!strings.Contains(ft.Violations[0].Summary, "2 of 3 lock nodes up") {
		t.Fatalf("fault-tolerant: %+v", ft)
	}
	t.Logf("%s\n%s", res.Summary(), ft.Violations[0].Summary)
}

// TestLivenessRowsMeetTheirExpectations: one cell of each liveness row on
// real Redis, decided from the lock's design: a crash frees a TTL lock's
// key (the watchdog's too: it died with its pod), no-ttl stays stuck after
// a crash, a hung watchdog holder keeps its key for good.
func TestLivenessRowsMeetTheirExpectations(t *testing.T) {
	for _, c := range []struct {
		scenario, lock string
		liveness       checker.Status
	}{
		{"pod-crash", lockimpl.NameTokenWatchdog, checker.Pass},
		{"pod-crash", lockimpl.NameNoTTL, checker.Fail},
		{"pod-crash-restart", lockimpl.NameToken, checker.Pass},
		{"abandoned-lease", lockimpl.NameTokenWatchdog, checker.Fail},
		{"abandoned-lease", lockimpl.NameToken, checker.Pass},
	} {
		t.Run(c.scenario+"/"+c.lock, func(t *testing.T) {
			sc, err := scenarios.Get(c.scenario)
			if err != nil {
				t.Fatal(err)
			}
			res := scenarios.Run(context.Background(), sc, lock(c.lock), sc.Expect[c.lock], scenarios.Options{Backend: process.Backend{}, Seed: 11})
			if res.Outcome != results.Met || res.LivenessVerdict != c.liveness {
				t.Fatalf("%s", res.Summary())
			}
			lv := res.Report.Liveness
			if len(lv.Recoveries) == 0 {
				t.Fatalf("no recovery judged: %s", res.Summary())
			}
			if c.liveness == checker.Fail && !lv.Recoveries[len(lv.Recoveries)-1].Stuck {
				t.Fatalf("stuck cell without a stuck recovery: %+v", lv.Recoveries)
			}
			t.Logf("%s: median recovery %v, max %v", res.Summary(), lv.MedianRecovery, lv.MaxRecovery)
		})
	}
}

// TestCellCarriesItsLivenessFigures: a cell's result (and so
// summary.json) carries each stopped holder's recovery and the figures;
// a cell in which nothing stopped carries none.
func TestCellCarriesItsLivenessFigures(t *testing.T) {
	run := func(scenario, lockName string) *results.Cell {
		sc, err := scenarios.Get(scenario)
		if err != nil {
			t.Fatal(err)
		}
		return scenarios.Run(context.Background(), sc, lock(lockName), sc.Expect[lockName],
			scenarios.Options{Seed: 2, Backend: simBackend(t)})
	}
	if res := run("baseline", lockimpl.NameToken); res.LivenessFigures != nil {
		t.Errorf("baseline carries liveness figures: %+v", res.LivenessFigures)
	}
	res := run("pod-crash", lockimpl.NameNoTTL)
	lv := res.LivenessFigures
	if lv == nil || len(lv.Recoveries) == 0 || !lv.Recoveries[0].Stuck || lv.MaxRecovery <= lv.RecoverWithin {
		t.Fatalf("pod-crash/no-ttl figures %+v (%s)", lv, res.Summary())
	}
	res = run("pod-crash", lockimpl.NameToken)
	if lv := res.LivenessFigures; lv == nil || lv.MedianRecovery <= 0 || lv.MedianRecovery > lv.RecoverWithin {
		t.Fatalf("pod-crash/token figures %+v (%s)", lv, res.Summary())
	}
}
