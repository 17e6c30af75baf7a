package scenarios

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
	"github.com/lockchaos/lockchaos/workload/history"
)

// Outcome compares a cell's verdict with its expectation.
type Outcome string

// Outcomes.
const (
	Met          Outcome = "met"         // safe and passed, unsafe and detected, or either
	Regression   Outcome = "regression"  // a safe cell failed
	Missed       Outcome = "missed"      // an unsafe cell passed: the harness missed a known bug
	Inconclusive Outcome = "unknown"     // the checker could not decide
	HarnessError Outcome = "error"       // the cell could not run
	Skipped      Outcome = "skipped"     // n/a for this lock, or interrupted before it ran
	Interrupted  Outcome = "interrupted" // Ctrl-C or SIGTERM mid-cell: partial history, checked
)

// errInterrupted marks a cell cut short by the caller's cancellation.
var errInterrupted = errors.New("interrupted")

// LockerFactory builds one pod's Locker over that pod's Redis clients (one
// per node the pod sees, already wired through the cell's proxies and
// fault hooks). It is how users test their own locks.
type LockerFactory func(nodes []redis.UniversalClient) (lockimpl.Locker, error)

// Options apply to every cell of a run. Zero fields keep the scenario's
// values or the documented defaults.
type Options struct {
	// Seed of the run; each cell derives its own from it, its scenario and
	// its lock, so one cell reruns alone with the same seed. Default 1.
	Seed int64
	// OutDir receives each cell's history under SCENARIO/LOCK/. Default ""
	// keeps histories in memory only.
	OutDir string
	// HistoryName is the history's file name in its cell dir. Default
	// "history.jsonl".
	HistoryName string
	// Duration and Clients override every scenario's.
	Duration time.Duration
	Clients  int
	// Budget bounds each checker property. Default 30s.
	Budget time.Duration
	// CellTimeout bounds a whole cell. Default: duration + 60s.
	CellTimeout time.Duration
	// Rerun is the command line prefix that reruns a cell (for reports).
	// Default "lockchaos run".
	Rerun string
	// InfoLimit is passed to the checker (porcupine info for reports).
	InfoLimit int
	// Backend starts the Redis nodes. Default: local redis-server processes.
	Backend faults.Backend
	// ToxiproxyAPI, when set, serves each cell's toxiproxy HTTP API on this
	// loopback address (port 0: a free one), so a long run can be poked
	// with toxiproxy-cli. Notify is told where.
	ToxiproxyAPI string
	// Notify, if set, receives one-line notices meant for the person
	// running the cells (for example where the toxiproxy API listens).
	Notify func(string)
}

// Cell is one (scenario, lock) pair with its expectation.
type Cell struct {
	Scenario Scenario
	Lock     string
	Expect   Expectation
	// Factory, when set, builds the lock instead of the built-in named Lock.
	Factory LockerFactory `json:"-"`
}

// Name is "scenario/lock".
func (c Cell) Name() string { return c.Scenario.Name + "/" + c.Lock }

// CellResult is everything a run learned about one cell.
type CellResult struct {
	Scenario   string           `json:"scenario"`
	Lock       string           `json:"lock"`
	Expect     Expectation      `json:"expectation"`
	Verdict    checker.Status   `json:"verdict,omitempty"`
	Outcome    Outcome          `json:"outcome"`
	Violations int              `json:"violations"` // decisive ones
	Overlaps   int              `json:"overlaps"`
	Results    []checker.Result `json:"results,omitempty"`
	Stats      checker.Stats    `json:"stats"`
	RunSeed    int64            `json:"run_seed"`
	CellSeed   int64            `json:"cell_seed"`
	Faults     int              `json:"fault_windows"`
	History    string           `json:"history,omitempty"`
	Rerun      string           `json:"rerun"`
	Elapsed    time.Duration    `json:"elapsed_ns"`
	Error      string           `json:"error,omitempty"`

	Report *checker.Report `json:"-"`
}

// Failed reports whether the cell did not meet its expectation.
func (r *CellResult) Failed() bool { return r.Outcome != Met && r.Outcome != Skipped }

// Summary is one line for people.
func (r *CellResult) Summary() string {
	s := fmt.Sprintf("%s/%s: %s (expected %s): %s", r.Scenario, r.Lock, orDash(string(r.Verdict)), r.Expect, r.Outcome)
	if r.Violations > 0 {
		s += fmt.Sprintf(", %d violation(s), first at %s", r.Violations, history.Seconds(r.Stats.FirstViolation))
		for _, res := range r.Results {
			if res.Decisive && len(res.Violations) > 0 {
				s += ": " + res.Violations[0].Summary
				break
			}
		}
	}
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CellSeed derives a cell's seed from the run's seed and the cell's name.
func CellSeed(runSeed int64, scenario, lock string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s", runSeed, scenario, lock)
	return int64(h.Sum64() & (1<<62 - 1))
}

// Run runs one scenario against a user's lock and returns its result, as
// a user's go test would:
//
//	sc, _ := scenarios.Get("gc-pause")
//	res := scenarios.Run(ctx, sc, "mylock", scenarios.Unsafe, myFactory, scenarios.Options{})
//	if res.Failed() { t.Fatal(res.Summary()) }
func Run(ctx context.Context, sc Scenario, lockName string, expect Expectation, factory LockerFactory, opts Options) *CellResult {
	return RunCell(ctx, Cell{Scenario: sc, Lock: lockName, Expect: expect, Factory: factory}, opts)
}

// RunCell builds the cell's nodes, links and clients, runs the workload
// under the fault schedule, checks the history and compares.
func RunCell(ctx context.Context, cell Cell, opts Options) *CellResult {
	start := time.Now()
	sc := cell.Scenario.WithDefaults()
	if opts.Duration > 0 {
		sc.Duration = opts.Duration
	}
	if opts.Clients > 0 {
		sc.Clients = opts.Clients
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Rerun == "" {
		opts.Rerun = "lockchaos run"
	}
	if opts.Backend != nil {
		sc = sc.scaledFor(opts.Backend)
		if reason := unsupported(sc, cell.Lock, opts.Backend); reason != "" {
			return &CellResult{Scenario: sc.Name, Lock: cell.Lock, Expect: cell.Expect, RunSeed: opts.Seed,
				Outcome: Skipped, Error: reason, Rerun: "lockchaos run --scenario " + sc.Name + " --lock " + cell.Lock}
		}
	}
	seed := CellSeed(opts.Seed, sc.Name, cell.Lock)
	res := &CellResult{Scenario: sc.Name, Lock: cell.Lock, Expect: cell.Expect, RunSeed: opts.Seed, CellSeed: seed,
		Rerun: fmt.Sprintf("%s --scenario %s --lock %s --seed %d", opts.Rerun, sc.Name, cell.Lock, opts.Seed)}
	defer func() { res.Elapsed = time.Since(start) }()
	if cell.Expect == NotApplicable {
		res.Outcome, res.Error = Skipped, "not applicable: "+cell.Lock+" does not run on "+string(sc.Topology)
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Outcome, res.Error = Skipped, "interrupted before it ran"
		return res
	}
	h, err := runCell(ctx, sc, cell, seed, opts, res)
	if err != nil {
		res.Outcome, res.Error = HarnessError, err.Error()
		if errors.Is(err, errInterrupted) || errors.Is(ctx.Err(), context.Canceled) {
			res.Outcome = Interrupted
		}
		if h == nil {
			return res
		}
	}
	budget := opts.Budget
	rep := checker.Check(context.WithoutCancel(ctx), h, checker.Options{Budget: budget, Lock: cell.Lock, InfoLimit: opts.InfoLimit})
	res.Report = rep
	res.Verdict = rep.Verdict
	res.Results = rep.Results
	res.Stats = rep.Stats
	res.Overlaps = rep.Stats.Overlaps
	for _, r := range rep.Results {
		if r.Decisive {
			res.Violations += r.ViolationCount
		}
	}
	for _, e := range h.Events {
		if e.Kind == history.Fault {
			res.Faults++
		}
	}
	if res.Outcome == "" {
		res.Outcome = compare(cell.Expect, rep.Verdict)
	}
	return res
}

func compare(e Expectation, v checker.Status) Outcome {
	switch {
	case v == checker.Unknown:
		return Inconclusive
	case e == Either:
		return Met
	case e == Safe && v == checker.Pass, e == Unsafe && v == checker.Fail:
		return Met
	case e == Safe:
		return Regression
	}
	return Missed
}

// runCell does the live part and returns the recorded history (also when
// it fails half-way, so what was recorded can still be checked).
func runCell(ctx context.Context, sc Scenario, cell Cell, seed int64, opts Options, res *CellResult) (*history.History, error) {
	timeout := opts.CellTimeout
	if timeout == 0 {
		timeout = sc.Duration + 60*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	backend := opts.Backend
	if backend == nil {
		backend = faults.ProcessBackend{}
	}
	cluster, err := faults.NewCluster(ctx, faults.ClusterConfig{Topology: sc.topologyFor(cell.Lock), Clients: sc.Clients, Backend: backend,
		Proxies: faults.ProxiesConfig{APIAddr: opts.ToxiproxyAPI}})
	if err != nil {
		return nil, fmt.Errorf("harness could not start the cell's Redis: %w", err)
	}
	defer cluster.Close()
	if addr := cluster.Proxies().APIAddr(); addr != "" && opts.Notify != nil {
		opts.Notify(fmt.Sprintf("%s/%s: toxiproxy API on http://%s (toxiproxy-cli -h %s list)", sc.Name, cell.Lock, addr, addr))
	}

	path := ""
	if opts.OutDir != "" {
		dir := filepath.Join(opts.OutDir, sc.Name, cell.Lock)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		name := opts.HistoryName
		if name == "" {
			name = "history.jsonl"
		}
		path = filepath.Join(dir, name)
		res.History = path
	}
	cfg := sc.workloadConfig(seed)
	if !backend.NodeControl() {
		// Someone else's Redis: only keys under our own prefix, removed
		// again when the cell ends.
		prefix := fmt.Sprintf("lockchaos:%d:", seed)
		for i := range cfg.Keys {
			cfg.Keys[i] = prefix + cfg.Keys[i]
		}
		defer deleteOwnKeys(cluster, prefix)
	}
	rec, err := history.NewRecorder(path, history.Header{Scenario: sc.Name, Lock: cell.Lock, Seed: opts.Seed,
		Clients: sc.Clients, Keys: cfg.Keys, Fencing: string(fencingFor(cell.Lock)),
		Extra: map[string]string{"ttl": sc.TTL.String(), "cell_seed": fmt.Sprint(seed), "topology": string(sc.topologyFor(cell.Lock)),
			"expectation": string(cell.Expect), "backend": backend.Name()}})
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	clients := faults.NewClients()
	var rdbs []*redis.Client
	defer func() {
		for _, r := range rdbs {
			_ = r.Close()
		}
	}()
	// Each pod's clients are built up front, in this goroutine, so
	// closing them later needs no lock.
	podNodes := make([][]redis.UniversalClient, sc.Clients)
	for i := range sc.Clients {
		for _, addr := range cluster.ClientAddrs(i) {
			rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{ReadTimeout: sc.CallTimeout, WriteTimeout: sc.CallTimeout})
			if err != nil {
				return nil, err
			}
			rdb.AddHook(clients.PauseHook(i))
			rdbs = append(rdbs, rdb)
			podNodes[i] = append(podNodes[i], rdb)
		}
	}
	var lockersMu sync.Mutex
	var lockers []lockimpl.Locker
	defer func() {
		// A pod shutting down: lockers that hold goroutines (watchdogs)
		// stop them, even for leases an interrupted run never released.
		for _, l := range lockers {
			if c, ok := l.(io.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	factory := func(i int) (lockimpl.Locker, error) {
		var l lockimpl.Locker
		var err error
		if cell.Factory != nil {
			l, err = cell.Factory(podNodes[i])
		} else {
			l, err = lockimpl.New(cell.Lock, podNodes[i], lockimpl.Options{TTL: sc.TTL, OnRenew: workload.RenewalRecorder(rec, i)})
		}
		if err == nil {
			lockersMu.Lock()
			lockers = append(lockers, l)
			lockersMu.Unlock()
		}
		return l, err
	}

	sched := faults.Schedule{First: sc.FirstFault, GapMin: sc.GapMin, GapMax: sc.GapMax}
	for _, spec := range sc.Faults {
		f, err := spec.Build(sc.TTL)
		if err != nil {
			return nil, err
		}
		sched.Faults = append(sched.Faults, f)
	}
	env := &faults.Env{Cluster: cluster, Clients: clients, TTL: sc.TTL,
		Rand: rand.New(rand.NewPCG(uint64(seed), 0xfa017)),
		Window: func(name string, targets []string) func() {
			op := rec.Invoke(history.Event{Kind: history.Fault, Client: -1, Fault: name, Targets: targets})
			return func() { op.Return(history.Result{Outcome: history.Ok}) }
		}}
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan error, 1)
	go func() { schedDone <- sched.Run(schedCtx, env) }()

	hooks := workload.Hooks{
		Gate:     clients.Gate,
		Hold:     clients.Hold,
		Acquired: func(c int, key string, _ lockimpl.Lease) { clients.Acquired(c, key) },
		Released: func(c int, _ string) { clients.Released(c) },
	}
	cfg.Fencing = fencingFor(cell.Lock)
	runDone := make(chan error, 1)
	go func() {
		_, err := workload.Run(ctx, cfg, factory, rec, hooks)
		runDone <- err
	}()
	var runErr error
	select {
	case runErr = <-runDone:
	case <-ctx.Done():
		// Give clients a moment to notice; a lock that ignores its context
		// hangs here, and the cell says so instead of hanging the run.
		select {
		case runErr = <-runDone:
		case <-time.After(2 * time.Second):
			runErr = fmt.Errorf("cell timed out after %v: a client did not return (does the lock honour its context?)", timeout)
		}
	}
	stopSched()
	clients.Close()
	schedErr := <-schedDone
	h, closeErr := rec.Close()
	switch {
	case runErr != nil && errors.Is(runErr, context.DeadlineExceeded):
		return h, fmt.Errorf("cell timed out after %v", timeout)
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return h, runErr
	case schedErr != nil:
		return h, schedErr
	case closeErr != nil:
		return h, closeErr
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return h, fmt.Errorf("%w: %w", errInterrupted, ctx.Err())
	}
	return h, nil
}

// unsupported says why a cell cannot run on a backend, or "".
func unsupported(sc Scenario, lock string, b faults.Backend) string {
	if b.NodeControl() {
		return ""
	}
	if sc.nodeControl() {
		return "skipped: this scenario kills, restarts or promotes nodes, which the " + b.Name() + " backend cannot do (only network faults apply)"
	}
	if ext, ok := b.(*faults.ExternalBackend); ok && sc.topologyFor(lock) == faults.Independent && len(ext.Addrs()) < 3 {
		return fmt.Sprintf("skipped: %s needs 3 independent Redis servers, --redis-addr gave %d", lock, len(ext.Addrs()))
	}
	return ""
}

// deleteOwnKeys removes every key under prefix on every node (SCAN, never
// KEYS: the server may be busy with real work).
func deleteOwnKeys(c *faults.Cluster, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.Nodes() {
		cursor := "0"
		for {
			v, err := n.Do(ctx, "SCAN", cursor, "MATCH", prefix+"*", "COUNT", 1000)
			if err != nil {
				break
			}
			reply, _ := v.([]any)
			if len(reply) != 2 {
				break
			}
			cursor, _ = reply[0].(string)
			keys, _ := reply[1].([]any)
			for _, k := range keys {
				_, _ = n.Do(ctx, "DEL", k)
			}
			if cursor == "0" {
				break
			}
		}
	}
}

// fencingFor returns the resource's fence mode for a lock: reads and
// writes are fenced when the lock hands out fences.
func fencingFor(lock string) workload.FenceMode {
	if lock == lockimpl.NameFenced {
		return workload.FenceReadsAndWrites
	}
	return workload.FenceOff
}
