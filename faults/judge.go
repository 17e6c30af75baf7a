package faults

import (
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Danger decides, from the recorded history alone, whether one window of
// a fault reached its kind's dangerous moment: the moment the lock under
// test must survive (a paused holder's lease expiring while another pod
// waits, a node coming back empty under a live lease...). It returns when
// the danger happened and a sentence saying what happened; ok false with
// a sentence saying why not. A verdict counts only when such moments
// happened (see checker's evidence floor): a fault that never bit proves
// nothing.
type Danger func(w history.Event, v *View) (at int64, detail string, ok bool)

// View is the history a Danger reads: events by call time, the TTL, and
// how many nodes the deployment had (0: unknown).
type View struct {
	Events []history.Event
	TTL    time.Duration
	Nodes  int
	// LockNodes is how many nodes the lock writes to (the header's; 0 or
	// 1: one), for a quorum lock's lease on the server; End is the
	// history's end.
	LockNodes int
	End       int64

	derived []hold              // the holds of Events, derived on first use
	srv     *history.ServerView // the server's side, derived on first use
	// lease is where the lease ends the danger being judged read came
	// from: assumed if any was.
	lease string
}

// Judgment is one fault window judged against its dangerous moment.
//
// Deprecated: use history.Judgment, the one type for a judged window.
type Judgment = history.Judgment

// Judge judges every closed fault window of h whose kind is registered
// and defines a dangerous moment.
func Judge(h *history.History, ttl time.Duration) []history.Judgment {
	v := &View{Events: history.ByCall(h), TTL: ttl, Nodes: h.Header.Nodes, LockNodes: h.Header.LockNodes, End: h.End}
	var out []history.Judgment
	for _, w := range v.Events {
		if w.Kind != history.Fault || w.Open {
			continue
		}
		k, err := LookupKind(w.Fault())
		if err != nil || k.Danger == nil {
			continue
		}
		v.lease = ""
		at, detail, ok := k.Danger(w, v)
		out = append(out, history.Judgment{Fault: w.Fault(), Window: w.ID, At: at, Exercised: ok, Detail: detail, Of: w,
			Lease: v.lease})
	}
	return out
}

// Record writes judgments into a history as Exercised points, so the
// checker and the reports see them from the file alone.
func Record(rec *history.Recorder, js []history.Judgment) {
	for _, j := range js {
		rec.Point(j.Event())
	}
}

// Append adds judgments to a history in memory as Exercised points at its
// end (a snapshot judged during a run, or a history read from a file that
// lacks them).
func Append(h *history.History, js []history.Judgment) {
	for _, j := range js {
		e := j.Event()
		e.ID, e.Call, e.Return = int64(len(h.Events)), h.End, h.End
		h.Events = append(h.Events, e)
	}
}
