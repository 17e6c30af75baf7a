// Package scenarios is the matrix as data: each scenario names a topology,
// a workload scaled to seconds, a fault schedule, and what each lock is
// expected to do under it. The runner builds a cell (its own nodes, links
// and clients), runs it, checks the history and compares the verdict with
// the expectation.
package scenarios

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/workload"
)

// Expectation is what a cell must show.
type Expectation string

// Expectations.
const (
	// Safe cells must pass every run: a failure is a regression.
	Safe Expectation = "safe"
	// Unsafe cells must be detected: a pass means the harness missed a
	// known bug.
	Unsafe Expectation = "unsafe"
	// Either is reported, not gated.
	Either Expectation = "either"
	// NotApplicable cells are listed but not run (the lock cannot run on
	// the scenario's topology).
	NotApplicable Expectation = "n/a"
)

// Sentinel errors.
var (
	ErrUnknownScenario = errors.New("scenarios: unknown scenario")
	ErrInvalid         = errors.New("scenarios: invalid scenario")
)

// Scenario is one row of the matrix.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Topology for single-node locks; redlock always runs on three
	// independent nodes. Default single.
	Topology faults.Topology `yaml:"topology,omitempty" json:"topology,omitempty"`
	// TTL of every lock in the cell. Default 300ms.
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
	// Faults fire in turn: the first after FirstFault, then with gaps
	// drawn from [GapMin, GapMax].
	Faults     []faults.Spec `yaml:"faults,omitempty" json:"faults,omitempty"`
	FirstFault time.Duration `yaml:"first_fault,omitempty" json:"first_fault,omitempty"`
	GapMin     time.Duration `yaml:"gap_min,omitempty" json:"gap_min,omitempty"`
	GapMax     time.Duration `yaml:"gap_max,omitempty" json:"gap_max,omitempty"`
	// Expect maps a lock name to its expectation; a lock not listed does
	// not run in this scenario.
	Expect map[string]Expectation `yaml:"expect" json:"expect"`
}

// WithDefaults fills zero fields.
func (s Scenario) WithDefaults() Scenario {
	if s.Topology == "" {
		s.Topology = faults.Single
	}
	if s.TTL == 0 {
		s.TTL = 300 * time.Millisecond
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
func (s Scenario) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalid, s.Name, fmt.Sprintf(format, args...))
	}
	if s.Name == "" {
		return fmt.Errorf("%w: a scenario needs a name", ErrInvalid)
	}
	if err := (faults.ClusterConfig{Topology: s.Topology}).Validate(); err != nil {
		return bad("%v", err)
	}
	for _, d := range []time.Duration{s.TTL, s.Duration, s.WorkMin, s.WorkMax, s.CallTimeout, s.FirstFault, s.GapMin, s.GapMax} {
		if d < 0 {
			return bad("negative duration")
		}
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
	if s.Clients < 0 || s.Clients > 256 || s.Keys < 0 || s.Keys > 1000 {
		return bad("clients must be 1..256 and keys 1..1000")
	}
	for _, f := range s.Faults {
		if err := f.Validate(); err != nil {
			return bad("%v", err)
		}
	}
	if len(s.Expect) == 0 {
		return bad("expect names no lock (valid: %s)", strings.Join(lockimpl.Names(), ", "))
	}
	for lock, e := range s.Expect {
		if !validLock(lock) {
			return bad("expect: %v", fmt.Errorf("%w %q (valid: %s)", lockimpl.ErrUnknownLock, lock, strings.Join(lockimpl.Names(), ", ")))
		}
		switch e {
		case Safe, Unsafe, Either, NotApplicable:
		default:
			return bad("expect %s: %q is not one of safe, unsafe, either, n/a", lock, e)
		}
	}
	return nil
}

func validLock(name string) bool {
	for _, n := range lockimpl.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Locks returns the locks the scenario runs (or lists), in catalog order.
func (s Scenario) Locks() []string {
	var out []string
	for _, n := range lockimpl.Names() {
		if _, ok := s.Expect[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// nodeControl reports whether the scenario kills or promotes nodes.
func (s Scenario) nodeControl() bool {
	for _, f := range s.Faults {
		switch f.Kind {
		case "node-restart", "node-restart-delayed", "failover":
			return true
		}
	}
	return s.Topology == faults.PrimaryReplica
}

// scaledFor stretches the times of a scenario that kills nodes when the
// backend's node operations are slow (containers): a holder must still be
// holding when a kill or a failover completes, as it is with processes.
// The scale is the backend's node-operation time over a process's, capped
// at six; every duration, the TTL included, grows by it, so the
// scenario's shape (and its expectations) stay the same.
func (s Scenario) scaledFor(b faults.Backend) Scenario {
	if !s.nodeControl() {
		return s
	}
	k := min(float64(b.NodeOpTime())/float64(10*time.Millisecond), 6)
	if k <= 1 {
		return s
	}
	scale := func(d *time.Duration) { *d = time.Duration(float64(*d) * k) }
	for _, d := range []*time.Duration{&s.TTL, &s.Duration, &s.WorkMin, &s.WorkMax, &s.FirstFault, &s.GapMin, &s.GapMax} {
		scale(d)
	}
	s.CallTimeout = max(s.CallTimeout, time.Duration(float64(s.CallTimeout)*k/2))
	return s
}

// topologyFor returns the topology a lock runs on in this scenario.
func (s Scenario) topologyFor(lock string) faults.Topology {
	if lock == lockimpl.NameRedlock {
		return faults.Independent
	}
	return s.Topology
}

// workloadConfig is the scenario's workload for one run.
func (s Scenario) workloadConfig(seed int64) workload.Config {
	keys := make([]string, s.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("order:%d", i+1)
	}
	return workload.Config{
		Clients: s.Clients, Keys: keys, Duration: s.Duration,
		AcquireTimeout: s.CallTimeout, ReleaseTimeout: s.CallTimeout,
		Work: workload.Dist{Min: s.WorkMin, Max: s.WorkMax}, Seed: seed,
	}
}

// ms is shorthand for the catalog.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// allRedis gives every Redis lock the same expectation.
func expect(naive, token, watchdog, redlock, fenced Expectation) map[string]Expectation {
	m := map[string]Expectation{}
	for lock, e := range map[string]Expectation{lockimpl.NameNaive: naive, lockimpl.NameToken: token,
		lockimpl.NameTokenWatchdog: watchdog, lockimpl.NameRedlock: redlock, lockimpl.NameFenced: fenced} {
		if e != "" {
			m[lock] = e
		}
	}
	return m
}

// Catalog returns the built-in scenarios (DESIGN section 5), in order.
// Times are scaled down: a TTL of hundreds of milliseconds, cells of
// about two seconds, faults firing several times per cell.
func Catalog() []Scenario {
	baseline := expect(Safe, Safe, Safe, Safe, Safe)
	baseline[lockimpl.NameMutex] = Unsafe
	return []Scenario{
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
			Expect:      expect(Either, Either, Unsafe, Either, Safe),
		},
		{
			Name:        "failover",
			Description: "the primary dies before replicating a fresh lock key; the replica is promoted",
			Topology:    faults.PrimaryReplica,
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
			WorkMin:     ms(60), WorkMax: ms(150),
			Faults: []faults.Spec{{Kind: "node-restart"}},
			GapMin: ms(10), GapMax: ms(40),
			Expect: map[string]Expectation{lockimpl.NameRedlock: Unsafe},
		},
		{
			Name:        "node-restart-delayed",
			Description: "same, but each node stays down past the TTL before restarting empty",
			WorkMin:     ms(20), WorkMax: ms(60),
			Faults: []faults.Spec{{Kind: "node-restart-delayed"}},
			GapMin: ms(20), GapMax: ms(60),
			Expect: map[string]Expectation{lockimpl.NameRedlock: Safe},
		},
		{
			Name:        "minority-partition",
			Description: "one of three Redlock nodes is unreachable (silently) for 2x TTL at a time",
			Faults:      []faults.Spec{{Kind: "minority-partition"}},
			Expect:      map[string]Expectation{lockimpl.NameRedlock: Safe},
		},
	}
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
