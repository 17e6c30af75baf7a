package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// A user's fencing lock, under a name of its own, gets fenced semantics:
// the resource checks its fences, and gc-pause is safe (it used to fail
// under any name but "fenced").
func TestUserFencingLockGetsFencedSemantics(t *testing.T) {
	spec := lockimpl.Spec{Name: "acme-fencing", Nodes: 1, Fencing: true,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) {
			return lockimpl.NewFenced(env.Clients[0], lockimpl.FencedConfig{TTL: env.TTL})
		}}
	res := scenarios.Run(context.Background(), short("gc-pause", time.Second), spec, scenarios.Safe, scenarios.Options{Backend: process.Backend{}, Seed: 3})
	if res.Outcome != results.Met || res.Verdict != checker.Pass {
		t.Fatalf("%s", res.Summary())
	}
	if res.Stats.StaleFence == 0 {
		t.Fatalf("no stale fence rejected: the resource did not check fences (%+v)", res.Stats)
	}
}

// A user's quorum lock gets the independent nodes it declares, and its
// constructor sees the cell's TTL.
func TestUserLockDeclaresItsNodesAndGetsTheTTL(t *testing.T) {
	var clients, addrs atomic.Int64
	var ttl atomic.Int64
	spec := lockimpl.Spec{Name: "acme-quorum", Nodes: 3,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) {
			clients.Store(int64(len(env.Clients)))
			addrs.Store(int64(len(env.Addrs)))
			ttl.Store(int64(env.TTL))
			// Per-node timeouts of half the TTL: redsync's default (5%) is
			// tighter than a loaded runner's scheduling delay under -race,
			// and the cell would (rightly) be starved, not judged.
			return lockimpl.NewRedlock(env.Clients, lockimpl.RedlockConfig{TTL: env.TTL, TimeoutFactor: 0.5})
		}}
	sc := short("baseline", 500*time.Millisecond)
	sc.TTL = 400 * time.Millisecond
	res := scenarios.Run(context.Background(), sc, spec, scenarios.Safe, scenarios.Options{Backend: process.Backend{}, Seed: 4})
	if res.Failed() || res.Topology != "independent" {
		t.Fatalf("%s (topology %s)", res.Summary(), res.Topology)
	}
	if clients.Load() != 3 || addrs.Load() != 3 || time.Duration(ttl.Load()) != 400*time.Millisecond {
		t.Fatalf("constructor saw %d clients, %d addresses, TTL %v; want 3, 3, 400ms", clients.Load(), addrs.Load(), time.Duration(ttl.Load()))
	}
}

// A user's renewing lock that brings its own go-redis client (dialed with
// the pod's dialer) is frozen whole by a pause, renewals included, and its
// renewals are recorded: so gc-pause finds it unsafe, as it does the
// built-in watchdog.
func TestPauseFreezesClientsTheLockMakesAndRenewalsAreRecorded(t *testing.T) {
	var mu sync.Mutex
	var own []*redis.Client
	spec := lockimpl.Spec{Name: "acme-watchdog", Nodes: 1, Renews: true,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) {
			rdb := redis.NewClient(&redis.Options{Addr: env.Addrs[0], Dialer: env.Dial, Protocol: 2, DisableIdentity: true,
				MaxRetries: -1, ContextTimeoutEnabled: true})
			mu.Lock() // New runs for every pod at once
			own = append(own, rdb)
			mu.Unlock()
			tok, err := lockimpl.NewToken(rdb, lockimpl.TokenConfig{TTL: env.TTL})
			if err != nil {
				return nil, err
			}
			return lockimpl.NewTokenWatchdog(tok, lockimpl.WatchdogConfig{TTL: env.TTL, OnRenew: env.OnRenew})
		}}
	defer func() {
		for _, r := range own {
			_ = r.Close()
		}
	}()
	res := scenarios.Run(context.Background(), short("gc-pause", 1500*time.Millisecond), spec, scenarios.Unsafe, scenarios.Options{Backend: process.Backend{}, Seed: 3})
	if res.Outcome != results.Met || res.Violations == 0 {
		t.Fatalf("a watchdog whose own client escaped the pause would stay safe: %s", res.Summary())
	}
	if res.Stats.RenewalsOK+res.Stats.RenewalsFailed == 0 {
		t.Fatalf("the lock's renewals were not recorded: %+v", res.Stats)
	}
	if strings.Contains(res.Rerun, "--lock acme-watchdog") {
		t.Fatalf("rerun line names a lock the CLI does not know: %q", res.Rerun)
	}
}

// TestMatrix runs the built-in matrix, one subtest per cell, so one cell
// reruns alone: go test ./scenarios -run 'TestMatrix/gc-pause/token'.
func TestMatrix(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the whole matrix needs its real timing: go test -run TestMatrix ./scenarios (no -short, no -race)")
	}
	cells, err := scenarios.Select(scenarios.Catalog(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The Redis matrix: the PostgreSQL rows run in make chaos-postgres, and
	// a sample of them in TestPostgresCells.
	if cells, err = scenarios.KeepServices(cells, []string{"redis"}); err != nil {
		t.Fatal(err)
	}
	// The same time scale as `lockchaos run`: the cells keep their shape
	// on a busy machine.
	cal, err := scenarios.Calibrate(context.Background(), process.Backend{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(cal)
	for _, c := range cells {
		if c.Scenario.Topology == deployment.Cluster {
			continue // the cluster rows: make chaos-cluster, and a sample in TestClusterCells
		}
		t.Run(c.Scenario.Name+"/"+c.Lock.Name, func(t *testing.T) {
			t.Parallel()
			res := scenarios.RunCell(context.Background(), c, scenarios.Options{Backend: process.Backend{}, Seed: 1000, TimeScale: cal.Scale, NodeOpTime: cal.NodeOp})
			switch {
			case res.Outcome == results.Skipped:
				t.Skip(res.Error)
			case res.Failed():
				t.Fatalf("%s\nrerun: %s", res.Summary(), res.Rerun)
			}
			t.Log(res.Summary(), fmt.Sprintf("(%d cycles, %d fault windows)", res.Stats.Cycles, res.Faults))
		})
	}
}
