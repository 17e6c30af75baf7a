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

// FormatVersion is written in every header; Load refuses other versions.
const FormatVersion = 1

// ErrMalformed is wrapped by every Load error that points at a line.
var ErrMalformed = errors.New("history: malformed")

// Kind is what an event records.
type Kind string

// Event kinds.
const (
	Acquire Kind = "acquire" // a lock attempt; ok carries token and fence
	Release Kind = "release" // ok: released; refused: not held
	Read    Kind = "read"    // resource read; Value is what it returned
	Write   Kind = "write"   // resource write; Value is what it wrote
	Renew   Kind = "renew"   // a watchdog renewal; refused: the key was no longer ours
	Lost    Kind = "lost"    // the lock told its holder the lease is gone (a point in time)
	Fault   Kind = "fault"   // a fault window: Call is its start, Return its end
)

var kinds = map[Kind]bool{Acquire: true, Release: true, Read: true, Write: true, Renew: true, Lost: true, Fault: true}

// Outcome says whether an operation happened.
type Outcome string

// Outcomes. Refused and Ok are definite; Indefinite means it may or may not
// have happened (a timeout, an I/O error, or no return recorded).
const (
	Ok         Outcome = "ok"
	Refused    Outcome = "refused"
	Indefinite Outcome = "indefinite"
)

// Event is one operation, its invocation and return merged.
type Event struct {
	ID      int64    `json:"op"`
	Kind    Kind     `json:"kind"`
	Client  int      `json:"client"` // -1 for faults
	Key     string   `json:"key,omitempty"`
	Token   string   `json:"token,omitempty"`
	Fence   uint64   `json:"fence,omitempty"`
	Value   int64    `json:"value,omitempty"`
	Call    int64    `json:"call"`   // ns since run start
	Return  int64    `json:"return"` // ns since run start; for a missing return, the history's end
	Outcome Outcome  `json:"outcome"`
	Err     string   `json:"error,omitempty"`
	Fault   string   `json:"fault,omitempty"`   // fault name, for Kind Fault
	Targets []string `json:"targets,omitempty"` // what a fault hit (links, nodes, clients)
	// Open is true when no return was recorded (the run ended or crashed
	// while the operation was in flight).
	Open bool `json:"open,omitempty"`
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
	// Extra holds free-form settings worth keeping with the history (TTL, backend...).
	Extra map[string]string `json:"extra,omitempty"`
}

// History is a whole run.
type History struct {
	Header Header
	Events []Event // ordered by invocation
	End    int64   // the latest time recorded (ns since start)
}

// Seconds renders a history time for people: "1.204 s".
func Seconds(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

// Validate checks one merged event for fields that cannot be right.
func (e Event) Validate() error {
	if !kinds[e.Kind] {
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	switch e.Outcome {
	case Ok, Refused, Indefinite:
	default:
		return fmt.Errorf("unknown outcome %q", e.Outcome)
	}
	if e.Call < 0 || e.Return < e.Call {
		return fmt.Errorf("times out of order: call %d, return %d", e.Call, e.Return)
	}
	if e.Kind != Fault && e.Client < 0 {
		return fmt.Errorf("%s without a client", e.Kind)
	}
	if e.Kind != Fault && e.Key == "" {
		return fmt.Errorf("%s without a key", e.Kind)
	}
	return nil
}
