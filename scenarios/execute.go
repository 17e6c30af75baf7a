package scenarios

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/workload"
	"github.com/lockchaos/lockchaos/workload/history"
)

// errInterrupted marks a cell cut short by the caller's cancellation.
var errInterrupted = errors.New("interrupted")

// Run runs one scenario against a lock and returns its result, as a
// user's go test would (lockchaostest.Run wraps it):
//
//	sc, _ := scenarios.Get("gc-pause")
//	res := scenarios.Run(ctx, sc, mySpec, scenarios.Unsafe, scenarios.Options{})
//	if res.Failed() { t.Fatal(res.Summary()) }
func Run(ctx context.Context, sc Scenario, lock lockimpl.Spec, expect Expectation, opts Options) *results.Cell {
	return RunCell(ctx, Cell{Scenario: sc, Lock: lock, Expect: expect}, opts)
}

// RunCell plans a cell and executes it.
func RunCell(ctx context.Context, cell Cell, opts Options) *results.Cell {
	return Execute(ctx, NewPlan(cell, opts), opts)
}

// Execute runs a planned cell: its nodes, links and pods, the workload
// under the fault schedule, then one check of the history, compared with
// the expectation.
func Execute(ctx context.Context, p *Plan, opts Options) *results.Cell {
	start := time.Now()
	res := &results.Cell{Scenario: p.Scenario.Name, Description: p.Scenario.Description, Lock: p.Lock.Name,
		LockTraits: p.Lock.Describe(), Expect: p.Expect, RunSeed: p.RunSeed, CellSeed: p.CellSeed,
		TTL: p.Scenario.TTL, Topology: string(p.Topology), History: p.History, Rerun: p.Rerun,
		TimeScale: p.TimeScale, Planned: p.Scenario.Duration}
	defer func() { res.Elapsed = time.Since(start) }()
	switch {
	case p.Skip != "":
		res.Outcome, res.Error, res.History = results.Skipped, p.Skip, ""
		return res
	case ctx.Err() != nil:
		res.Outcome, res.Error, res.History = results.Skipped, "interrupted before it ran", ""
		return res
	}
	cluster, err := startCluster(ctx, p, opts)
	if err != nil {
		res.Outcome, res.Error = results.HarnessError, err.Error()
		return res
	}
	defer cluster.Close()
	if p.KeyPrefix != "" {
		defer deleteOwnKeys(cluster, p.KeyPrefix)
	}
	for _, part := range p.Parts {
		h, err := live(ctx, p, part, cluster)
		if err != nil {
			res.Outcome, res.Error = results.HarnessError, err.Error()
			if errors.Is(err, errInterrupted) {
				res.Outcome, res.Error = results.Interrupted, "interrupted mid-cell; the partial history was checked"
			}
		}
		if h != nil {
			judge(ctx, p, part, h, res)
		}
		if err != nil || res.Verdict == checker.Fail || ctx.Err() != nil {
			break // decided, or nothing more can run
		}
	}
	switch {
	case res.Outcome != "":
	case ctx.Err() != nil && res.Verdict != checker.Fail:
		// Cut short between parts: what ran was checked, but it is not
		// the cell that was asked for.
		res.Outcome, res.Error = results.Interrupted, "interrupted mid-cell; the parts that ran were checked"
	default:
		res.Outcome = results.Compare(p.Expect, res.Verdict, res.Evidence)
	}
	return res
}

// startCluster starts the cell's deployment, which every part shares.
func startCluster(ctx context.Context, p *Plan, opts Options) (*faults.Cluster, error) {
	cluster, err := faults.NewCluster(ctx, faults.ClusterConfig{Topology: p.Topology, Nodes: p.Nodes,
		Clients: p.Scenario.Clients, Backend: p.Backend, Proxies: faults.ProxiesConfig{APIAddr: opts.ToxiproxyAPI}})
	if err != nil {
		return nil, fmt.Errorf("harness could not start the cell's Redis: %w", err)
	}
	if addr := cluster.Proxies().APIAddr(); addr != "" && opts.Notify != nil {
		opts.Notify(fmt.Sprintf("%s: toxiproxy API on http://%s (toxiproxy-cli -h %s list)", p.Name(), addr, addr))
	}
	return cluster, nil
}

// judge checks one part's history once and folds it into the cell's
// result. A single-part cell keeps its report and history for the pages;
// a long cell keeps the first part with a violation (else the last), so
// its memory stays that of one part.
func judge(ctx context.Context, p *Plan, part Part, h *history.History, res *results.Cell) {
	rep := checker.Check(context.WithoutCancel(ctx), h, checker.Options{Budget: p.Budget, InfoLimit: checker.ReportInfoLimit})
	if res.Report == nil || res.Report.Verdict != checker.Fail {
		res.Report, res.Events, res.History = rep, h, part.History
		res.Results, res.Stats = rep.Results, rep.Stats
	}
	res.Verdict = worse(res.Verdict, rep.Verdict)
	res.Incidents = append(res.Incidents, rep.Incidents...)
	res.Evidence = res.Evidence.Add(rep.Evidence)
	res.Ran += time.Duration(h.End)
	res.Overlaps += rep.Stats.Overlaps
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
	if len(p.Parts) > 1 {
		res.Evidence = res.Evidence.Hold(&p.Floor, len(p.Scenario.Faults) > 0)
	}
}

// worse combines verdicts: fail over unknown over pass ("" is none yet).
func worse(a, b checker.Status) checker.Status {
	rank := map[checker.Status]int{"": 0, checker.Pass: 1, checker.Unknown: 2, checker.Fail: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// live runs one part of the cell on its deployment and returns the
// recorded history, also when it fails half-way, so what was recorded can
// still be checked.
func live(ctx context.Context, p *Plan, part Part, cluster *faults.Cluster) (*history.History, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	if part.Index > 0 {
		// Let the last part's leases expire: each part starts from a free
		// lock and a fresh resource, so its history checks on its own.
		sleepCtx(ctx, p.Scenario.TTL)
	}
	rec, err := newRecorder(p, part)
	if err != nil {
		return nil, err
	}
	control := workload.NewControl(p.Scenario.Clients)
	pods := newPods(p, cluster, control, rec)
	defer pods.close()
	// Every pod's lock is ready before the first fault or cycle (a driver
	// process can take a second to start on a busy machine).
	if err := pods.build(p.Scenario.Clients); err != nil {
		h, _ := rec.Close()
		return h, fmt.Errorf("workload: %w", err)
	}

	schedule, err := p.schedule()
	if err != nil {
		rec.Close()
		return nil, err
	}
	env := &faults.Env{Cluster: cluster, Pods: control, TTL: p.Scenario.TTL, Keys: p.Keys,
		Rand: rand.New(rand.NewPCG(uint64(p.CellSeed)+uint64(part.Index), 0xfa017)), Window: faultWindows(rec), Probe: probes(rec)}
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan error, 1)
	go func() { schedDone <- schedule.Run(schedCtx, env) }()

	runErr := runWorkload(ctx, p, part, pods, rec, control)
	stopSched()
	control.Close()
	schedErr := <-schedDone
	// Every window is closed now: judge each against its dangerous moment,
	// into the history itself.
	faults.Record(rec, faults.Judge(rec.Snapshot(), p.Scenario.TTL))
	h, closeErr := rec.Close()
	return h, cellError(ctx, p, runErr, schedErr, closeErr)
}

// probes records what faults observe on nodes.
func probes(rec *history.Recorder) func(node, key string, exists bool) {
	return func(node, key string, exists bool) {
		var v int64
		if exists {
			v = 1
		}
		rec.Point(history.Event{Kind: history.Probe, Client: -1, Key: key, Value: v, Targets: []string{node}})
	}
}

// decided reports whether the history so far already answers the cell: a
// decisive violation, or, once the planned duration has passed, enough
// evidence for a pass. The windows are judged on a copy; the history gets
// its judgments once, at the end.
func decided(ctx context.Context, p *Plan, part Part, rec *history.Recorder, elapsed time.Duration) bool {
	snap := rec.Snapshot()
	for _, j := range faults.Judge(snap, p.Scenario.TTL) {
		out := history.Refused
		if j.Exercised {
			out = history.Ok
		}
		snap.Events = append(snap.Events, history.Event{ID: int64(len(snap.Events)), Kind: history.Exercised, Client: -1,
			Fault: j.Window.Fault, Value: j.Window.ID, Outcome: out, Call: snap.End, Return: snap.End})
	}
	rep := checker.Check(ctx, snap, checker.Options{Budget: time.Second, MaxViolations: 1})
	return rep.Verdict == checker.Fail || (len(p.Parts) == 1 && elapsed >= part.Duration && rep.Verdict == checker.Pass && rep.Evidence.Enough)
}

// supervise closes stop once the cell is decided (see decided), looking
// eight times per planned duration; past MaxDuration the workload ends by
// itself, whatever the evidence.
func supervise(ctx context.Context, p *Plan, part Part, rec *history.Recorder, stop chan<- struct{}, done <-chan struct{}) {
	defer close(stop)
	start := time.Now()
	t := time.NewTicker(min(max(part.Duration/8, 20*time.Millisecond), 30*time.Second))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if decided(ctx, p, part, rec, time.Since(start)) {
			return
		}
	}
}

// cellError picks the error that explains a cell's end, or nil.
func cellError(ctx context.Context, p *Plan, runErr, schedErr, closeErr error) error {
	switch {
	case runErr != nil && errors.Is(runErr, context.DeadlineExceeded):
		return fmt.Errorf("cell timed out after %v", p.Timeout)
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return runErr
	case schedErr != nil:
		return schedErr
	case closeErr != nil:
		return closeErr
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", errInterrupted, ctx.Err())
	}
	return nil
}

// runWorkload runs the pods until the workload ends; a lock that ignores
// its context is given 2 s past the cell's timeout, then reported instead
// of hanging the run.
func runWorkload(ctx context.Context, p *Plan, part Part, pods *pods, rec *history.Recorder, control *workload.Control) error {
	stop, finished := make(chan struct{}), make(chan struct{})
	cfg := workload.Config{Clients: p.Scenario.Clients, Keys: p.Keys, Duration: part.MaxDuration, Stop: stop,
		AcquireTimeout: p.Scenario.CallTimeout, ReleaseTimeout: p.Scenario.CallTimeout,
		Work: workload.Dist{Min: p.Scenario.WorkMin, Max: p.Scenario.WorkMax}, Fencing: p.Fencing, Seed: p.CellSeed + int64(part.Index)}
	done := make(chan error, 1)
	go func() {
		_, err := workload.Run(ctx, cfg, pods.locker, rec, control.Hooks())
		close(finished)
		done <- err
	}()
	supervised := make(chan struct{})
	go func() { supervise(ctx, p, part, rec, stop, finished); close(supervised) }()
	defer func() { <-supervised }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		case <-time.After(2 * time.Second):
			return fmt.Errorf("cell timed out after %v: a client did not return (does the lock honour its context?)", p.Timeout)
		}
	}
}

func newRecorder(p *Plan, part Part) (*history.Recorder, error) {
	if part.History != "" {
		if err := os.MkdirAll(filepath.Dir(part.History), 0o755); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	var kinds []string
	for _, f := range p.Scenario.Faults {
		kinds = append(kinds, f.Kind)
	}
	floor := p.Floor
	rec, err := history.NewRecorder(part.History, history.Header{Scenario: p.Scenario.Name, Lock: p.Lock.Name, Seed: p.RunSeed,
		Clients: p.Scenario.Clients, Keys: p.Keys, Fencing: string(p.Fencing), InProcess: p.Lock.Nodes == 0,
		Faults: kinds, TTL: p.Scenario.TTL, Floor: &floor, Nodes: p.Nodes,
		Extra: map[string]string{"ttl": p.Scenario.TTL.String(), "cell_seed": fmt.Sprint(p.CellSeed), "topology": string(p.Topology),
			"part":        fmt.Sprintf("%d of %d", part.Index+1, len(p.Parts)),
			"expectation": string(p.Expect), "backend": p.Backend.Name(), "lock_traits": p.Lock.Describe()}})
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	return rec, nil
}

// schedule builds the cell's fault schedule from its specs.
func (p *Plan) schedule() (faults.Schedule, error) {
	s := faults.Schedule{First: p.Scenario.FirstFault, GapMin: p.Scenario.GapMin, GapMax: p.Scenario.GapMax}
	for _, spec := range p.Scenario.Faults {
		f, err := spec.Build(p.Scenario.TTL)
		if err != nil {
			return s, err
		}
		s.Faults = append(s.Faults, f)
	}
	return s, nil
}

// faultWindows records each fault window in the history as it opens and
// closes.
func faultWindows(rec *history.Recorder) func(string, []string) func() {
	return func(name string, targets []string) func() {
		op := rec.Invoke(history.Event{Kind: history.Fault, Client: -1, Fault: name, Targets: targets})
		return func() { op.Return(history.Result{Outcome: history.Ok}) }
	}
}

// pods builds each pod's lock over that pod's own clients (through its
// proxies, frozen with it) and closes what they hold when the cell ends.
type pods struct {
	p       *Plan
	cluster *faults.Cluster
	control *workload.Control
	rec     *history.Recorder

	mu      sync.Mutex
	rdbs    []*redis.Client
	lockers []lockimpl.Locker
	built   []lockimpl.Locker
}

func newPods(p *Plan, cluster *faults.Cluster, control *workload.Control, rec *history.Recorder) *pods {
	return &pods{p: p, cluster: cluster, control: control, rec: rec}
}

// build makes every pod's lock at once (in parallel: driver processes
// start slowly); locker then hands them to the workload.
func (ps *pods) build(n int) error {
	ps.built = make([]lockimpl.Locker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for pod := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps.built[pod], errs[pod] = ps.make(pod)
		}()
	}
	wg.Wait()
	for pod, err := range errs {
		if err != nil {
			return fmt.Errorf("client %d: %w", pod, err)
		}
	}
	return nil
}

// locker is the workload's factory: the pod's lock, built by build.
func (ps *pods) locker(pod int) (lockimpl.Locker, error) { return ps.built[pod], nil }

// make builds one pod's lock from its spec.
func (ps *pods) make(pod int) (lockimpl.Locker, error) {
	dial := ps.control.Dial(pod)
	addrs := ps.cluster.ClientAddrs(pod)
	env := lockimpl.Env{Pod: pod, Addrs: addrs, Dial: dial, TTL: ps.p.Scenario.TTL, CallTimeout: ps.p.Scenario.CallTimeout,
		OnRenew: workload.RenewalRecorder(ps.rec, pod),
		OnPause: func(stop, cont func()) { ps.control.OnPause(pod, stop, cont) }}
	if ps.p.History != "" {
		env.Dir = filepath.Dir(ps.p.History)
	}
	for _, addr := range addrs {
		rdb, err := lockimpl.NewRedisClient(addr, lockimpl.ClientConfig{ReadTimeout: ps.p.Scenario.CallTimeout,
			WriteTimeout: ps.p.Scenario.CallTimeout, Dialer: dial})
		if err != nil {
			return nil, err
		}
		ps.mu.Lock()
		ps.rdbs = append(ps.rdbs, rdb)
		ps.mu.Unlock()
		env.Clients = append(env.Clients, rdb)
	}
	l, err := ps.p.Lock.Build(env)
	if err != nil {
		return nil, err
	}
	ps.mu.Lock()
	ps.lockers = append(ps.lockers, l)
	ps.mu.Unlock()
	return l, nil
}

// close shuts the pods down: lockers that hold goroutines (watchdogs) stop
// them, even for leases an interrupted run never released; then the
// clients close.
func (ps *pods) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, l := range ps.lockers {
		if c, ok := l.(io.Closer); ok {
			_ = c.Close()
		}
	}
	for _, r := range ps.rdbs {
		_ = r.Close()
	}
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

// sleepCtx sleeps d unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
