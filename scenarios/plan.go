package scenarios

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
	"github.com/lockchaos/lockchaos/workload"
)

// Cell is one (scenario, lock) pair with its expectation.
type Cell struct {
	Scenario Scenario
	Lock     lockimpl.Spec
	Expect   Expect
}

// Name is "scenario/lock".
func (c Cell) Name() string { return results.CellName(c.Scenario.Name, c.Lock.Name) }

// Options apply to every cell of a run. Zero fields take the documented
// defaults; Validate reports values that cannot work.
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
	// Budget bounds each checker property. Default: the checker's (30s).
	Budget time.Duration
	// CellTimeout bounds a whole cell. Default: duration + 60s.
	CellTimeout time.Duration
	// Backend starts the Redis nodes. Required: a plan without one is in
	// error (ErrNoBackend); the command line and lockchaostest choose it.
	Backend backend.Backend
	// ToxiproxyAPI, when set, serves each cell's toxiproxy HTTP API on this
	// loopback address (port 0: a free one), so a long run can be poked
	// with toxiproxy-cli. Notify is told where.
	ToxiproxyAPI string
	// Notify, if set, receives one-line notices meant for the person
	// running the cells (for example where the toxiproxy API listens).
	Notify func(string)
	// Rerun, if set, writes the command that reruns a planned cell (a
	// user's go test names its own). Default: a `lockchaos run` line for a
	// registered lock, else the seed to pass back in Options.
	Rerun func(p *Plan) string
	// RerunFlags are appended to the default `lockchaos run` line (flags
	// that changed the cell, such as --duration), as they are: quote
	// their values for a shell. The CLI writes its lines with Rerun.
	RerunFlags string
	// Floor overrides every scenario's evidence floor, field by field.
	Floor FloorOverride
	// MaxDuration caps a cell that runs on to reach its floor. Default 5x
	// the (scaled) duration.
	MaxDuration time.Duration
	// RecoverWithin overrides every scenario's deadlock-free bound, as
	// given (not scaled).
	RecoverWithin time.Duration
	// NodeTimeout overrides every cluster scenario's node_timeout
	// (cluster-node-timeout), as given (not scaled): production's 15 s,
	// say, beside a TTL of its own.
	NodeTimeout time.Duration
	// NoWitness runs cells without the witness on the servers (to measure
	// what it costs): every lease end is then assumed from the TTL, and
	// every sentence says so.
	NoWitness bool
	// TimeScale stretches every time of every scenario (TTL, work, gaps,
	// call timeouts, fault sizes) by one factor, so each keeps its shape on
	// a slower machine. Default 1; Calibrate measures one.
	TimeScale float64
	// PartLength is how long a cell may run before it counts as long.
	// A long cell runs as one continuous history, streamed to disk and
	// checked chunk by chunk as it grows, its windows judged as they close,
	// so an hour-long soak runs in flat memory. Default 2 minutes.
	PartLength time.Duration
	// InParts runs a long cell in parts of PartLength instead, each with
	// its own pods, fault schedule, history and check, a TTL's pause
	// between them. A simulated backend always does.
	InParts bool
	// NodeOpTime is how long a node kill and restart takes right now
	// (Calibrate measures it). Scenarios that kill nodes stretch by it
	// over a quiet process's 10 ms, as for a slow backend. Default: the
	// backend's typical figure.
	NodeOpTime time.Duration
	// PostgresNodeOpTime is the same for a PostgreSQL node (0: not
	// measured); the cells of PostgreSQL locks that kill their server
	// stretch by it over a quiet PostgreSQL restart.
	PostgresNodeOpTime time.Duration
}

// Plan is one cell with every default, seed, topology, fence mode, key,
// path and rerun line resolved: a pure function of the cell and the
// options, unit-tested without Redis. Execute runs it.
type Plan struct {
	Scenario Scenario // defaults filled, overrides and scaling applied
	Lock     lockimpl.Spec
	Expect   Expect // defaults filled (Expect.Expected)
	// Skip says why the cell does not run ("" when it does).
	Skip     string
	Topology deployment.Topology
	Nodes    int // nodes the cluster starts
	// Clock runs the nodes under the clock shim (a fault moves clocks);
	// Persistence gives them an append-only file (Scenario.Fsync).
	Clock       bool
	Persistence bool
	Fencing     workload.FenceMode
	RunSeed     int64
	CellSeed    int64
	// Keys are the lock (and resource) keys; on a user's own Redis they
	// all start with KeyPrefix, and the cell deletes them when it ends.
	Keys      []string
	KeyPrefix string
	History   string // the history file, or "" for memory only
	Rerun     string
	Budget    time.Duration
	Timeout   time.Duration
	Backend   backend.Backend
	// Floor is the evidence a pass needs; MaxDuration how long the cell may
	// run on to reach it; TimeScale the factor its times were stretched by.
	Floor       history.Floor
	MaxDuration time.Duration
	TimeScale   float64
	// RecoverWithin and AcquireWithin are the liveness bounds the checker
	// holds the cell to (deadlock-free, fault-tolerant), resolved once.
	RecoverWithin time.Duration
	AcquireWithin time.Duration
	// NodeTimeout is cluster-node-timeout on the cluster topology,
	// resolved once: the run's override, else the scenario's (stretched
	// with its times), else the default stretched alike; 0 elsewhere.
	NodeTimeout time.Duration
	// Witness watches the servers during the cell (Options.NoWitness
	// turns it off).
	Witness bool
	// Parts are the stretches the cell runs in (one, unless it is longer
	// than Options.PartLength), on one deployment.
	Parts []Part
	// Err says why the cell cannot run as planned (a name that would put
	// its files outside OutDir): Execute reports it as a harness error and
	// writes nothing.
	Err error
}

// Part is one stretch of a long cell: its own pods, fault schedule,
// history and check; the deployment (nodes, proxies) stays.
type Part struct {
	Index       int
	Duration    time.Duration
	MaxDuration time.Duration // a single-part cell may run on to its floor
	History     string
	// Continuous marks a long cell run as one history, checked as it
	// grows (see Options.PartLength).
	Continuous bool
}

// DefaultPartLength bounds what one history holds in memory. Two minutes:
// a part's memory grows with its history and with the supervisor's
// periodic checks of it (a 5-minute part peaked at 380-550 MB RSS on
// gc-pause/fenced; 2-minute parts at 157-192 MB).
const DefaultPartLength = 2 * time.Minute

// Simulated says the cell runs in virtual time on a simulated backend, not
// on real Redis.
func (p *Plan) Simulated() bool {
	_, virtual := backend.Virtual(p.Backend)
	return virtual
}

// Name is "scenario/lock".
func (p *Plan) Name() string { return results.CellName(p.Scenario.Name, p.Lock.Name) }

// CellSeed derives a cell's seed from the run's seed and the cell's name.
func CellSeed(runSeed int64, scenario, lock string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s", runSeed, scenario, lock)
	return int64(h.Sum64() & (1<<62 - 1))
}

// NewPlan resolves a cell under opts. It starts nothing.
func NewPlan(cell Cell, opts Options) *Plan {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	be := opts.Backend
	if be == nil {
		be = noBackend{} // the plan is in error: see below
	}
	sc, needs, scale := playedScenario(cell.Scenario, cell.Lock.Service, opts, be)
	p := &Plan{Scenario: sc, Lock: cell.Lock, Expect: cell.Expect.Expected(), RunSeed: opts.Seed,
		CellSeed: CellSeed(opts.Seed, sc.Name, cell.Lock.Name), Budget: opts.Budget, Backend: be, TimeScale: scale,
		Floor: opts.Floor.Apply(sc.Floor.Apply(history.DefaultFloor))}
	p.MaxDuration = opts.MaxDuration
	if p.MaxDuration == 0 {
		p.MaxDuration = 5 * sc.Duration
	}
	p.MaxDuration = max(p.MaxDuration, sc.Duration)
	p.RecoverWithin, p.AcquireWithin = livenessBounds(sc, opts)
	p.Witness = !opts.NoWitness
	needs.Service = cell.Lock.Service
	p.Topology, p.Nodes, p.Skip = topologyFor(sc, cell.Lock, needs)
	if p.Topology == deployment.Cluster {
		// A time scale below 1 must not shrink it below what a node accepts.
		p.NodeTimeout = max(cmp.Or(opts.NodeTimeout, sc.NodeTimeout, deployment.ClusterConfig{}.Scaled(scale).NodeTimeout),
			deployment.MinNodeTimeout)
	}
	p.Clock = needs.Clock
	p.Persistence = needs.Persistence
	if p.Skip == "" {
		p.Skip = unsupported(p, needs, be)
	}
	if p.Expect.Safety == NotApplicable && p.Skip == "" {
		p.Skip = "not applicable: the scenario marks " + cell.Lock.Name + " n/a"
	}
	p.Fencing = workload.FenceOff
	switch {
	case cell.Lock.InTransaction:
		p.Fencing = workload.FenceTransaction
	case cell.Lock.Fencing:
		p.Fencing = workload.FenceReadsAndWrites
	}
	if !backend.OwnsNodes(be) {
		// Someone else's Redis: only keys under our own prefix, removed
		// again when the cell ends.
		p.KeyPrefix = fmt.Sprintf("lockchaos:%d:", p.CellSeed)
	}
	keyName := "%sorder:%d"
	if p.Topology == deployment.Cluster {
		// A hash tag keeps a lock's keys (a fence counter beside its key)
		// on one slot, as every multi-key script on a cluster needs.
		keyName = "%s{order:%d}"
	}
	for i := range sc.Keys {
		p.Keys = append(p.Keys, fmt.Sprintf(keyName, p.KeyPrefix, i+1))
	}
	planFiles(p, cell, opts)
	p.Timeout = opts.CellTimeout
	if p.Timeout == 0 {
		p.Timeout = p.Parts[0].MaxDuration + 60*time.Second
	}
	p.Rerun = rerunLine(p, opts)
	return p
}

// playedScenario is the scenario as the run plays it on be for a lock of
// svc: its defaults, the run's overrides, every duration stretched by the
// time scale (returned, with what its faults need).
func playedScenario(scenario Scenario, svc service.Name, opts Options, be backend.Backend) (Scenario, backend.Needs, float64) {
	sc := scenario.WithDefaults()
	if opts.Duration > 0 {
		sc.Duration = opts.Duration
	}
	if opts.Clients > 0 {
		sc.Clients = opts.Clients
	}
	needs := sc.needs()
	scale := opts.TimeScale
	if scale == 0 {
		scale = 1
	}
	if needs.NodeControl {
		if svc == service.Postgres && opts.PostgresNodeOpTime > 0 {
			scale *= nodeOpScale(opts.PostgresNodeOpTime, postgres.QuietRestart)
		} else {
			scale *= nodeOpScale(max(opts.NodeOpTime, be.NodeOpTime()), process.QuietRestart)
		}
	}
	if _, virtual := backend.Virtual(be); virtual {
		// Virtual time: no machine, however loaded, stretches a cell, so
		// every scenario runs exactly as designed.
		scale = 1
	}
	return sc.scaled(scale), needs, scale
}

// planFiles resolves the history's path and the parts, and the first
// reason the cell cannot run as planned (a path outside --out, too many
// parts or fault windows, an invalid expectation, no backend): a plan in error keeps
// one part and no history.
func planFiles(p *Plan, cell Cell, opts Options) {
	if opts.OutDir != "" {
		p.History, p.Err = historyPath(opts.OutDir, p.Scenario.Name, cell.Lock.Name, opts.HistoryName)
	}
	if err := checkParts(p, opts); err != nil && p.Err == nil {
		p.Err = err
	}
	p.Parts = parts(p, opts)
	if p.Err == nil && p.History != "" {
		p.Err = outside(opts.OutDir, p)
	}
	if p.Err == nil {
		p.Err = checkFaultWindows(p)
	}
	if err := p.Expect.Validate(); err != nil && p.Err == nil {
		p.Err = fmt.Errorf("%w: cell %s: %w", ErrInvalid, cell.Name(), err)
	}
	if opts.Backend == nil && p.Err == nil {
		p.Err = fmt.Errorf("%w: scenarios.Options.Backend is required (the command line and lockchaostest choose one)",
			ErrNoBackend)
	}
	if p.Err != nil {
		p.History = ""
		p.Parts = parts(p, opts)
	}
}

// livenessBounds resolves the two liveness bounds: the run's override,
// else the scenario's, else twice the TTL plus the workload's retry slack
// (the workload's backoff is not scaled, so neither is its slack); and
// three call timeouts plus that slack for an acquire while a majority of
// the nodes is up.
func livenessBounds(sc Scenario, opts Options) (recoverWithin, acquireWithin time.Duration) {
	recoverWithin = opts.RecoverWithin
	if recoverWithin == 0 {
		recoverWithin = sc.RecoverWithin
	}
	if recoverWithin == 0 {
		recoverWithin = history.DefaultRecoverWithin(sc.TTL, history.DefaultRetrySlack)
	}
	return recoverWithin, history.DefaultAcquireWithin(sc.CallTimeout, history.DefaultRetrySlack)
}

// parts splits the cell: one part for a cell no longer than the part
// length (it may run on to its evidence floor), else parts of that length
// (the last takes the rest), each with its own history file.
func parts(p *Plan, opts Options) []Part {
	length := partLength(opts)
	if p.Scenario.Duration <= length || partCount(p.Scenario.Duration, length) > MaxParts {
		// A cell cut into too many parts does not run (checkParts): it
		// keeps one part, for its error.
		return []Part{{Duration: p.Scenario.Duration, MaxDuration: p.MaxDuration, History: p.History}}
	}
	if !p.Simulated() && !opts.InParts && p.History != "" {
		// It runs to its duration: a long cell's evidence is its length.
		return []Part{{Duration: p.Scenario.Duration, MaxDuration: p.Scenario.Duration, History: p.History, Continuous: true}}
	}
	var out []Part
	for left, i := p.Scenario.Duration, 0; left > 0; i++ {
		d := min(left, length)
		left -= d
		path := ""
		if p.History != "" {
			path = strings.TrimSuffix(p.History, ".jsonl") + fmt.Sprintf("-part%03d.jsonl", i+1)
		}
		out = append(out, Part{Index: i, Duration: d, MaxDuration: d, History: path})
	}
	return out
}

// nodeOpScale is how much slower than a quiet local process's a node kill
// and restart is (a container's ~400 ms, a process's on a busy machine
// ~150 ms), capped at six: scenarios that kill nodes stretch by it, so a
// holder is still holding when a kill or a failover completes.
func nodeOpScale(op, quiet time.Duration) float64 {
	return max(1, min(float64(op)/float64(quiet), 6))
}

// rerunLine is the command that reruns the planned cell alone. The
// scenario's and the lock's names are quoted for a POSIX shell where they
// need it (a name from a YAML file may hold anything a shell runs);
// RerunFlags are appended as they are.
func rerunLine(p *Plan, opts Options) string {
	if opts.Rerun != nil {
		return opts.Rerun(p)
	}
	if _, err := lockimpl.Lookup(p.Lock.Name); err == nil {
		return fmt.Sprintf("lockchaos run --scenario %s --lock %s --seed %d%s",
			shellword.Quote(p.Scenario.Name), shellword.Quote(p.Lock.Name), p.RunSeed, opts.RerunFlags)
	}
	return fmt.Sprintf("run %s again with scenarios.Options{Seed: %d} (LOCKCHAOS_SEED=%d with lockchaostest)",
		p.Name(), p.RunSeed, p.RunSeed)
}
