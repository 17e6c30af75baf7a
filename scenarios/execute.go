package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/internal/wait"
	"github.com/lockchaos/lockchaos/netfault"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/workload"
)

// errInterrupted marks a cell cut short by the caller's cancellation.
var errInterrupted = errors.New("interrupted")

// Run runs one scenario against a lock and returns its result, as a
// user's go test would (lockchaostest.Run wraps it):
//
//	sc, _ := scenarios.Get("gc-pause")
//	res := scenarios.Run(ctx, sc, mySpec, scenarios.Unsafe, scenarios.Options{Backend: process.Backend{}})
//	if res.Failed() { t.Fatal(res.Summary()) }
//
// expect is one word (safety; liveness live) or a whole Expect:
// scenarios.Expect{Safety: scenarios.Safe, Liveness: scenarios.Stuck}.
func Run(ctx context.Context, sc Scenario, lock lockimpl.Spec, expect results.Expecter, opts Options) *results.Cell {
	return RunCell(ctx, Cell{Scenario: sc, Lock: lock, Expect: expect.Expected()}, opts)
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
		LockTraits: p.Lock.Describe(), RunSeed: p.RunSeed, CellSeed: p.CellSeed,
		TTL: p.Scenario.TTL, Topology: string(p.Topology), History: p.History, Rerun: p.Rerun,
		TimeScale: p.TimeScale, Planned: p.Scenario.Duration, Backend: p.Backend.Name(), Simulated: p.Simulated()}
	res.SetExpect(p.Expect)
	defer func() { res.Elapsed = time.Since(start) }()
	switch {
	case p.Err != nil:
		res.Outcome, res.Error, res.History = results.HarnessError, p.Err.Error(), ""
		return res
	case p.Skip != "":
		res.Outcome, res.Error, res.History = results.Skipped, p.Skip, ""
		return res
	case ctx.Err() != nil:
		res.Outcome, res.Error, res.History = results.Skipped, results.NotStartedReason, ""
		return res
	}
	runPart, done, err := partRunner(ctx, p, opts)
	if err != nil {
		res.Outcome, res.Error = results.HarnessError, err.Error()
		return res
	}
	defer done()
	for _, part := range p.Parts {
		run, err := runPart(ctx, part)
		if why, ok := refused(p, err); ok && part.Index == 0 && (run.h == nil || len(run.h.Events) == 0) {
			res.Outcome, res.Error, res.History = results.Skipped, why, ""
			break
		}
		if err != nil {
			res.Outcome, res.Error = results.HarnessError, err.Error()
			if errors.Is(err, errInterrupted) {
				res.Outcome, res.Error = results.Interrupted, "interrupted mid-cell; the partial history was checked"
			}
		}
		switch {
		case run.rep != nil:
			fold(p, part, run, res)
		case run.h != nil:
			judge(ctx, p, part, run.h, res)
		}
		if err != nil || p.Expect.Settled(res.Verdicts()) || ctx.Err() != nil {
			break // decided, or nothing more can run
		}
	}
	switch {
	case res.Outcome == results.HarnessError || res.Outcome == results.Skipped:
		// The cell asked for did not run: no verdict (results.Cell.ShownVerdict).
		res.Verdict, res.SafetyVerdict, res.LivenessVerdict = "", "", ""
	case res.Outcome != "":
	case ctx.Err() != nil && res.Verdict != checker.Fail:
		// Cut short between parts: what ran was checked, but it is not
		// the cell that was asked for.
		res.Outcome, res.Error = results.Interrupted, "interrupted mid-cell; the parts that ran were checked"
	default:
		res.Decide()
	}
	return res
}

// refused says why the cell is skipped when its lock refused the
// deployment (lockimpl.ErrUnsupported from its constructor): the lock's
// own reason, not a harness error, since nothing is wrong with the harness
// or the lock. Execute asks only before any traffic (every pod's lock is
// built before the history starts): a refusal after (a restarted pod's)
// leaves a cell that ran, and stays the harness error it is.
func refused(p *Plan, err error) (string, bool) {
	if !errors.Is(err, lockimpl.ErrUnsupported) {
		return "", false
	}
	why := err.Error()
	if u, ok := errors.AsType[*lockimpl.UnsupportedError](err); ok {
		why = u.Reason
	}
	return fmt.Sprintf("not supported by %s on a %s deployment: %s", p.Lock.Name, p.Topology, why), true
}

// partRunner returns how to run each part of the cell, and what to close
// when the cell ends. On a real backend the deployment (nodes, proxies) is
// started once and every part shares it. On a virtual one each part runs
// in a bubble of its own (see virtualPart); the checker always runs out
// here, in real time, the same code for every backend.
func partRunner(ctx context.Context, p *Plan, opts Options) (func(context.Context, Part) (partRun, error), func(), error) {
	if vb, ok := backend.Virtual(p.Backend); ok {
		return func(ctx context.Context, part Part) (partRun, error) {
			h, err := virtualPart(ctx, vb, p, opts, part)
			return partRun{h: h}, err
		}, func() {}, nil
	}
	dep, err := startDeployment(ctx, p, opts)
	if err != nil {
		return nil, nil, err
	}
	keysDone, err := ownKeys(p, dep)
	if err != nil {
		dep.Close()
		return nil, nil, err
	}
	// The proxies close first: a session still open behind one (a row
	// lock in a transaction a partition left) would keep a PostgreSQL
	// cell's schema from being dropped.
	done := func() {
		dep.Close()
		keysDone()
	}
	return func(ctx context.Context, part Part) (partRun, error) { return live(ctx, p, part, dep) }, done, nil
}

// partRun is what a part leaves: its history, and for a continuous part
// (checked as it ran) the report, what was read, and the chunk the pages
// show in place of the whole history.
type partRun struct {
	h   *history.History
	rep *checker.Report
	sum checker.FileSummary
}

// virtualPart runs one part of a cell inside the backend's bubble: its own
// nodes and links (a simulated deployment costs nothing to start, and
// every part starts from a free lock anyway), pods, faults and recorder,
// all in virtual time. Everything started inside has ended when it
// returns.
//
// The caller's ctx cannot be waited on inside a bubble (a goroutine
// blocked on a channel from outside never lets virtual time move), so a
// watcher polls it every virtual 10 ms and cancels the part's own context.
func virtualPart(ctx context.Context, vb backend.VirtualBackend, p *Plan, opts Options, part Part) (h *history.History, err error) {
	vb.Enter(func() {
		inner, cancel := context.WithCancel(context.Background())
		defer cancel()
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for ctx.Err() == nil {
				select {
				case <-t.C:
				case <-inner.Done():
					return
				}
			}
			cancel()
		}()
		defer func() { cancel(); <-watched }()
		// Last of all (deferred first): go-redis's dial breaker probes a
		// failing address once a second until it sees its pool closed; a
		// bubble ends only when every goroutine has, so give those
		// probes their virtual second (no wall time).
		defer time.Sleep(drainStragglers)
		dep, cerr := startDeployment(inner, p, opts)
		if cerr != nil {
			err = cerr
			return
		}
		defer dep.Close()
		var run partRun
		run, err = live(inner, p, part, dep)
		h = run.h
	})
	return h, err
}

// drainStragglers is how long a virtual part waits, after closing
// everything, for goroutines that only notice on their next wake-up.
const drainStragglers = 2 * time.Second

// startDeployment starts the cell's deployment, which every part shares.
func startDeployment(ctx context.Context, p *Plan, opts Options) (*deployment.Deployment, error) {
	dep, err := deployment.New(ctx, deployment.Config{Topology: p.Topology, Nodes: p.Nodes,
		Clients: p.Scenario.Clients, Backend: p.Backend,
		Node:    nodeConfig(p),
		Proxies: netfault.ProxiesConfig{APIAddr: opts.ToxiproxyAPI},
		// Sentinel's timings stretch with the cell's, as a lease does.
		Sentinel: deployment.SentinelConfig{}.Scaled(p.TimeScale),
		Cluster:  deployment.ClusterConfig{NodeTimeout: p.NodeTimeout}})
	if err != nil {
		return nil, fmt.Errorf("harness could not start the cell's %s: %w", p.Lock.Service.Or(), err)
	}
	if addr := dep.Proxies().APIAddr(); addr != "" && opts.Notify != nil {
		opts.Notify(fmt.Sprintf("%s: toxiproxy API on http://%s (toxiproxy-cli -h %s list)", p.Name(), addr, addr))
	}
	return dep, nil
}

// live runs one part of the cell on its deployment and returns the
// recorded history, also when it fails half-way, so what was recorded can
// still be checked.
func live(ctx context.Context, p *Plan, part Part, dep *deployment.Deployment) (partRun, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	if part.Index > 0 {
		// Let the last part's leases expire: each part starts from a free
		// lock and a fresh resource, so its history checks on its own.
		wait.Sleep(ctx, p.Scenario.TTL)
	}
	control := workload.NewControl(p.Scenario.Clients)
	if dial := dep.Dialer(); dial != nil {
		control.UseDialer(dial)
	}
	if err := resetResource(ctx, dep, p.KeyPrefix); err != nil {
		return partRun{}, err
	}
	pods := newPods(p, dep, control)
	defer pods.close()
	// Every pod's lock is ready before the history's clock starts (a
	// driver process can take a second to start on a busy machine): its
	// first event, the first fault and the first cycle come after.
	buildErr := pods.build(p.Scenario.Clients)
	r, err := startRecording(ctx, p, part)
	if err != nil {
		return partRun{}, err
	}
	defer func() {
		if !r.ended {
			_, _ = r.end() // only when the part panics: the panic is what the caller sees
		}
	}()
	if buildErr != nil {
		run, _ := r.end()
		return run, fmt.Errorf("workload: %w", buildErr)
	}
	pods.record(r.rec)
	wit := startWitness(ctx, p, dep, r.rec)
	defer wit.Stop() // when the part panics; it ends below otherwise
	schedule, err := p.schedule()
	if err != nil {
		_, _ = r.end() // no cycle ran yet: the plan's error is the part's only result
		return partRun{}, err
	}
	env := &faults.Env{Deployment: dep, Pods: control, TTL: p.Scenario.TTL, WorkMax: p.Scenario.WorkMax, Keys: p.Keys,
		Rand:   rand.New(rand.NewPCG(uint64(p.CellSeed)+uint64(part.Index), 0xfa017)),
		Window: faultWindows(r.rec), Probe: probes(r.rec)}
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan error, 1)
	go func() { schedDone <- schedule.Run(schedCtx, env) }()

	runErr := runWorkload(ctx, p, part, pods, r.rec, control, r.st)
	stopSched()
	control.Close()
	schedErr := <-schedDone
	// What the server did up to now is in the history before the windows
	// are judged against it.
	wit.Stop()
	// Every window is closed now: judge each against its dangerous moment,
	// into the history itself (a continuous part's judge does it as they
	// close).
	if r.st == nil {
		faults.Record(r.rec, faults.Judge(r.rec.Snapshot(), p.Scenario.TTL))
	}
	run, closeErr := r.end()
	return run, cellError(ctx, p, runErr, schedErr, closeErr)
}

// runWorkload runs the pods until the workload ends; a lock that ignores
// its context is given 2 s past the cell's timeout, then reported instead
// of hanging the run.
func runWorkload(ctx context.Context, p *Plan, part Part, pods *pods, rec *history.Recorder, control *workload.Control,
	st *streamer) error {
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
	go func() { supervise(ctx, p, part, rec, st, stop, finished); close(supervised) }()
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

// schedule builds the cell's fault schedule from its specs.
func (p *Plan) schedule() (faults.Schedule, error) {
	s := faults.Schedule{First: p.Scenario.FirstFault, GapMin: p.Scenario.GapMin, GapMax: p.Scenario.GapMax, Max: MaxFaultWindows}
	for _, spec := range p.Scenario.Faults {
		f, err := spec.Build(p.Scenario.TTL)
		if err != nil {
			return s, err
		}
		s.Faults = append(s.Faults, f)
	}
	return s, nil
}

// resetResource empties a resource the servers hold themselves (a
// database whose locks write it in their transaction), as the harness's
// own resource starts empty in every part: a part's history begins from
// zero.
func resetResource(ctx context.Context, dep *deployment.Deployment, keyPrefix string) error {
	for _, n := range dep.Nodes() {
		if r, ok := n.(backend.ResourceNode); ok {
			if err := r.ResetResource(ctx, keyPrefix); err != nil {
				return fmt.Errorf("harness could not empty the resource on %s: %w", n.Name(), err)
			}
		}
	}
	return nil
}
