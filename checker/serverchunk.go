package checker

import (
	"slices"

	"github.com/lockchaos/lockchaos/history"
)

// spanning is what server-exclusive carries over a cut in a history read
// in chunks, beside the phantoms (phantomCarry): the leases whose end the
// chunk did not see. A lease spans a cut as a phantom does (a failover's
// replica keeps an old holder's value while the primary takes new ones),
// and only the next chunk's leases, and the next chunk's events that end
// it, tell whether it overlapped them, as a whole history would.
type spanning struct {
	// live are the witness events of each node's key that held such a
	// lease (any copy of its value), from the lease's write on.
	live []history.Event
	// again are the leases (server key and value) this chunk's view has
	// from earlier chunks, which judged them there: server-exclusive does
	// not count them, or their overlaps with each other, again. phantoms
	// are those of them phantom-lease carries to judge still.
	again, phantoms map[leaseID]bool
}

// leaseID names a lease across chunks: its value is a token, unique to it.
type leaseID struct{ serverKey, value string }

// slot is a server key on a node: it holds one value at a time.
type slot struct{ node, serverKey string }

// carriedIn is what a chunk's view starts from: the sight so far, the
// carried phantoms' events and the spanning leases' (once each).
func (p *phantomCarry) carriedIn() []history.Event {
	ws := append(slices.Clip(p.sight), p.pending...)
	p.again, p.phantoms = map[leaseID]bool{}, map[leaseID]bool{}
	pending := map[int64]bool{}
	for _, e := range p.pending {
		if e.Kind == history.Witness {
			pending[e.ID] = true
			p.again[leaseID{e.ServerKey(), e.Token}], p.phantoms[leaseID{e.ServerKey(), e.Token}] = true, true
		}
	}
	for _, e := range p.live {
		if !pending[e.ID] {
			ws = append(ws, e)
		}
		p.again[leaseID{e.ServerKey(), e.Token}] = true
	}
	return ws
}

// keepSpanning carries the leases whose end the chunk did not see: still
// live at its end, or ended by their deadline after the last thing the
// witness heard of their key (what it heard next was cut into the next
// chunk). Each is carried with every copy of its value and what followed
// each copy on its node, so the next chunk rebuilds them as they were.
func (p *phantomCarry) keepSpanning(v *history.ServerView, ws []history.Event) {
	last := map[string]int64{} // the latest act heard on each server key
	for _, e := range ws {
		if serverAct(e) {
			last[e.ServerKey()] = max(last[e.ServerKey()], e.Call)
		}
	}
	carry := map[leaseID]bool{}
	for _, l := range v.Leases {
		if l.Ended == history.LeaseLive || l.End > last[l.ServerKey] {
			carry[leaseID{l.ServerKey, l.Value}] = true
		}
	}
	from := map[slot]history.ServerLease{} // each slot's first copy carried
	for _, l := range v.Leases {
		s := slot{l.Node, l.ServerKey}
		if f, ok := from[s]; carry[leaseID{l.ServerKey, l.Value}] && (!ok || before(l.Set, l.SetOp, f.Set, f.SetOp)) {
			from[s] = l
		}
	}
	p.live = nil
	for _, e := range ws {
		if f, ok := from[slot{e.Node(), e.ServerKey()}]; ok && serverAct(e) && !before(e.Call, e.ID, f.Set, f.SetOp) {
			e.Window = e.Window.Clone() // the reader reuses the chunk's
			p.live = append(p.live, e)
		}
	}
}

// serverAct says e is something a node did to a key (not the witness's
// own sight).
func serverAct(e history.Event) bool {
	op := e.ServerOp()
	return e.Kind == history.Witness && op != history.WitnessWatches && op != history.WitnessBlind
}

// before orders events by call, then id.
func before(call, id, call2, id2 int64) bool {
	return call < call2 || call == call2 && id < id2
}

// carries says server-exclusive judged l in an earlier chunk (nil-safe:
// a whole history).
func (p *phantomCarry) carries(l lease) bool {
	return p != nil && p.again[leaseID{l.serverKey, l.value}]
}

// carriesHeld says l spans the cut and phantom-lease passed over it in an
// earlier chunk (a holder's value, or none of the lock's), rather than
// carrying it as a phantom still to judge.
func (p *phantomCarry) carriesHeld(l lease) bool {
	id := leaseID{l.serverKey, l.value}
	return p != nil && p.again[id] && !p.phantoms[id]
}
