package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// The server's view of a history in counts, for the cell page's "Server's
// view" section and lockchaos check's one line: per node, whether a
// witness watched it (and why not), the leases it saw and how they ended.
// Everything is read from the witness events, through history.ServerViewOf.

// ServerSummary is what the witnesses saw, per node.
type ServerSummary struct {
	// Events counts the witness events; 0: the server was not watched.
	Events int
	Nodes  []ServerNode
	// Names are the keys the server names otherwise than the workload
	// ("order:1 as lock:order:1"), each once.
	Names []string
}

// ServerNode is one node as the witnesses saw it.
type ServerNode struct {
	Node string
	// Sight is when the node was watched, its stretches in order;
	// Blind the stretches it was not (before the witness connected,
	// after it lost sight), within the history.
	Sight, Blind []Stretch
	// Why is the last reason the witness gave for not seeing it.
	Why string
	// Leases counts the values a key held on the node; Ended, how they
	// ended (history.LeaseExpired, ...); Extended, the expiry changes
	// over all of them; Found, those found on connecting rather than
	// seen written.
	Leases   int
	Ended    map[string]int
	Extended int
	Found    int
}

// Stretch is a span of the history, in ns.
type Stretch struct{ From, To int64 }

// endedOrder is the order "how they ended" lists the ways.
var endedOrder = []string{history.LeaseDeleted, history.LeaseExpired, history.LeaseReplaced, history.LeaseEvicted,
	history.LeaseLost, history.LeaseLive}

// SummarizeServer reads the witness events among events (a history's,
// any order) up to end, the history's end.
func SummarizeServer(events []history.Event, end int64) *ServerSummary {
	var ws []history.Event
	for _, e := range events {
		if e.Kind == history.Witness {
			ws = append(ws, e)
		}
	}
	return summarizeWitness(ws, history.ServerViewOf(ws, end), end)
}

// summarizeWitness is SummarizeServer over the witness events alone and
// the view derived from them.
func summarizeWitness(ws []history.Event, v *history.ServerView, end int64) *ServerSummary {
	s := &ServerSummary{Events: len(ws)}
	if len(ws) == 0 {
		return s
	}
	nodes := map[string]*ServerNode{}
	node := func(n string) *ServerNode {
		if nodes[n] == nil {
			nodes[n] = &ServerNode{Node: n, Ended: map[string]int{}}
		}
		return nodes[n]
	}
	turns := map[string][]int64{} // a node's watch and blind moments
	names := map[string]bool{}
	for _, e := range ws {
		n := node(e.Node())
		switch e.ServerOp() {
		case history.WitnessWatches, history.WitnessBlind:
			turns[n.Node] = append(turns[n.Node], e.Call)
		}
		if sk := e.ServerKey(); e.Key != "" && sk != e.Key {
			names[e.Key+" as "+sk] = true
		}
	}
	for _, l := range v.Leases {
		n := node(l.Node)
		n.Leases++
		n.Ended[l.Ended]++
		n.Extended += l.Extended
		if l.Found {
			n.Found++
		}
	}
	for name, n := range nodes {
		n.Sight = sightOf(v, name, turns[name], end)
		n.Blind = complement(n.Sight, end)
		n.Why = v.BlindReason(name)
		s.Nodes = append(s.Nodes, *n)
	}
	slices.SortFunc(s.Nodes, func(a, b ServerNode) int { return strings.Compare(a.Node, b.Node) })
	for n := range names {
		s.Names = append(s.Names, n)
	}
	slices.Sort(s.Names)
	return s
}

// sightOf is when v watched node: ServerView.Watched asked between each
// pair of the node's turns (its watch and blind events), which are the
// only moments the answer can change.
func sightOf(v *history.ServerView, node string, turns []int64, end int64) []Stretch {
	cuts := append([]int64{0, end}, turns...)
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []Stretch
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if b > end {
			break
		}
		if !v.Watched(node, a+(b-a)/2) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].To == a {
			out[n-1].To = b
			continue
		}
		out = append(out, Stretch{a, b})
	}
	return out
}

// complement is [0, end] less sight (sorted, disjoint).
func complement(sight []Stretch, end int64) []Stretch {
	var out []Stretch
	at := int64(0)
	for _, s := range sight {
		if s.From > at {
			out = append(out, Stretch{at, s.From})
		}
		at = max(at, s.To)
	}
	if at < end {
		out = append(out, Stretch{at, end})
	}
	return out
}

// Watched is the node's sight in words: "throughout", "from 0.002 s to
// the end", "0.002 s to 1.200 s, 1.500 s to the end", "never".
func (n ServerNode) Watched(end int64) string {
	switch {
	case len(n.Sight) == 0:
		return "never"
	case len(n.Blind) == 0:
		return "throughout"
	}
	var parts []string
	for i, s := range n.Sight {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more stretch(es)", len(n.Sight)-i))
			break
		}
		to := history.Seconds(s.To)
		if s.To >= end {
			to = "the end"
		}
		if s.From == 0 {
			parts = append(parts, "from the start to "+to)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s to %s", history.Seconds(s.From), to))
	}
	return strings.Join(parts, ", ")
}

// LateOnly says the node was watched from its first watch to the end:
// the witness connected after the history began and never lost sight.
func (n ServerNode) LateOnly() bool {
	return len(n.Sight) > 0 && len(n.Blind) == 1 && n.Blind[0].From == 0 && n.Blind[0].To == n.Sight[0].From
}

// Unwatched is the time the node was not watched, in all.
func (n ServerNode) Unwatched() time.Duration {
	var d int64
	for _, b := range n.Blind {
		d += b.To - b.From
	}
	return time.Duration(d)
}

// Endings is how the node's leases ended: "30 deleted, 10 expired, 2
// live"; "none seen" without any.
func (n ServerNode) Endings() string {
	var parts []string
	for _, how := range endedOrder {
		if c := n.Ended[how]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, how))
		}
	}
	if len(parts) == 0 {
		return "none seen"
	}
	return strings.Join(parts, ", ")
}

// Line is the summary in one line, for lockchaos check: "server: 3 of 3
// node(s) watched throughout (node1, node2, node3), 42 lease(s) seen: 30
// deleted, 10 expired, 2 live".
func (s *ServerSummary) Line(end int64) string {
	if s.Events == 0 {
		return "server: not watched (the history has no witness events): every lease end is assumed from the TTL"
	}
	all := ServerNode{Ended: map[string]int{}}
	var sight []string
	watched, throughout := 0, 0
	for _, n := range s.Nodes {
		all.Leases += n.Leases
		for how, c := range n.Ended {
			all.Ended[how] += c
		}
		switch {
		case len(n.Sight) == 0:
			sight = append(sight, n.Node+" never"+because(n.Why))
		case len(n.Blind) == 0:
			watched++
			throughout++
			sight = append(sight, n.Node)
		case n.LateOnly():
			watched++
			sight = append(sight, n.Node+" from "+history.Seconds(n.Sight[0].From))
		default:
			watched++
			sight = append(sight, fmt.Sprintf("%s unwatched for %s in all%s", n.Node, history.Span(n.Unwatched()), because(n.Why)))
		}
	}
	line := fmt.Sprintf("server: %d of %d node(s) watched (%s)", watched, len(s.Nodes), strings.Join(sight, ", "))
	if throughout == len(s.Nodes) {
		line = fmt.Sprintf("server: %d of %d node(s) watched throughout (%s)", watched, len(s.Nodes), strings.Join(sight, ", "))
	}
	if all.Leases == 0 {
		return line + ", no lease seen"
	}
	return fmt.Sprintf("%s, %d lease(s) seen: %s", line, all.Leases, all.Endings())
}

func because(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}
