package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
	"github.com/lockchaos/lockchaos/workload"
)

// slowBackend is a backend whose node operations take 40x a process's (a
// container): scenarios that kill nodes stretch for it. Plans never start
// anything, so it needs no nodes.
type slowBackend struct{ process.Backend }

func (slowBackend) NodeOpTime() time.Duration { return 400 * time.Millisecond }

// TestPlanResolvesEverythingFromTraits: the topology, the fence mode, the
// keys, the paths and the rerun line follow from the lock's spec and the
// faults' needs, never from names.
func TestPlanResolvesEverythingFromTraits(t *testing.T) {
	myFencing := lockimpl.Spec{Name: "my-fencing-lock", Nodes: 1, Fencing: true, New: lock(lockimpl.NameFenced).New}
	myQuorum := lockimpl.Spec{Name: "my-quorum-lock", Nodes: 5, New: lock(lockimpl.NameRedlock).New}
	myDriver := lockimpl.Spec{Name: "my-driver", Nodes: 1, BringsClient: true, New: lock(lockimpl.NameToken).New}
	sentinel := scenarios.Scenario{Name: "under-sentinel", Faults: []faults.Spec{{Kind: "sentinel-failover"}}}
	mixed := scenarios.Scenario{Name: "mixed", Faults: []faults.Spec{{Kind: "sentinel-failover"}, {Kind: "failover"}}}
	get := func(name string) scenarios.Scenario {
		switch name {
		case sentinel.Name:
			return sentinel
		case mixed.Name:
			return mixed
		}
		s, err := scenarios.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		scenario string
		lock     lockimpl.Spec
		topology deployment.Topology
		nodes    int
		fencing  workload.FenceMode
		skip     string
	}{
		{"gc-pause", myFencing, deployment.Single, 1, workload.FenceReadsAndWrites, ""},
		{"gc-pause", myQuorum, deployment.Independent, 5, workload.FenceOff, ""},
		{"failover", lock(lockimpl.NameToken), deployment.PrimaryReplica, 2, workload.FenceOff, ""},
		{"failover", myQuorum, "", 0, workload.FenceOff, "failover needs a primary with a replica; my-quorum-lock needs 5 independent nodes"},
		{"minority-partition", lock(lockimpl.NameToken), "", 0, workload.FenceOff, "minority-partition needs 3 independent nodes"},
		{"baseline", lock(lockimpl.NameMutex), deployment.Single, 1, workload.FenceOff, ""},
		{"under-sentinel", lock(lockimpl.NameTokenWait), deployment.Sentinel, 2, workload.FenceOff, ""},
		{"baseline", lock(lockimpl.NameTokenWait), "", 0, workload.FenceOff, "not applicable: token-wait needs a replica behind its node"},
		{"failover", lock(lockimpl.NameTokenWait), deployment.PrimaryReplica, 2, workload.FenceOff, ""},
		{"under-sentinel", myQuorum, "", 0, workload.FenceOff, "sentinel-failover needs a primary with a replica; my-quorum-lock needs 5 independent nodes"},
		{"under-sentinel", myDriver, deployment.Sentinel, 2, workload.FenceOff, "skipped: my-driver connects to fixed node addresses with its own client"},
		{"mixed", lock(lockimpl.NameToken), "", 0, workload.FenceOff, "failover fails over by the harness's hand; under Sentinel the Sentinels fail over"},
	}
	for _, c := range cases {
		p := scenarios.NewPlan(scenarios.Cell{Scenario: get(c.scenario), Lock: c.lock, Expect: scenarios.Either.Expected()}, scenarios.Options{Backend: process.Backend{}, Seed: 5})
		if p.Topology != c.topology || p.Nodes != c.nodes || p.Fencing != c.fencing || !strings.Contains(p.Skip, c.skip) || (c.skip == "") != (p.Skip == "") {
			t.Errorf("%s/%s: topology %s x%d, fencing %s, skip %q; want %s x%d, %s, skip containing %q",
				c.scenario, c.lock.Name, p.Topology, p.Nodes, p.Fencing, p.Skip, c.topology, c.nodes, c.fencing, c.skip)
		}
	}
}

func TestPlanDefaultsSeedsPathsAndRerun(t *testing.T) {
	sc, _ := scenarios.Get("gc-pause")
	cell := scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe.Expected()}
	p := scenarios.NewPlan(cell, scenarios.Options{Backend: process.Backend{}, Seed: 42, OutDir: "out", Duration: 3 * time.Second, RerunFlags: " --duration 3s"})
	if p.Scenario.TTL != lockimpl.DefaultTTL || p.Scenario.Duration != 3*time.Second || p.Scenario.Clients != 8 {
		t.Errorf("defaults: ttl %v duration %v clients %d", p.Scenario.TTL, p.Scenario.Duration, p.Scenario.Clients)
	}
	if p.CellSeed != scenarios.CellSeed(42, "gc-pause", "token") || p.RunSeed != 42 {
		t.Errorf("seeds %d %d", p.RunSeed, p.CellSeed)
	}
	if want := filepath.Join("out", "gc-pause", "token", "history.jsonl"); p.History != want {
		t.Errorf("history %q, want %q", p.History, want)
	}
	if p.Rerun != "lockchaos run --scenario gc-pause --lock token --seed 42 --duration 3s" {
		t.Errorf("rerun %q", p.Rerun)
	}
	if len(p.Keys) != 1 || p.Keys[0] != "order:1" || p.KeyPrefix != "" {
		t.Errorf("keys %v prefix %q", p.Keys, p.KeyPrefix)
	}
	// A user's lock the CLI does not know gets no CLI line naming it.
	mine := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lockimpl.Spec{Name: "mine", Nodes: 1, New: lock(lockimpl.NameToken).New}}, scenarios.Options{Backend: process.Backend{}, Seed: 42})
	if strings.Contains(mine.Rerun, "lockchaos run") || !strings.Contains(mine.Rerun, "42") {
		t.Errorf("rerun of an unregistered lock: %q", mine.Rerun)
	}
	// Node-killing scenarios stretch every time, the TTL included, for a
	// slow backend; the rest keep theirs.
	nr, _ := scenarios.Get("node-restart-delayed")
	slow := scenarios.NewPlan(scenarios.Cell{Scenario: nr, Lock: lock(lockimpl.NameRedlock), Expect: scenarios.Safe.Expected()}, scenarios.Options{Backend: slowBackend{}})
	if slow.Scenario.TTL != 6*lockimpl.DefaultTTL || slow.Scenario.Duration != 12*time.Second {
		t.Errorf("node-restart on a slow backend: ttl %v duration %v", slow.Scenario.TTL, slow.Scenario.Duration)
	}
	same := scenarios.NewPlan(cell, scenarios.Options{Backend: slowBackend{}})
	if same.Scenario.TTL != lockimpl.DefaultTTL {
		t.Errorf("gc-pause stretched on a slow backend: ttl %v", same.Scenario.TTL)
	}
}

// noCompiler is the process backend on a machine without a C compiler.
type noCompiler struct{ process.Backend }

func (noCompiler) Supports(n backend.Needs) error {
	if n.Clock {
		return backend.Unsupported("%v", fmt.Errorf("%w: clock faults need a C compiler to build the clock shim (apt-get install gcc, or set CC)", backend.ErrNoClockShim))
	}
	return nil
}

// noClock is a backend whose nodes cannot run the shim nor lose power.
type noClock struct{}

func (noClock) Name() string              { return "docker" }
func (noClock) NodeOpTime() time.Duration { return 400 * time.Millisecond }
func (noClock) Supports(n backend.Needs) error {
	switch {
	case n.Clock:
		return backend.Unsupported("this scenario moves node clocks, which the docker backend cannot do (the process backend can)")
	case n.Persistence:
		return backend.Unsupported("this scenario cuts a node's append-only file as a power loss would, which the docker backend cannot do (the process backend can)")
	}
	return nil
}
func (noClock) StartNode(context.Context, backend.NodeConfig) (backend.RedisNode, error) {
	return nil, errors.New("plans start nothing")
}

// A clock scenario skips, with the reason, where clocks cannot move: no
// compiler, or a backend without clock control. Never a failure.
func TestClockScenarioSkipsWithTheReasonWithoutClockControl(t *testing.T) {
	sc := scenarios.Scenario{Name: "jump", Faults: []faults.Spec{{Kind: "clock-jump"}},
		Expect: map[string]scenarios.Expect{lockimpl.NameToken: scenarios.Unsafe.Expected()}}
	for _, c := range []struct {
		backend backend.Backend
		want    string
	}{
		{noCompiler{}, "skipped: backend: no clock control: clock faults need a C compiler"},
		{noClock{}, "skipped: this scenario moves node clocks, which the docker backend cannot do"},
	} {
		p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe.Expected()},
			scenarios.Options{Seed: 5, Backend: c.backend})
		if !strings.HasPrefix(p.Skip, c.want) || !p.Clock {
			t.Errorf("%s: skip %q (clock %v), want it to start with %q", c.backend.Name(), p.Skip, p.Clock, c.want)
		}
	}
}

// oldRedis is the process backend with a Redis 6 redis-server.
type oldRedis struct{ process.Backend }

func (oldRedis) Supports(n backend.Needs) error {
	if n.Persistence {
		return backend.Unsupported("power-loss needs Redis 7 or later (AOF timestamp marks); /usr/bin/redis-server is 6.0.16")
	}
	return nil
}

// A power-loss scenario skips, with the reason, where it cannot cut an AOF.
func TestPowerLossScenarioSkipsWithTheReason(t *testing.T) {
	sc := scenarios.Scenario{Name: "pl", Fsync: "everysec", Faults: []faults.Spec{{Kind: "power-loss"}},
		Expect: map[string]scenarios.Expect{lockimpl.NameToken: scenarios.Unsafe.Expected()}}
	for _, c := range []struct {
		backend backend.Backend
		want    string
	}{
		{oldRedis{}, "skipped: power-loss needs Redis 7 or later"},
		{noClock{}, "skipped: this scenario cuts a node's append-only file as a power loss would, which the docker backend cannot do"},
		{process.Backend{}, ""},
	} {
		p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Unsafe.Expected()},
			scenarios.Options{Seed: 5, Backend: c.backend})
		if !strings.HasPrefix(p.Skip, c.want) || (c.want == "") != (p.Skip == "") || !p.Persistence {
			t.Errorf("%s: skip %q, want it to start with %q", c.backend.Name(), p.Skip, c.want)
		}
	}
}

// TestPlanWithoutABackendSaysSo: the backend is chosen once, by the
// command line or lockchaostest; a plan given none is in error, naming
// the option, and runs nothing.
func TestPlanWithoutABackendSaysSo(t *testing.T) {
	sc, _ := scenarios.Get("baseline")
	cell := scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe.Expected()}
	p := scenarios.NewPlan(cell, scenarios.Options{Seed: 1})
	if !errors.Is(p.Err, scenarios.ErrNoBackend) || !strings.Contains(p.Err.Error(), "Options.Backend") {
		t.Fatalf("plan error %v, want ErrNoBackend", p.Err)
	}
	if r := scenarios.Execute(context.Background(), p, scenarios.Options{}); r.Outcome != results.HarnessError {
		t.Errorf("executed: %s %q", r.Outcome, r.Error)
	}
}
