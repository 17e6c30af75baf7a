// Package checker decides whether a recorded history kept its promises.
//
// Six properties are checked, each into a Result value (never an error);
// the first four are safety, the last two liveness (Property.Group):
//
//   - mutual-exclusion: no two clients' believed-held intervals on one key
//     overlap. The formal verdict is porcupine with a lock model over each
//     key's successful acquires and hold ends; an interval sweep explains
//     every overlapping pair. The two must agree; if they ever do not, the
//     result is unknown and says so.
//   - resource-linearizable: porcupine with a counter model over the
//     protected resource's reads and writes, partitioned by key. A lost
//     update is a violation; a search that runs out of budget is unknown.
//   - foreign-release: a release that removed a lock another client held.
//   - fence-order: the resource never accepted a fence lower than one it
//     had accepted (counted only where the resource checks fences).
//   - deadlock-free: after a holder stopped (crashed, hung, cut off: a
//     history.Hit.StopsHolder window), another pod that kept trying got the
//     key within the recovery bound.
//   - fault-tolerant: while a majority of the lock's nodes was up (some
//     taken down: history.Hit.Down windows) and a key was free, the
//     pods that tried got it within the acquire bound.
//
// A liveness property judges only moments that happened (a holder
// stopped while another pod tried; a pod tried with a majority up): with
// none, it passes with Judged 0 and a note saying so.
//
// Large histories are cut at quiescent points (no operation in flight on
// the key) and the segments are checked in order with the model state
// carried across each cut, which keeps porcupine's memory bounded by the
// longest stretch of concurrency instead of the history's length.
package checker

import (
	"errors"
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// Status is a property's verdict.
type Status string

// Statuses. Unknown is never a pass: the checker could not decide.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Unknown Status = "unknown"
)

// Property names a checked property.
type Property string

// Properties.
const (
	MutualExclusion      Property = "mutual-exclusion"
	ResourceLinearizable Property = "resource-linearizable"
	ForeignRelease       Property = "foreign-release"
)

// Sentinel errors returned by Result.Err.
var (
	ErrViolation    = errors.New("checker: violation")
	ErrInconclusive = errors.New("checker: inconclusive")
)

// Violation is one piece of evidence, explained in one plain sentence.
type Violation struct {
	Property Property `json:"property"`
	Key      string   `json:"key"`
	Clients  []int    `json:"clients"`
	Events   []int64  `json:"events"` // op ids of the events involved
	At       int64    `json:"at"`     // when it became visible (ns since start)
	Start    int64    `json:"start"`  // the window it spans
	End      int64    `json:"end"`
	Summary  string   `json:"summary"`
}

// Result is one property's verdict with its evidence.
type Result struct {
	Property Property `json:"property"`
	Status   Status   `json:"status"`
	// Decisive is false when the result is shown but does not count toward
	// the cell verdict (mutual-exclusion for a fenced lock, where only the
	// resource's check decides).
	Decisive bool `json:"decisive"`
	// Judged is how many moments a liveness property judged (a stopped
	// holder, a node-down window); 0 with a pass means nothing happened
	// that it could judge.
	Judged         int         `json:"judged,omitempty"`
	Violations     []Violation `json:"violations,omitempty"` // up to Options.MaxViolations
	ViolationCount int         `json:"violation_count"`
	Note           string      `json:"note,omitempty"`
	// Settled are apparent violations the server's view showed were
	// none, each in a sentence (foreign-release: a release that deleted
	// the releaser's own late SET).
	Settled        []string      `json:"settled,omitempty"`
	Elapsed        time.Duration `json:"elapsed_ns"`
	Operations     int           `json:"operations"`
	Segments       int           `json:"segments,omitempty"`
	LargestSegment int           `json:"largest_segment,omitempty"`

	// Model and Info feed porcupine's visualization (reports). Info covers
	// the whole history when it is small, else the failing segments.
	Model *porcupine.Model             `json:"-"`
	Info  *porcupine.LinearizationInfo `json:"-"`

	// marks are every violation counted, for the incidents' counts.
	marks []mark
}

// Err turns a result into an error: nil on pass.
func (r Result) Err() error {
	switch r.Status {
	case Pass:
		return nil
	case Fail:
		return fmt.Errorf("%w: %s: %d violation(s)", ErrViolation, r.Property, r.ViolationCount)
	}
	return fmt.Errorf("%w: %s: %s", ErrInconclusive, r.Property, r.Note)
}

// Report is everything the checker says about one history.
type Report struct {
	Lock string `json:"lock"`
	// Backend and Simulated are the history's: a verdict on a simulated
	// history (virtual time, miniredis) says so wherever it is shown.
	Backend   string   `json:"backend,omitempty"`
	Simulated bool     `json:"simulated,omitempty"`
	Verdict   Status   `json:"verdict"`
	Results   []Result `json:"results"`
	Stats     Stats    `json:"stats"`
	Evidence  Evidence `json:"evidence"`
	// Liveness is what the history shows of the lock's liveness.
	Liveness Liveness `json:"liveness"`
	// Incidents group the violations by cause, first to last.
	Incidents []Incident `json:"incidents,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`

	// Holds are the believed-held intervals the checks ran on, kept for the
	// report's timeline.
	Holds []Hold `json:"-"`
}

// Result returns the named property's result, or nil.
func (r *Report) Result(p Property) *Result {
	for i := range r.Results {
		if r.Results[i].Property == p {
			return &r.Results[i]
		}
	}
	return nil
}

// Verdict combines decisive results: fail if any failed, else unknown if
// any is unknown, else pass.
func Verdict(results []Result) Status {
	v := Pass
	for _, r := range results {
		if !r.Decisive {
			continue
		}
		switch r.Status {
		case Fail:
			return Fail
		case Unknown:
			v = Unknown
		}
	}
	return v
}
