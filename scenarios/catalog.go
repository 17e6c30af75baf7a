// Package scenarios is the matrix as data: each scenario names a topology,
// a workload scaled to seconds, a fault schedule, and what each lock is
// expected to do under it. The runner builds a cell (its own nodes, links
// and clients), runs it, checks the history and compares the verdict with
// the expectation.
package scenarios

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/safename"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// Expectation is what a cell must show of one property group, Expect of
// both (results', re-exported so a scenario reads naturally).
type (
	Expectation = results.Expectation
	Expect      = results.Expect
)

// Expectations.
const (
	Safe          = results.Safe
	Unsafe        = results.Unsafe
	Either        = results.Either
	NotApplicable = results.NotApplicable
	Live          = results.Live
	Stuck         = results.Stuck
)

// Sentinel errors.
var (
	ErrUnknownScenario = errors.New("scenarios: unknown scenario")
	ErrInvalid         = errors.New("scenarios: invalid scenario")
	ErrInvalidShard    = errors.New("scenarios: invalid shard")
	ErrInvalidSeed     = errors.New("scenarios: invalid seed")
	ErrTooLarge        = errors.New("scenarios: cell too large")
	ErrUnsafePath      = errors.New("scenarios: unsafe path")
	ErrUnknownField    = errors.New("scenarios: unknown field")
	ErrEmptyFile       = errors.New("scenarios: empty scenarios file")
	ErrNoBackend       = errors.New("scenarios: no backend")
)

// Scenario is one row of the matrix.
type Scenario struct {
	// Name names the scenario and its cells' folders (OUT/SCENARIO/LOCK):
	// letters, digits, ".", "_" and "-", starting with a letter or digit,
	// at most 64 characters, no "..".
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Topology for locks that use one service address: single, or
	// primary-replica (implied by a fault that needs a replica). A lock
	// that needs N independent nodes gets them whatever this says.
	// Default single.
	Topology deployment.Topology `yaml:"topology,omitempty" json:"topology,omitempty"`
	// TTL of every lock in the cell. Default lockimpl.DefaultTTL.
	TTL time.Duration `yaml:"ttl,omitempty" json:"ttl,omitempty"`
	// Duration clients keep starting cycles. Default 2s.
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Clients (pods). Default 8.
	Clients int `yaml:"clients,omitempty" json:"clients,omitempty"`
	// Keys the clients contend on. Default 1.
	Keys int `yaml:"keys,omitempty" json:"keys,omitempty"`
	// Work is each critical section's time range. Default 2ms-10ms.
	WorkMin time.Duration `yaml:"work_min,omitempty" json:"work_min,omitempty"`
	WorkMax time.Duration `yaml:"work_max,omitempty" json:"work_max,omitempty"`
	// CallTimeout bounds each Redis command and acquire attempt. Default 250ms.
	CallTimeout time.Duration `yaml:"call_timeout,omitempty" json:"call_timeout,omitempty"`
	// Fsync is the nodes' appendfsync policy when a fault needs an
	// append-only file: always (default) or everysec.
	Fsync string `yaml:"fsync,omitempty" json:"fsync,omitempty"`
	// Faults fire in turn: the first after FirstFault, then with gaps
	// drawn from [GapMin, GapMax].
	Faults     []faults.Spec `yaml:"faults,omitempty" json:"faults,omitempty"`
	FirstFault time.Duration `yaml:"first_fault,omitempty" json:"first_fault,omitempty"`
	GapMin     time.Duration `yaml:"gap_min,omitempty" json:"gap_min,omitempty"`
	GapMax     time.Duration `yaml:"gap_max,omitempty" json:"gap_max,omitempty"`
	// RecoverWithin is deadlock-free's bound: after a holder stops
	// (crashes, hangs, is cut off), another pod that keeps trying must
	// acquire its key within it. Default: twice the TTL plus the
	// workload's retry slack (history.DefaultRecoverWithin).
	RecoverWithin time.Duration `yaml:"recover_within,omitempty" json:"recover_within,omitempty"`
	// Floor changes the evidence floor for this scenario's cells (unset
	// fields keep the default: 3 exercised moments, 20 cycles, at most 50%
	// indefinite acquires).
	Floor FloorOverride `yaml:",inline" json:"floor,omitempty"`
	// Expect maps a lock name to its expectation; a lock not listed does
	// not run in this scenario. In YAML one word speaks of safety (token:
	// safe; liveness live), a mapping of both groups (no-ttl: {safety:
	// safe, liveness: stuck}), unsafe the only properties allowed to fail
	// (naive: {unsafe: [mutual-exclusion]}).
	Expect map[string]Expect `yaml:"expect" json:"expect"`
}

// WithDefaults fills zero fields.
func (s Scenario) WithDefaults() Scenario {
	if s.Topology == "" {
		s.Topology = deployment.Single
	}
	if s.TTL == 0 {
		s.TTL = lockimpl.DefaultTTL
	}
	if s.Duration == 0 {
		s.Duration = 2 * time.Second
	}
	if s.Clients == 0 {
		s.Clients = 8
	}
	if s.Keys == 0 {
		s.Keys = 1
	}
	if s.WorkMin == 0 && s.WorkMax == 0 {
		s.WorkMin, s.WorkMax = 2*time.Millisecond, 10*time.Millisecond
	}
	if s.CallTimeout == 0 {
		s.CallTimeout = 250 * time.Millisecond
	}
	if s.FirstFault == 0 {
		s.FirstFault = 100 * time.Millisecond
	}
	if s.GapMin == 0 && s.GapMax == 0 {
		s.GapMin, s.GapMax = 100*time.Millisecond, 250*time.Millisecond
	}
	return s
}

// Validate reports a scenario that cannot run.
func (s Scenario) Validate() error { return s.validate(nil) }

// validate is Validate with extra lock names taken as known (locks a file
// declares before they are registered).
func (s Scenario) validate(declared map[string]bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalid, s.Name, fmt.Sprintf(format, args...))
	}
	if s.Name == "" {
		return fmt.Errorf("%w: a scenario needs a name", ErrInvalid)
	}
	if !safename.Valid(s.Name) {
		// The name becomes a folder under --out (OUT/SCENARIO/LOCK).
		return bad("a scenario's name becomes its cells' folder: use %s", safename.Rule)
	}
	if err := (deployment.Config{Topology: s.Topology}).Validate(); err != nil {
		return bad("%v", err)
	}
	if err := (backend.NodeConfig{Fsync: s.Fsync}).Validate(); err != nil {
		return bad("%v", err)
	}
	for _, d := range []time.Duration{s.TTL, s.Duration, s.WorkMin, s.WorkMax, s.CallTimeout, s.FirstFault, s.GapMin, s.GapMax,
		s.RecoverWithin} {
		if d < 0 {
			return bad("negative duration")
		}
	}
	if s.Duration > MaxCellDuration {
		return bad("duration %v is more than the longest cell, %v", s.Duration, MaxCellDuration)
	}
	if err := s.checkLengths(); err != nil {
		return bad("%v", err)
	}
	if err := s.checkGaps(); err != nil {
		return bad("%v", err)
	}
	if s.TTL != 0 && s.TTL < 10*time.Millisecond {
		return bad("ttl %v is too short to mean anything on a loaded machine (min 10ms)", s.TTL)
	}
	if s.WorkMax < s.WorkMin {
		return bad("work_max %v below work_min %v", s.WorkMax, s.WorkMin)
	}
	if s.GapMax < s.GapMin {
		return bad("gap_max %v below gap_min %v", s.GapMax, s.GapMin)
	}
	if s.Clients < 0 || s.Clients > MaxClients || s.Keys < 0 || s.Keys > MaxKeys {
		return bad("clients must be 1..%d and keys 1..%d", MaxClients, MaxKeys)
	}
	for _, f := range s.Faults {
		if err := f.Validate(); err != nil {
			return bad("%v", err)
		}
	}
	if err := s.Floor.Validate(); err != nil {
		return bad("%v", err)
	}
	if len(s.Expect) == 0 {
		return bad("expect names no lock (valid: %s)", strings.Join(lockimpl.Names(), ", "))
	}
	for lock, e := range s.Expect {
		if _, err := lockimpl.Lookup(lock); err != nil && !declared[lock] {
			return bad("expect: %v", err)
		}
		if err := e.Validate(); err != nil {
			return bad("expect %s: %v", lock, err)
		}
	}
	return nil
}

// FloorOverride changes some fields of an evidence floor; unset (nil)
// fields keep the floor they are applied to.
type FloorOverride struct {
	MinExercised  *int     `yaml:"min_exercised,omitempty" json:"min_exercised,omitempty"`
	MinCycles     *int     `yaml:"min_cycles,omitempty" json:"min_cycles,omitempty"`
	MaxIndefinite *float64 `yaml:"max_indefinite,omitempty" json:"max_indefinite,omitempty"`
}

// Apply returns f with the override's set fields.
func (o FloorOverride) Apply(f history.Floor) history.Floor {
	if o.MinExercised != nil {
		f.MinExercised = *o.MinExercised
	}
	if o.MinCycles != nil {
		f.MinCycles = *o.MinCycles
	}
	if o.MaxIndefinite != nil {
		f.MaxIndefinite = *o.MaxIndefinite
	}
	return f
}

// Validate reports negative counts or a fraction outside [0, 1]; NaN is
// outside it too (no comparison with NaN is ever false, so the floor's
// own range check would let it through).
func (o FloorOverride) Validate() error {
	if m := o.MaxIndefinite; m != nil && math.IsNaN(*m) {
		return fmt.Errorf("evidence floor: max_indefinite NaN: want a share in [0, 1]")
	}
	return o.Apply(history.Floor{}).Validate()
}

// Limits shared by the command line and scenario files.
const (
	MaxClients = 256
	MaxKeys    = 1000
)

// needs is what the scenario's faults need of a cell, together.
func (s Scenario) needs() backend.Needs {
	var n backend.Needs
	for _, f := range s.Faults {
		k, err := faults.LookupKind(f.Kind)
		if err != nil {
			continue // Validate reports it
		}
		n.NodeControl = n.NodeControl || k.Needs.NodeControl
		n.Replica = n.Replica || k.Needs.Replica
		n.Nodes = max(n.Nodes, k.Needs.Nodes)
		n.Clock = n.Clock || k.Needs.Clock
		n.Persistence = n.Persistence || k.Needs.Persistence
		n.Sentinel = n.Sentinel || k.Needs.Sentinel
	}
	switch s.Topology {
	case deployment.PrimaryReplica:
		n.Replica = true
	case deployment.Sentinel:
		n.Sentinel = true
	}
	return n
}

// Scaled returns the scenario with every duration (the TTL and the
// faults' own sizes included) multiplied by k: a scenario at another TTL
// with the same shape (a margin searched at a user's production TTL).
func (s Scenario) Scaled(k float64) Scenario { return s.scaled(k) }

// scaled returns the scenario with every duration (the TTL and the
// faults' own sizes included) multiplied by k, so it keeps its shape on a
// slower machine or backend. Call timeouts grow by k too.
func (s Scenario) scaled(k float64) Scenario {
	if k == 1 {
		return s
	}
	for _, d := range []*time.Duration{&s.TTL, &s.Duration, &s.WorkMin, &s.WorkMax, &s.CallTimeout, &s.FirstFault, &s.GapMin, &s.GapMax,
		&s.RecoverWithin} {
		*d = time.Duration(float64(*d) * k)
	}
	fs := make([]faults.Spec, len(s.Faults))
	for i, f := range s.Faults {
		fs[i] = f.Scaled(k)
	}
	s.Faults = fs
	return s
}

// ms is shorthand for the catalog.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// expect maps each built-in Redis lock to its expectation in a scenario:
// one word (Safe) speaks of safety, with liveness live; andLive and
// andStuck (or an Expect) say both; nil leaves a lock out of it.
func expect(naive, token, watchdog, redlock, fenced results.Expecter) map[string]Expect {
	m := map[string]Expect{}
	for lock, e := range map[string]results.Expecter{lockimpl.NameNaive: naive, lockimpl.NameToken: token,
		lockimpl.NameTokenWatchdog: watchdog, lockimpl.NameRedlock: redlock, lockimpl.NameFenced: fenced} {
		if e != nil {
			m[lock] = e.Expected()
		}
	}
	return m
}

// andLive and andStuck pair a safety expectation with a liveness one.
func andLive(safety Expectation) Expect  { return Expect{Safety: safety, Liveness: Live} }
func andStuck(safety Expectation) Expect { return Expect{Safety: safety, Liveness: Stuck} }

// Catalog returns the built-in scenarios (DESIGN section 5), in order.
// Times are scaled down: a TTL of hundreds of milliseconds, cells of
// about two seconds, faults firing several times per cell.
func Catalog() []Scenario {
	baseline := expect(Safe, Safe, Safe, Safe, Safe)
	baseline[lockimpl.NameMutex] = andLive(Unsafe)
	// Cut off, a holder's release is lost (its connection does not
	// survive the partition): no-ttl's key stays for good, long-ttl's for
	// ten TTLs; the others' leases lapse within one.
	partition := lifetimeLocks(expect(Either, Either, Unsafe, Either, Safe), andStuck(Safe), andStuck(Safe))
	return append([]Scenario{
		{
			Name:        "baseline",
			Description: "no faults; work well under the TTL",
			Expect:      baseline,
		},
		{
			Name:        "slow-holder",
			Description: "some critical sections run past the TTL (1.5x)",
			Faults:      []faults.Spec{{Kind: "slow-holder"}},
			Expect:      expect(Unsafe, Unsafe, Safe, Unsafe, Safe),
		},
		{
			Name:        "gc-pause",
			Description: "a holder is frozen (stop-the-world) past the TTL (1.5x)",
			Faults:      []faults.Spec{{Kind: "client-pause"}},
			Expect:      expect(Unsafe, Unsafe, Unsafe, Unsafe, Safe),
		},
		{
			Name:        "slow-reply",
			Description: "the reply to a winning acquire arrives after the TTL (1.5x)",
			// The client must wait for the late reply rather than time out.
			CallTimeout: 2 * time.Second,
			Faults:      []faults.Spec{{Kind: "slow-reply"}},
			GapMin:      ms(20), GapMax: ms(80),
			Expect: expect(Unsafe, Unsafe, Unsafe, Safe, Safe),
		},
		{
			Name:        "client-partition",
			Description: "a holder is silently cut off from Redis during a long (2x TTL) critical section",
			Faults:      []faults.Spec{{Kind: "client-partition"}},
			Expect:      partition,
		},
		{
			Name:        "failover",
			Description: "the primary dies before replicating a fresh lock key; the replica is promoted",
			// Holders must still be working when the failover completes.
			WorkMin: ms(40), WorkMax: ms(120),
			Faults: []faults.Spec{{Kind: "failover"}},
			GapMin: ms(100), GapMax: ms(200),
			Expect: expect(Unsafe, Unsafe, Unsafe, NotApplicable, Either),
		},
		{
			Name:        "node-restart",
			Description: "Redlock nodes are killed in turn while a lock is held and restart empty at once",
			TTL:         ms(500),
			// Long enough that a holder still holds when a restart is done,
			// which takes several times longer on a busy machine.
			WorkMin: ms(100), WorkMax: ms(250),
			Faults: []faults.Spec{{Kind: "node-restart"}},
			GapMin: ms(10), GapMax: ms(40),
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Unsafe)},
		},
		{
			Name:        "node-restart-delayed",
			Description: "same, but each node stays down past the TTL before restarting empty",
			WorkMin:     ms(20), WorkMax: ms(60),
			Faults: []faults.Spec{{Kind: "node-restart-delayed"}},
			GapMin: ms(20), GapMax: ms(60),
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Safe)},
		},
		{
			Name:        "minority-partition",
			Description: "one of three Redlock nodes is unreachable (silently) for 4x TTL at a time",
			// Longer than fault-tolerant's bound (three call timeouts), so a
			// lock that needs every node is seen refusing everyone.
			Faults: []faults.Spec{{Kind: "minority-partition", Params: faults.MinorityPartitionParams{Duration: ms(1200)}}},
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Safe)},
		},
	}, livenessScenarios()...)
}

// Names lists the catalog's scenario names.
func Names(list []Scenario) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Name
	}
	return out
}

// Get returns the named catalog scenario, with defaults filled.
func Get(name string) (Scenario, error) {
	return find(Catalog(), name)
}

func find(list []Scenario, name string) (Scenario, error) {
	for _, s := range list {
		if s.Name == name {
			return s.WithDefaults(), nil
		}
	}
	names := Names(list)
	sort.Strings(names)
	return Scenario{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknownScenario, name, strings.Join(names, ", "))
}
