package history

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
	// Of is the judged window itself (what it hit and its span), for writing
	// the judgment and deciding when it is due; empty on a judgment read
	// back from a history.
	Of Event `json:"-"`
}

// Event is the judgment as a history event: a point whose Judged
// payload carries the verdict, the window's id and where the lease end
// came from, beside the window's kind and what it hit.
func (j Judgment) Event() Event {
	w := FaultWindow(j.Fault, j.Of.Hit())
	w.Judgment = &Judged{Window: j.Window, Exercised: j.Exercised, Lease: j.Lease, Detail: j.Detail}
	return Event{Kind: Exercised, Client: -1, Outcome: Ok, Window: w}
}

// Where a judgment's lease end came from (Judgment.Lease).
const (
	LeaseObserved = "observed"
	LeaseAssumed  = "assumed"
)

// JudgmentOf reads a judgment back from an Exercised event.
func JudgmentOf(e Event) Judgment {
	d := e.Judged()
	return Judgment{Fault: e.Fault(), Window: d.Window, At: e.Call, Exercised: d.Exercised, Detail: d.Detail, Lease: d.Lease}
}
