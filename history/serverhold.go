package history

import "sort"

// The lease behind a pod's hold, as the servers held it.

// index builds LeaseFor's indexes (once, on first use).
func (v *ServerView) index() {
	if v.byKey != nil {
		return
	}
	v.byValue, v.byKey = map[string][]int32{}, map[string][]int32{}
	for i, l := range v.Leases {
		if l.Value != "" {
			v.byValue[l.Value] = append(v.byValue[l.Value], int32(i))
		}
		v.byKey[l.Key] = append(v.byKey[l.Key], int32(i))
	}
}

// ServerHold is the lease behind one pod's hold, on the server: on one
// node, the copy the pod wrote; on a quorum lock, while a majority of
// the lock's nodes held its value.
type ServerHold struct {
	Start, End int64
	// Ended is how it ended: the way the copy ended, or LeaseLost when a
	// quorum lock's lease fell below its majority before its copies'
	// deadlines.
	Ended  string
	Nodes  []string      // the nodes that held it
	Copies []ServerLease // one per node
}

// LeaseFor finds the server lease behind h: the copies of h's value
// (its token; for a lock whose value names no owner, the first value the
// server wrote after h's acquire began and before its belief ended that
// was still there when the acquire returned) on the nodes a witness
// watched. lockNodes is the lock's node count (the
// history's LockNodes; 0 or 1: one node). ok false when no witness
// watched, or none saw the lease: the caller must assume it from the TTL.
func (v *ServerView) LeaseFor(h Hold, lockNodes int) (ServerHold, bool) {
	if v == nil || !v.Any() {
		return ServerHold{}, false
	}
	v.index()
	var copies []ServerLease
	seen := func(node string) bool { // a lock has a few nodes: no map
		for _, c := range copies {
			if c.Node == node {
				return true
			}
		}
		return false
	}
	cand := v.byValue[h.Token]
	if h.Token == "" {
		ks := v.byKey[h.Key]
		from := sort.Search(len(ks), func(i int) bool { return v.Leases[ks[i]].Set >= h.AcquireCall })
		to := sort.Search(len(ks), func(i int) bool { return v.Leases[ks[i]].Set > h.End })
		cand = ks[from:to]
	}
	for _, i := range cand {
		l := v.Leases[i]
		if l.Key != h.Key || l.End < h.AcquireCall || seen(l.Node) {
			continue
		}
		// The witness hears of a write a little after the server made it,
		// often after the writer heard its reply: a write is matched by
		// its value, or else by being the first after the acquire began
		// and before the belief ended, never by falling inside the
		// acquire's call and return.
		mine := h.Token != "" && l.Value == h.Token
		if h.Token == "" {
			// Not a write whose value was replaced before it could be read
			// (its value and expiry are unknown).
			mine = l.Set >= h.AcquireCall && l.Set <= h.End && !l.Found && l.Value != "" &&
				// Gone before the acquire returned: another pod's value,
				// set and deleted while the acquire was in flight (the
				// witness hears both late, so it can fall inside the call),
				// never the lease h went on to hold. If h's own value went
				// that early (a reply later than its TTL), no lease is
				// better than a wrong one: the caller assumes it.
				l.End >= h.Start
		}
		if mine {
			copies = append(copies, l)
		}
	}
	if len(copies) == 0 {
		return ServerHold{}, false
	}
	if lockNodes <= 1 {
		// One service address: the copy written first is the one the
		// pods wrote; later ones are a replica's.
		c := copies[0]
		return ServerHold{Start: c.Set, End: c.End, Ended: c.Ended, Nodes: []string{c.Node}, Copies: copies[:1]}, true
	}
	return Majority(copies, lockNodes)
}

// DueAt is when the lease behind a hold was due to lapse as the servers
// had it at t, before any later renewal: on one node its copy's
// deadline then; on a quorum lock, the moment fewer than a majority of
// its copies would still be live; never later than its end.
func (h ServerHold) DueAt(t int64, lockNodes int) int64 {
	if len(h.Copies) == 0 {
		return h.End
	}
	if lockNodes <= 1 {
		return h.Copies[0].DueAt(t)
	}
	dues := make([]int64, 0, len(h.Copies))
	for _, c := range h.Copies {
		dues = append(dues, c.DueAt(t))
	}
	sort.Slice(dues, func(i, j int) bool { return dues[i] > dues[j] })
	need := lockNodes/2 + 1
	if need > len(dues) {
		return h.End
	}
	return min(dues[need-1], h.End)
}

// Majority is the first stretch while a majority of a quorum lock's
// lockNodes held one value's copies (one per node).
func Majority(copies []ServerLease, lockNodes int) (ServerHold, bool) {
	need := lockNodes/2 + 1
	type edge struct {
		t     int64
		delta int
		c     int
	}
	var es []edge
	for i, c := range copies {
		es = append(es, edge{c.Set, 1, i}, edge{c.End, -1, i})
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].t != es[j].t {
			return es[i].t < es[j].t
		}
		return es[i].delta < es[j].delta
	})
	out := ServerHold{Copies: copies}
	for _, c := range copies {
		out.Nodes = append(out.Nodes, c.Node)
	}
	n, reached := 0, false
	for _, e := range es {
		n += e.delta
		if !reached && n >= need {
			reached, out.Start = true, e.t
		}
		if reached && n < need {
			out.End, out.Ended = e.t, copies[e.c].Ended
			if copies[e.c].Ended != LeaseExpired && copies[e.c].Ended != LeaseDeleted {
				out.Ended = LeaseLost
			}
			return out, true
		}
	}
	return ServerHold{}, false // never held a majority: no lease to speak of
}
