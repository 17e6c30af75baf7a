package checker

import (
	"cmp"
	"slices"

	"github.com/lockchaos/lockchaos/history"
)

// phantomCarry is what the server-side properties carry over a cut in a
// history read in chunks. A phantom's key is quiet by belief (nobody
// holds it, nothing in flight), so a cut often falls inside one: the
// phantoms still on the server at a chunk's end are not judged there but
// carried, with the witness and acquire events that judge them, into the
// next chunk, and judged where they end (or at the file's end), as a
// whole history would judge them.
type phantomCarry struct {
	lockKeys map[string]bool // server keys a holder's token was written to
	// sight are the witness's watching and blind events so far: a chunk
	// after the first has none of its own for a node watched since the
	// start, and would read as unwatched.
	sight []history.Event
	// pending are the witness and acquire events of the phantoms still
	// live at the last cut, by call.
	pending  []history.Event
	spanning // the other leases that span a cut (serverchunk.go)
	hdr      history.Header
}

// view is a chunk's server view: its witness events, the sight so far,
// the carried phantoms' writes and the other leases carried over the cut.
func (p *phantomCarry) view(evs []history.Event, end int64) *history.ServerView {
	ws := p.carriedIn()
	for i := range evs {
		if e := &evs[i]; e.Kind == history.Witness {
			ws = append(ws, *e)
			if op := e.ServerOp(); op == history.WitnessWatches || op == history.WitnessBlind {
				p.sight = append(p.sight, *e)
			}
		}
	}
	v := history.ServerViewOf(ws, end)
	p.keepSpanning(v, ws)
	return v
}

// carried are the carried phantoms' events (nil-safe: a whole history).
func (p *phantomCarry) carried() []history.Event {
	if p == nil {
		return nil
	}
	return p.pending
}

// keep carries the leases still live at this chunk's end: their values'
// witness events and the acquires on their keys that could have written
// them or been kept out by them.
func (p *phantomCarry) keep(ls []lease, evs []history.Event, acq func(key string) []*history.Event) {
	if p == nil {
		return
	}
	var out []history.Event
	seen := map[int64]bool{}
	for _, l := range ls {
		for _, es := range [][]history.Event{p.pending, evs} {
			for _, e := range es {
				if e.Kind == history.Witness && e.Key == l.key && e.ServerKey() == l.serverKey && e.Token == l.value {
					out = append(out, e)
				}
			}
		}
		for _, e := range acq(l.key) {
			if (e.Return >= l.from-releaseHeard || e.Open) && !seen[e.ID] {
				seen[e.ID] = true
				out = append(out, *e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b history.Event) int { return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.ID, b.ID)) })
	p.pending = out
}

// finishPhantoms judges the phantoms still on the server at the file's
// end, into the report's phantom-lease and deadlock-free.
func (r *Report) finishPhantoms(c *carry, end int64) {
	p := c.ph
	if p == nil || len(p.pending) == 0 {
		return
	}
	evs := p.pending
	p.pending = nil
	srv := serverFacts{ServerView: history.ServerViewOf(append(slices.Clip(p.sight), evs...), end), lockNodes: p.hdr.LockNodes,
		lockKeys: p.lockKeys}
	df := Result{Property: DeadlockFree}
	pl := checkPhantoms(leasesInForce(srv.ServerView, srv.lockNodes), srv, evs, nil, p.hdr, Options{MaxViolations: c.maxViolations}, &df)
	for _, o := range []Result{pl, df} {
		a := r.Result(o.Property)
		if a == nil {
			continue
		}
		a.Violations = append(a.Violations, o.Violations[:min(len(o.Violations), c.maxViolations-len(a.Violations))]...)
		a.ViolationCount += o.ViolationCount
		a.Judged += o.Judged
		a.Operations += o.Operations
		if a.ViolationCount > 0 {
			a.Status = Fail
		}
		for _, v := range o.Violations {
			if r.Stats.FirstViolation < 0 || v.At < r.Stats.FirstViolation {
				r.Stats.FirstViolation = v.At
			}
		}
	}
	r.Verdict = Verdict(r.Results)
}
