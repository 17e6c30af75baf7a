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
	return Event{Kind: Exercised, Client: -1, Value: j.Window, Outcome: out,
		Window: NewWindow(j.Fault, j.Of.Targets(), j.Detail)}
}

// JudgmentOf reads a judgment back from an Exercised event.
func JudgmentOf(e Event) Judgment {
	return Judgment{Fault: e.Fault(), Window: e.Value, At: e.Call, Exercised: e.Outcome == Ok, Detail: e.Detail()}
}
