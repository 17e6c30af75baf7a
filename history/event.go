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
	"slices"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is written in every header. Load reads it and versions 1
// (before evidence events), 2 (before abandon events and the liveness
// bounds) and 3 (before witness events), and refuses others.
const FormatVersion = 4

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
	// moment (a point): ok if the danger happened, refused if not; Value
	// is the window's op id, Detail says what happened in words.
	Exercised
	// Probe is a fact a fault observed on a node (a point): Key exists
	// there when Value is 1, is missing when 0.
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
	// key, Token the value on the server, Value the key's deadline on
	// this clock (0: none), the targets the node (and the server's name
	// for the key when it differs), Detail the server's act.
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
	Value  int64  `json:"value,omitempty"`
	Call   int64  `json:"call"`   // ns since run start
	Return int64  `json:"return"` // ns since run start; for a missing return, the history's end
	Err    string `json:"error,omitempty"`
	// Window holds what only fault windows, judgments and probes carry;
	// nil on operations, so a million of them do not each carry 56 empty
	// bytes. Read it through Fault, Targets and Detail (nil-safe).
	*Window
}

// Window is the part of an event only fault windows (Kind Fault),
// judgments (Exercised) and probes fill in.
type Window struct {
	Fault   string   `json:"fault,omitempty"`   // fault name, for Kind Fault
	Targets []string `json:"targets,omitempty"` // what a fault hit (links, nodes, clients)
	Detail  string   `json:"detail,omitempty"`  // a plain sentence (exercised judgments)
}

// NewWindow returns a Window, or nil when every field is empty (an
// operation's).
func NewWindow(fault string, targets []string, detail string) *Window {
	if fault == "" && len(targets) == 0 && detail == "" {
		return nil
	}
	return &Window{Fault: fault, Targets: targets, Detail: detail}
}

// Fault is the fault's name ("" for operations).
func (e Event) Fault() string {
	if e.Window == nil {
		return ""
	}
	return e.Window.Fault
}

// Targets is what a fault hit ("" for operations).
func (e Event) Targets() []string {
	if e.Window == nil {
		return nil
	}
	return e.Window.Targets
}

// Prefixes of the targets a window carries a duration in.
const (
	DelayTarget   = "delay="   // slow-reply: how long replies were held back
	JumpTarget    = "jump="    // clock faults: how far a node's clock moved
	RestartTarget = "restart=" // pod-crash: how long the pod stayed dead before it restarted
)

// Targets that say what a window did to the lock's liveness; the checker
// reads them (it never imports the fault kinds).
const (
	// StopsHolder marks a window after whose start the targeted pod
	// ("clientN") can no longer release the lock it held then (a crash, a
	// hung worker, a partition): deadlock-free is judged from the
	// window's start.
	StopsHolder = "stops-holder"
	// AbandonsTarget marks a StopsHolder window that stops its pod
	// through an Abandon event (a crash, a hang): deadlock-free is judged
	// from that event, for the hold it abandoned, which may begin after
	// the window opened (a hung worker abandons its next lease).
	AbandonsTarget = "abandons"
	// DownTarget prefixes a lock node taken from every pod for the
	// window ("down=node1": killed, or cut off from all): fault-tolerant
	// is judged while a majority of the lock's nodes is still up.
	DownTarget = "down="
)

// StoppedHolder returns the pod a StopsHolder window stopped.
func (e Event) StoppedHolder() (int, bool) {
	if e.Kind != Fault || !slices.Contains(e.Targets(), StopsHolder) {
		return 0, false
	}
	for _, t := range e.Targets() {
		if n, ok := strings.CutPrefix(t, "client"); ok && !strings.Contains(n, "->") {
			if i, err := strconv.Atoi(n); err == nil {
				return i, true
			}
		}
	}
	return 0, false
}

// DownNodes returns the lock nodes a window took from every pod.
func (e Event) DownNodes() []string {
	var out []string
	for _, t := range e.Targets() {
		if n, ok := strings.CutPrefix(t, DownTarget); ok {
			out = append(out, n)
		}
	}
	return out
}

// TargetDuration reads a duration a window carries among its targets as
// prefix+duration ("delay=450ms", "jump=-600ms"); ok false when it has
// none.
func (e Event) TargetDuration(prefix string) (time.Duration, bool) {
	for _, t := range e.Targets() {
		if d, ok := strings.CutPrefix(t, prefix); ok {
			if dur, err := time.ParseDuration(d); err == nil {
				return dur, true
			}
		}
	}
	return 0, false
}

// Detail is a judgment's sentence ("" for operations).
func (e Event) Detail() string {
	if e.Window == nil {
		return ""
	}
	return e.Window.Detail
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
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	case d >= time.Microsecond:
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
	if e.Kind == Witness && len(e.Targets()) == 0 {
		return fmt.Errorf("witness event without a node")
	}
	return nil
}
