package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/safename"
	"github.com/lockchaos/lockchaos/lockimpl"
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
	// NodeTimeout is cluster-node-timeout on the cluster topology: how long
	// a node must be silent before the others count it failing, and how
	// long a primary cut from the majority keeps taking writes. Default
	// 500ms, stretched with the cell's times.
	NodeTimeout time.Duration `yaml:"node_timeout,omitempty" json:"node_timeout,omitempty"`
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
	if err := s.checkTimes(); err != nil {
		return bad("%v", err)
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
	if err := s.checkExpect(declared); err != nil {
		return bad("%v", err)
	}
	return nil
}

// checkTimes reports a negative or out-of-range duration, a cell too long
// or too short for its faults, or a range upside down.
func (s Scenario) checkTimes() error {
	for _, d := range []time.Duration{s.TTL, s.Duration, s.WorkMin, s.WorkMax, s.CallTimeout, s.FirstFault, s.GapMin, s.GapMax,
		s.RecoverWithin, s.NodeTimeout} {
		if d < 0 {
			return errors.New("negative duration")
		}
	}
	if s.NodeTimeout != 0 && !s.needs().Cluster {
		return fmt.Errorf("node_timeout is cluster-node-timeout: it needs topology: cluster or a cluster fault")
	}
	if err := (deployment.ClusterConfig{NodeTimeout: s.NodeTimeout}).Validate(); err != nil {
		return err
	}
	if s.Duration > MaxCellDuration {
		return fmt.Errorf("duration %v is more than the longest cell, %v", s.Duration, MaxCellDuration)
	}
	if err := s.checkLengths(); err != nil {
		return err
	}
	if err := s.checkGaps(); err != nil {
		return err
	}
	if s.TTL != 0 && s.TTL < 10*time.Millisecond {
		return fmt.Errorf("ttl %v is too short to mean anything on a loaded machine (min 10ms)", s.TTL)
	}
	if s.WorkMax < s.WorkMin {
		return fmt.Errorf("work_max %v below work_min %v", s.WorkMax, s.WorkMin)
	}
	if s.GapMax < s.GapMin {
		return fmt.Errorf("gap_max %v below gap_min %v", s.GapMax, s.GapMin)
	}
	return nil
}

// checkExpect reports a scenario that expects nothing, or of a lock
// neither registered nor declared, or an expectation that cannot hold.
func (s Scenario) checkExpect(declared map[string]bool) error {
	if len(s.Expect) == 0 {
		return fmt.Errorf("expect names no lock (valid: %s)", strings.Join(lockimpl.Names(), ", "))
	}
	for lock, e := range s.Expect {
		if _, err := lockimpl.Lookup(lock); err != nil && !declared[lock] {
			return fmt.Errorf("expect: %w", err)
		}
		if err := e.Validate(); err != nil {
			return fmt.Errorf("expect %s: %w", lock, err)
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
		n.Cluster = n.Cluster || k.Needs.Cluster
	}
	switch s.Topology {
	case deployment.PrimaryReplica:
		n.Replica = true
	case deployment.Sentinel:
		n.Sentinel = true
	case deployment.Cluster:
		n.Cluster = true
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
		&s.RecoverWithin, &s.NodeTimeout} {
		*d = time.Duration(float64(*d) * k)
	}
	fs := make([]faults.Spec, len(s.Faults))
	for i, f := range s.Faults {
		fs[i] = f.Scaled(k)
	}
	s.Faults = fs
	return s
}
