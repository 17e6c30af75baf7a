package history

import (
	"slices"
	"strings"
)

// Judgment is one fault window judged against its kind's dangerous moment:
// what the faults package decides from a history and writes back into it
// as an Exercised event, and what the checker reads back from that event
// as evidence. One type for both ends, so the two cannot drift apart.
type Judgment struct {
	Fault  string `json:"fault"`
	Window int64  `json:"window"` // the fault window's op id
	// At is when the danger happened, as judged; on a judgment read back
	// from a history it is when the judgment was written (the Exercised
	// event's time: the file keeps the sentence, not the instant).
	At        int64  `json:"at"`
	Exercised bool   `json:"exercised"`
	Detail    string `json:"detail"`
	// Lease says where the lease end the judgment rests on came from:
	// LeaseObserved (a witness saw the server drop or replace the key),
	// LeaseAssumed (none could: the TTL from the acquire's return), or ""
	// (the danger does not depend on a lease's end).
	Lease string `json:"lease,omitempty"`
	// Of is the judged window itself (its targets and span), for writing
	// the judgment and deciding when it is due; empty on a judgment read
	// back from a history.
	Of Event `json:"-"`
}

// Event is the judgment as a history event: ok if the window reached its
// dangerous moment, refused if not; Value is the window's op id.
func (j Judgment) Event() Event {
	out := Refused
	if j.Exercised {
		out = Ok
	}
	targets := j.Of.Targets()
	if j.Lease != "" {
		targets = append(slices.Clip(targets), LeaseTarget+j.Lease)
	}
	return Event{Kind: Exercised, Client: -1, Value: j.Window, Outcome: out,
		Window: NewWindow(j.Fault, targets, j.Detail)}
}

// LeaseTarget prefixes, among a judgment's targets, where its lease end
// came from.
const LeaseTarget = "lease="

// Where a judgment's lease end came from (Judgment.Lease).
const (
	LeaseObserved = "observed"
	LeaseAssumed  = "assumed"
)

// JudgmentOf reads a judgment back from an Exercised event.
func JudgmentOf(e Event) Judgment {
	j := Judgment{Fault: e.Fault(), Window: e.Value, At: e.Call, Exercised: e.Outcome == Ok, Detail: e.Detail()}
	for _, t := range e.Targets() {
		if l, ok := strings.CutPrefix(t, LeaseTarget); ok {
			j.Lease = l
		}
	}
	return j
}
