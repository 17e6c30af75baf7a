// Package history is the record of a run: every acquire, release, access to
// the protected resource, renewal, lost-lease signal and fault window, timed
// on one monotonic clock (nanoseconds since the run started).
//
// On disk a history is JSONL: a header line, then one line when an
// operation is invoked and one when it returns (as Jepsen does). Writing the
// invocation first means a run that crashes still leaves a checkable
// history: an operation with no return line is loaded as indefinite (it may
// or may not have happened), never silently dropped.
package history

import (
	"errors"
	"fmt"
	"time"
)

// FormatVersion is written in every header. Load reads it and versions 1
// (before evidence events), 2 (before abandon events and the liveness
// bounds), 3 (before witness events) and 4 (windows, judgments, probes
// and witness events as strings: legacy.go), and refuses others.
const FormatVersion = 5

// ErrMalformed is wrapped by every Load error that points at a line.
var ErrMalformed = errors.New("history: malformed")

// Kind is what an event records. It is one byte in memory (a history of
// ten million events holds ten million of them) and its name on disk.
type Kind uint8

// Event kinds.
const (
	Acquire Kind = iota + 1 // a lock attempt; ok carries token and fence
	Release                 // ok: released; refused: not held
	Read                    // resource read; Value is what it returned
	Write                   // resource write; Value is what it wrote
	Renew                   // a watchdog renewal; refused: the key was no longer ours
	Lost                    // the lock told its holder the lease is gone (a point in time)
	Fault                   // a fault window: Call is its start, Return its end
	// Exercised judges one fault window against its kind's dangerous
	// moment (a point): its Judged payload says whether the danger
	// happened, which window, and what happened in words.
	Exercised
	// Probe is a fact a fault observed on a node (a point, its Probed
	// payload): whether Key exists there, and its value.
	Probe
	// Abandon is a holder that will never release its lease (a point):
	// its pod crashed (Err Crashed) or its worker hung (Err Abandoned)
	// while holding Key. Its belief of holding ends here, as at a Lost
	// signal: a dead or hung holder never touches the resource again, so a
	// later holder is no overlap with it. What the lock does on the server
	// afterwards is what the liveness properties judge.
	Abandon
	// Witness is what the server did to a lock key, as the witness on
	// its node saw it (a point; see witness.go): Key is the workload's
	// key, Token the value on the server, its ServerAct payload the
	// node, the act and the key's deadline on this clock.
	Witness
)

// Why a holder abandoned its lease (an Abandon event's Err).
const (
	Crashed   = "crashed"   // the pod died (pod-crash)
	Abandoned = "abandoned" // the worker hung, its process lives on (abandoned-lease)
)

var kindNames = [...]string{"", "acquire", "release", "read", "write", "renew", "lost", "fault", "exercised", "probe", "abandon", "witness"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("history: unknown kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name and refuses any other word.
func (k *Kind) UnmarshalText(b []byte) error {
	v, ok := ParseKind(string(b))
	if !ok {
		return fmt.Errorf("unknown kind %q (want one of %v)", b, kindNames[1:])
	}
	*k = v
	return nil
}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if i > 0 && n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

func (k Kind) valid() bool { return k > 0 && int(k) < len(kindNames) }

// clientless kinds are recorded with Client -1.
func clientless(k Kind) bool { return k == Fault || k == Exercised || k == Probe || k == Witness }

// Outcome says whether an operation happened (one byte in memory, its
// name on disk).
type Outcome uint8

// Outcomes. Refused and Ok are definite; Indefinite means it may or may not
// have happened (a timeout, an I/O error, or no return recorded).
const (
	Ok Outcome = iota + 1
	Refused
	Indefinite
)

var outcomeNames = [...]string{"", "ok", "refused", "indefinite"}

func (o Outcome) String() string {
	if o.valid() {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) {
	if !o.valid() {
		return nil, fmt.Errorf("history: unknown outcome %d", uint8(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText reads an outcome's name and refuses any other word.
func (o *Outcome) UnmarshalText(b []byte) error {
	v, ok := ParseOutcome(string(b))
	if !ok {
		return fmt.Errorf("unknown outcome %q (want one of %v)", b, outcomeNames[1:])
	}
	*o = v
	return nil
}

// ParseOutcome returns the outcome named s.
func ParseOutcome(s string) (Outcome, bool) {
	for i, n := range outcomeNames {
		if i > 0 && n == s {
			return Outcome(i), true
		}
	}
	return 0, false
}

func (o Outcome) valid() bool { return o > 0 && int(o) < len(outcomeNames) }

// Event is one operation, its invocation and return merged.
type Event struct {
	ID   int64 `json:"op"`
	Kind Kind  `json:"kind"`
	// Outcome and Open sit beside Kind: three bytes in one word, where
	// apart they cost a word each on every event.
	Outcome Outcome `json:"outcome"`
	// Open is true when no return was recorded (the run ended or crashed
	// while the operation was in flight).
	Open   bool   `json:"open,omitempty"`
	Client int    `json:"client"` // -1 for faults
	Key    string `json:"key,omitempty"`
	Token  string `json:"token,omitempty"`
	Fence  uint64 `json:"fence,omitempty"`
	// Value is the protected resource's value a Read returned or a
	// Write wrote; 0 on every other kind (a judgment's window, a probe's
	// find and a witness's deadline are in their payloads).
	Value  int64  `json:"value,omitempty"`
	Call   int64  `json:"call"`   // ns since run start
	Return int64  `json:"return"` // ns since run start; for a missing return, the history's end
	Err    string `json:"error,omitempty"`
	// Window holds what only fault windows, judgments, probes and
	// witness events carry (window.go); nil on operations. Read it
	// through Fault, Hit, Judged, Probed and ServerAct (nil-safe).
	*Window
}

// Header is the first line of a history file.
type Header struct {
	Format   int       `json:"format"`
	Scenario string    `json:"scenario"`
	Lock     string    `json:"lock"`
	Seed     int64     `json:"seed"`
	Start    time.Time `json:"start"` // wall clock at the run's zero
	Clients  int       `json:"clients,omitempty"`
	Keys     []string  `json:"keys,omitempty"`
	// Fencing is the protected resource's mode: "off", "writes" or
	// "reads-and-writes". It, not the lock's name, decides whether
	// overlapping holds count against the lock.
	Fencing string `json:"fencing,omitempty"`
	// InProcess says the lock keeps no shared state (a mutex per pod): a
	// release cannot remove anyone else's lock.
	InProcess bool `json:"in_process,omitempty"`
	// Nodes is how many Redis nodes the deployment had.
	Nodes int `json:"nodes,omitempty"`
	// Faults are the fault kinds the cell scheduled (none: a baseline).
	Faults []string `json:"faults,omitempty"`
	// TTL is the cell's lease time, for the evidence rules.
	TTL time.Duration `json:"ttl_ns,omitempty"`
	// LockNodes is how many nodes the lock writes to (its Spec.Nodes:
	// 1 for one service address, N for N independent primaries), for
	// fault-tolerant's majority; 0: unknown.
	LockNodes int `json:"lock_nodes,omitempty"`
	// RecoverWithin is deadlock-free's recovery bound: after a holder
	// stops (crash, hang, partition), another pod that keeps trying
	// must acquire the key within it. 0: the checker's default,
	// DefaultRecoverWithin.
	RecoverWithin time.Duration `json:"recover_within_ns,omitempty"`
	// AcquireWithin is fault-tolerant's bound: while a majority of the
	// lock's nodes is up and nobody holds the key, pods that try must
	// get it within it. 0: the checker's default.
	AcquireWithin time.Duration `json:"acquire_within_ns,omitempty"`
	// Floor is the evidence a pass needs (nil: the checker's default).
	Floor *Floor `json:"floor,omitempty"`
	// Backend names what ran Redis ("process", "docker", "external",
	// "sim"); Simulated says the history was recorded in a simulation, in
	// virtual time, not on real Redis.
	Backend   string `json:"backend,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
	// Extra holds free-form settings worth keeping with the history (TTL, backend...).
	Extra map[string]string `json:"extra,omitempty"`
}

// Floor is the evidence below which a pass is no verdict: the dangerous
// moments the faults must have reached, the cycles the pods must have
// completed, and the share of acquires that may have timed out.
type Floor struct {
	MinExercised int `json:"min_exercised" yaml:"min_exercised"`
	MinCycles    int `json:"min_cycles" yaml:"min_cycles"`
	// MaxIndefinite is a fraction of all acquires, 0..1.
	MaxIndefinite float64 `json:"max_indefinite" yaml:"max_indefinite"`
}

// DefaultFloor is the floor every cell has unless told otherwise.
var DefaultFloor = Floor{MinExercised: 3, MinCycles: 20, MaxIndefinite: 0.5}

// Validate reports a floor that cannot mean anything.
func (f Floor) Validate() error {
	if f.MinExercised < 0 || f.MinCycles < 0 || f.MaxIndefinite < 0 || f.MaxIndefinite > 1 {
		return fmt.Errorf("evidence floor %+v: counts must not be negative and max_indefinite must be in [0, 1]", f)
	}
	return nil
}

// History is a whole run.
type History struct {
	Header Header
	Events []Event // ordered by invocation
	End    int64   // the latest time recorded (ns since start)
}

// Seconds renders a history time for people: "1.204 s".
func Seconds(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

// Span renders a duration as every sentence about a history writes it:
// "660 ms", "1.590 s"; below a millisecond in µs or ns (a history built by
// hand may count in nanoseconds).
func Span(d time.Duration) string {
	// Each case tests the value as it will be printed, so 999.6 ms
	// reads "1.000 s", never "1000 ms".
	switch {
	case d.Round(time.Millisecond) >= time.Second:
		return fmt.Sprintf("%.3f s", d.Seconds())
	case d.Round(time.Millisecond) >= time.Millisecond:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	case d.Round(time.Microsecond) >= time.Microsecond:
		return fmt.Sprintf("%d µs", d.Round(time.Microsecond).Microseconds())
	}
	return fmt.Sprintf("%d ns", d.Nanoseconds())
}

// Validate checks one merged event for fields that cannot be right.
func (e Event) Validate() error {
	if !e.Kind.valid() {
		return fmt.Errorf("unknown kind %v", e.Kind)
	}
	if !e.Outcome.valid() {
		return fmt.Errorf("unknown outcome %v", e.Outcome)
	}
	if e.Call < 0 || e.Return < e.Call {
		return fmt.Errorf("times out of order: call %d, return %d", e.Call, e.Return)
	}
	if !clientless(e.Kind) && e.Client < 0 {
		return fmt.Errorf("%s without a client", e.Kind)
	}
	if !clientless(e.Kind) && e.Key == "" {
		return fmt.Errorf("%s without a key", e.Kind)
	}
	if e.Kind == Witness && e.ServerAct().Node == "" {
		return fmt.Errorf("witness event without a node")
	}
	return nil
}
