package history

import (
	"sort"
)

// What a witness event's ServerAct.Act names: the server's act on the key (set,
// expire, del, expired, evicted), what the witness found on connecting
// (present, absent), or the witness's own sight of the node (blind,
// watching). The words are backend.KeyOp's; history does not import it.
const (
	ServerSet      = "set"
	ServerExpire   = "expire"
	ServerDel      = "del"
	ServerExpired  = "expired"
	ServerEvicted  = "evicted"
	ServerPresent  = "present"
	ServerAbsent   = "absent"
	WitnessBlind   = "blind"
	WitnessWatches = "watching"
)

// ServerOp is a witness event's act ("" for other events).
func (e Event) ServerOp() string {
	if e.Kind != Witness {
		return ""
	}
	return e.ServerAct().Act
}

// Node is the node a witness event, a probe or a fault window is about
// ("" for operations).
func (e Event) Node() string {
	switch {
	case e.Window == nil:
		return ""
	case e.Window.Witness != nil:
		return e.Window.Witness.Node
	case e.Window.Probe != nil:
		return e.Window.Probe.Node
	}
	return e.Hit().Node()
}

// ServerKey is the key as the server names it.
func (e Event) ServerKey() string {
	if k := e.ServerAct().ServerKey; k != "" {
		return k
	}
	return e.Key
}

// Deadline is a witness event's deadline for the key on the history's
// clock (0: none).
func (e Event) Deadline() int64 { return e.ServerAct().Deadline }

// ServerLease is one value a lock key held on one node, from the moment
// the server wrote it to the moment it stopped holding it, as the witness
// saw it.
type ServerLease struct {
	Key       string `json:"key"` // the workload's key
	ServerKey string `json:"server_key,omitempty"`
	Node      string `json:"node"`
	Value     string `json:"value"`
	Set       int64  `json:"set"` // when the server wrote it (or the witness found it)
	// Deadline is the last expiry the server gave it (0: none), after
	// every renewal.
	Deadline int64 `json:"deadline,omitempty"`
	// End is when the key stopped holding the value: its deadline if it
	// expired (the server removes an expired key later, on access or in
	// its expiry cycle, but no command sees it after the deadline), the
	// delete, the write that replaced it, or the moment the witness lost
	// sight of a node that came back without it. The history's end if it
	// was still live then.
	End     int64  `json:"end"`
	Removed int64  `json:"removed,omitempty"` // when the server reported the removal
	Ended   string `json:"ended"`             // how: LeaseExpired, LeaseDeleted, ...
	// Why is what the server said of the removal, where it says (a
	// PostgreSQL session ended by an idle timeout): the witness event's.
	Why string `json:"why,omitempty"`
	// Extended counts expiry changes (a watchdog's renewals); Expiries
	// are the deadlines it had and since when, the write's first.
	Extended int      `json:"extended,omitempty"`
	Expiries []Expiry `json:"expiries,omitempty"`
	// Found says the witness found it on connecting rather than saw it
	// written (a node back from its AOF, a witness started late).
	Found bool `json:"found,omitempty"`
	// Blind says the witness lost sight of the node during its life: its
	// end is only what the witness found back.
	Blind bool `json:"blind,omitempty"`
	// SetOp and EndOp are the witness events' ids (-1: none).
	SetOp int64 `json:"set_op"`
	EndOp int64 `json:"end_op"`
}

// Expiry is a deadline a lease had on the server from At on (0: none).
type Expiry struct {
	At       int64 `json:"at"`
	Deadline int64 `json:"deadline"`
}

// DueAt is when the lease was due to lapse as the server had it at t
// (before any later renewal): its deadline then, or its end if it ended
// sooner; Forever for a value with no expiry.
func (l ServerLease) DueAt(t int64) int64 {
	// The write's own expiry holds from the write, even asked about a
	// moment before the witness heard of it (the writer often hears its
	// reply first); later changes count from when they were heard.
	due := int64(Forever)
	for i, e := range l.Expiries {
		if i > 0 && e.At > t {
			break
		}
		due = Forever
		if e.Deadline > 0 {
			due = e.Deadline
		}
	}
	if l.Ended == LeaseLive {
		return due
	}
	return min(due, l.End)
}

// How a server lease ended (ServerLease.Ended).
const (
	LeaseExpired  = "expired"  // its time ran out on the server
	LeaseDeleted  = "deleted"  // a command deleted it (a release, a DEL)
	LeaseReplaced = "replaced" // a write gave the key another value
	LeaseEvicted  = "evicted"  // removed for memory
	LeaseLost     = "lost"     // its node lost it (killed, restarted empty)
	LeaseLive     = "live"     // still held at the history's end
)

// ServerView is the server's side of a history: every lease the
// witnesses saw, and when each node was watched.
type ServerView struct {
	Leases []ServerLease // by Set
	// sight is each node's watched stretches.
	sight map[string][]span
	blind map[string]string // a node's last reason for not being watched
	// byValue and byKey index Leases (positions, by Set) for LeaseFor,
	// which a check asks once per hold.
	byValue map[string][]int32
	byKey   map[string][]int32
}

type span struct{ from, to int64 }

// ServerViewOf derives the server's side from a history's events (any
// order; only witness events are read). end is the history's end.
func ServerViewOf(events []Event, end int64) *ServerView {
	// Positions, not 150-byte events: a history's witness events are
	// most of its writes.
	var ws []int32
	writes := 0
	for i := range events {
		if e := &events[i]; e.Kind == Witness {
			ws = append(ws, int32(i))
			if op := e.ServerOp(); op == ServerSet || op == ServerPresent {
				writes++
			}
		}
	}
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := &events[ws[i]], &events[ws[j]]
		if a.Call != b.Call {
			return a.Call < b.Call
		}
		return a.ID < b.ID
	})
	b := viewBuilder{v: &ServerView{sight: map[string][]span{}, blind: map[string]string{}, Leases: make([]ServerLease, 0, writes)},
		live: map[slot]int{}, end: end}
	for _, wi := range ws {
		b.add(&events[wi])
	}
	v := b.v
	for _, i := range b.live {
		l := &v.Leases[i]
		if l.Deadline > 0 && l.Deadline < end {
			l.End, l.Ended = l.Deadline, LeaseExpired
		} else {
			l.End, l.Ended = end, LeaseLive
		}
	}
	sort.SliceStable(v.Leases, func(i, j int) bool { return v.Leases[i].Set < v.Leases[j].Set })
	return v
}

// slot is a key on a node.
type slot struct{ node, key string }

// viewBuilder folds witness events, in order, into a server view.
type viewBuilder struct {
	v    *ServerView
	live map[slot]int // index in v.Leases of the value a key holds on a node
	end  int64
}

func (b *viewBuilder) add(e *Event) {
	v, node, t := b.v, e.Node(), e.Call
	s := slot{node, e.ServerKey()}
	i, held := b.live[s]
	switch e.ServerOp() {
	case WitnessWatches:
		v.sight[node] = append(v.sight[node], span{t, b.end})
	case WitnessBlind:
		if sp := v.sight[node]; len(sp) > 0 && sp[len(sp)-1].to == b.end {
			sp[len(sp)-1].to = t
		}
		v.blind[node] = e.Err
		for k, j := range b.live {
			if k.node == node {
				v.Leases[j].Blind = true
			}
		}
	case ServerSet, ServerPresent:
		b.written(e, s, i, held)
	case ServerExpire:
		if held {
			v.Leases[i].Deadline = e.Deadline()
			v.Leases[i].Extended++
			v.Leases[i].Expiries = append(v.Leases[i].Expiries, Expiry{t, e.Deadline()})
		}
	case ServerDel, ServerExpired, ServerEvicted, ServerAbsent:
		if !held {
			return
		}
		how, at := LeaseLost, t
		switch e.ServerOp() {
		case ServerDel:
			how = LeaseDeleted
		case ServerExpired:
			how = LeaseExpired
		case ServerEvicted:
			how = LeaseEvicted
		default:
			// A node back without the key lost it when it went away
			// (the witness went blind then), or by its deadline.
			if bl, ok := lastBlind(v.sight[node], t); ok {
				at = bl
			}
		}
		v.Leases[i].Why = e.Err
		b.finish(i, at, how, e.ID)
		delete(b.live, s)
	}
}

// written is a set or a find: a new lease, or the same one extended.
func (b *viewBuilder) written(e *Event, s slot, i int, held bool) {
	v, t := b.v, e.Call
	// The same value written again (SET XX PX as a renewal) or found
	// again on reconnecting is the same lease, extended.
	if held && e.Token != "" && v.Leases[i].Value == e.Token {
		if e.ServerOp() == ServerSet {
			v.Leases[i].Extended++
		}
		v.Leases[i].Deadline = e.Deadline()
		v.Leases[i].Expiries = append(v.Leases[i].Expiries, Expiry{t, e.Deadline()})
		return
	}
	if held {
		if bl, ok := lastBlind(v.sight[s.node], t); ok && e.ServerOp() == ServerPresent && bl >= v.Leases[i].Set {
			// Found with another value on reconnecting: the node lost the
			// old one while the witness could not see it, at the latest
			// when sight was lost (a restart).
			b.finish(i, bl, LeaseLost, e.ID)
		} else {
			b.finish(i, t, LeaseReplaced, e.ID)
		}
	}
	b.live[s] = len(v.Leases)
	v.Leases = append(v.Leases, ServerLease{Key: e.Key, ServerKey: e.ServerKey(), Node: s.node, Value: e.Token, Set: t,
		Deadline: e.Deadline(), Found: e.ServerOp() == ServerPresent, SetOp: e.ID, EndOp: -1, Expiries: []Expiry{{t, e.Deadline()}}})
}

// finish ends lease i at at.
func (b *viewBuilder) finish(i int, at int64, how string, op int64) {
	l := &b.v.Leases[i]
	l.End, l.Ended, l.EndOp = at, how, op
	if how == LeaseExpired || how == LeaseReplaced || how == LeaseDeleted || how == LeaseEvicted {
		l.Removed = at
	}
	if l.Deadline > 0 && l.Deadline < at {
		// No command saw the value after its deadline, whatever removed
		// it later.
		l.End, l.Ended = l.Deadline, LeaseExpired
	}
}

// lastBlind is the end of the last watched stretch before t that ended
// (the moment sight was lost).
func lastBlind(sp []span, t int64) (int64, bool) {
	for i := len(sp) - 1; i >= 0; i-- {
		if sp[i].to <= t {
			return sp[i].to, true
		}
	}
	return 0, false
}

// Watched reports whether a witness saw node at t.
func (v *ServerView) Watched(node string, t int64) bool {
	for _, s := range v.sight[node] {
		if s.from <= t && t <= s.to {
			return true
		}
	}
	return false
}

// Nodes lists the nodes a witness ever watched, sorted.
func (v *ServerView) Nodes() []string {
	var out []string
	for n := range v.sight {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Any reports whether a witness watched any node at all.
func (v *ServerView) Any() bool { return len(v.sight) > 0 }

// BlindReason says why a node was not watched ("" if it always was).
func (v *ServerView) BlindReason(node string) string { return v.blind[node] }
