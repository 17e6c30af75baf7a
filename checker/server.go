package checker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// The server-side properties: what the witnesses saw the Redis servers
// do, beside what the pods believed. They corroborate the belief-based
// properties and are not decisive:
//
//   - A lock's promise is about its holders (one at a time) and, with
//     fencing, about the resource; the server's state is the means. Two
//     leases live at once on two nodes, or a belief that outlived its
//     lease, hurt nobody unless two pods acted on them, and that is what
//     mutual-exclusion and resource-linearizable judge; a fencing lock
//     lives with both by design.
//   - The witness times what a node did by when it heard of it, one
//     connection per node: two nodes' acts a few milliseconds apart may
//     be heard in the other order. A verdict must not rest on that.
//
// What the witness settles instead is a question of fact the beliefs
// cannot answer: whose value a release deleted. foreign-release reads
// it (checker/foreign.go), and stays decisive.

// Server-side properties.
const (
	// ServerExclusive: the servers never held two leases on one key at
	// once (each in force where the lock takes it: on one service
	// address, the node it was written to first; on a quorum lock, a
	// majority of its nodes).
	ServerExclusive Property = "server-exclusive"
	// StaleBelief: no pod believed it held a key after the server had
	// dropped its lease and given the key to another pod.
	StaleBelief Property = "stale-belief"
)

// serverSlack is how far apart two nodes' acts may be heard out of
// order: overlaps shorter than it are not reported.
const serverSlack = 5 * time.Millisecond

// checkServer runs the server-side properties: the two shown ones and
// phantom-lease, which adds the phantoms that kept pods out to df.
func checkServer(srv serverFacts, evs []history.Event, holds []Hold, hdr history.Header, opts Options,
	df *Result) (Result, Result, Result) {
	ex := Result{Property: ServerExclusive, Status: Pass}
	sb := Result{Property: StaleBelief, Status: Pass}
	if !srv.Any() {
		note := "not judged: no witness watched the server"
		ex.Note, sb.Note = note, note
		return ex, sb, Result{Property: PhantomLease, Status: Pass, Decisive: true, Note: note}
	}
	ls := leasesInForce(srv.ServerView, srv.lockNodes) // every property here reads them
	serverExclusive(ls, srv.lockNodes, srv.ph, opts, &ex)
	staleBelief(srv.ServerView, ls, holds, srv.lockNodes, opts, &sb)
	return ex, sb, checkPhantoms(ls, srv, evs, holds, hdr, opts, df)
}

// serverFactsOf is what the server-side properties read of a whole
// history (c nil) or of one chunk, with what earlier chunks showed
// (phantomchunk.go).
func serverFactsOf(evs []history.Event, h *history.History, c *carry) serverFacts {
	if c == nil {
		return serverFacts{ServerView: history.ServerViewOf(evs, h.End), lockNodes: h.Header.LockNodes, lockKeys: map[string]bool{}}
	}
	if c.ph == nil {
		c.ph = &phantomCarry{lockKeys: map[string]bool{}, hdr: h.Header}
	}
	return serverFacts{ServerView: c.ph.view(evs, h.End), lockNodes: h.Header.LockNodes, lockKeys: c.ph.lockKeys, ph: c.ph}
}

// lease is one lease as the lock takes it: from when it was in force to
// when it stopped (ended says how). found: the witness found it on
// connecting rather than saw it written (every copy, on a quorum lock).
type lease struct {
	key, serverKey, value, where, ended string
	from, to                            int64
	found                               bool
}

// leasesInForce lists each key's leases where the lock takes them.
func leasesInForce(srv *history.ServerView, lockNodes int) []lease {
	// A key on the server holds one value at a time: leases are compared
	// per server key (a fence counter beside the lock key is another).
	type kv struct{ key, serverKey, value string }
	copies := map[kv][]history.ServerLease{}
	var order []kv
	for _, l := range srv.Leases {
		if l.Value == "" {
			continue // written and replaced before it could be read
		}
		k := kv{l.Key, l.ServerKey, l.Value}
		if copies[k] == nil {
			order = append(order, k)
		}
		copies[k] = append(copies[k], l)
	}
	var out []lease
	for _, k := range order {
		cs := copies[k]
		if lockNodes <= 1 {
			c := cs[0] // the first written; later copies are a replica's
			out = append(out, lease{key: k.key, serverKey: k.serverKey, value: k.value, where: c.Node, from: c.Set, to: c.End,
				ended: c.Ended, found: c.Found})
			continue
		}
		if sh, ok := history.Majority(firstPerNode(cs), lockNodes); ok {
			found := true
			for _, c := range sh.Copies {
				found = found && c.Found
			}
			out = append(out, lease{key: k.key, serverKey: k.serverKey, value: k.value, where: strings.Join(sh.Nodes, ", "),
				from: sh.Start, to: sh.End, ended: sh.Ended, found: found})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// firstPerNode keeps a value's first copy on each node.
func firstPerNode(cs []history.ServerLease) []history.ServerLease {
	seen := map[string]bool{}
	var out []history.ServerLease
	for _, c := range cs {
		if !seen[c.Node] {
			seen[c.Node] = true
			out = append(out, c)
		}
	}
	return out
}

// serverExclusive finds two leases on one key in force at once. Of a
// history in chunks, the leases still in force at a cut come into the
// next chunk (ph) to meet its leases; two of them met in an earlier one.
func serverExclusive(ls []lease, lockNodes int, ph *phantomCarry, opts Options, r *Result) {
	live := map[string][]lease{}
	for _, l := range ls {
		again := ph.carries(l)
		if !again {
			r.Operations++
		}
		var keep []lease
		for _, o := range live[l.serverKey] {
			if o.to <= l.from {
				continue
			}
			keep = append(keep, o)
			if again && ph.carries(o) {
				continue
			}
			if overlap := min(o.to, l.to) - l.from; overlap > int64(serverSlack) {
				r.found(mark{at: l.from, start: l.from, end: min(o.to, l.to), n: 1, key: l.key, property: ServerExclusive},
					opts.MaxViolations, func() Violation {
						return Violation{Property: ServerExclusive, Key: l.key, At: l.from,
							Start: l.from, End: min(o.to, l.to),
							Summary: fmt.Sprintf("the server held two leases on %s at once for %s: "+
								"%s on %s (from %s) and %s on %s (from %s)",
								l.key, history.Span(time.Duration(overlap)), short(o.value), o.where, history.Seconds(o.from),
								short(l.value), l.where, history.Seconds(l.from))}
					})
			}
		}
		live[l.serverKey] = append(keep, l)
	}
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
	if lockNodes > 1 {
		r.Note = fmt.Sprintf("a lease is in force while a majority of the lock's %d nodes hold its value; a node holds one "+
			"value at a time, so two majorities cannot overlap: what a forgetful node does to a quorum lock shows in "+
			"stale-belief", lockNodes)
	}
}

// staleBelief finds holds that outlived their server lease while the
// server gave the key to another pod.
func staleBelief(srv *history.ServerView, ls []lease, holds []Hold, lockNodes int, opts Options, r *Result) {
	byKey := map[string][]lease{}
	for _, l := range ls {
		byKey[l.serverKey] = append(byKey[l.serverKey], l)
	}
	owner := map[string]int{} // a token's holder
	for _, h := range holds {
		if h.Token != "" {
			owner[h.Token] = h.Client
		}
	}
	whose := func(v string) string {
		if c, ok := owner[v]; ok {
			return fmt.Sprintf("client %d (%s)", c, short(v))
		}
		return short(v)
	}
	for _, h := range holds {
		sh, ok := srv.LeaseFor(h, lockNodes)
		if !ok {
			continue
		}
		r.Operations++
		if sh.End >= h.End {
			continue
		}
		for _, o := range byKey[sh.Copies[0].ServerKey] {
			if o.from < sh.End || o.from >= h.End || (h.Token != "" && o.value == h.Token) {
				continue
			}
			r.found(mark{at: o.from, start: sh.End, end: min(h.End, o.to), n: 1, key: h.Key, property: StaleBelief}, opts.MaxViolations,
				func() Violation {
					return Violation{Property: StaleBelief, Key: h.Key, Clients: []int{h.Client},
						Events: []int64{h.AcquireID}, At: o.from, Start: sh.End, End: min(h.End, o.to),
						Summary: fmt.Sprintf("client %d believed it held %s until %s, but the server dropped its lease at %s (%s on %s) "+
							"and gave %s to %s on %s at %s",
							h.Client, h.Key, endText(h.End), history.Seconds(sh.End), sh.Ended, strings.Join(sh.Nodes, ", "),
							h.Key, whose(o.value), o.where, history.Seconds(o.from))}
				})
			break
		}
	}
	if r.ViolationCount > 0 {
		r.Status = Fail
	}
}

func endText(t int64) string {
	if t == history.Forever {
		return "the end"
	}
	return history.Seconds(t)
}

// short is a value as a sentence shows it: tokens are long and random.
func short(v string) string {
	if len(v) > 10 {
		return fmt.Sprintf("value %s…", v[:8])
	}
	return fmt.Sprintf("value %q", v)
}
