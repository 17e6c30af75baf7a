package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// timeline is what the SVG timeline draws, extracted once per cell.
type timeline struct {
	clients []int
	end     int64
	holds   []checker.Hold
	// contended are each client's stretches holding a key another client
	// held too: as many as the holds, where pairs would be n² for n
	// holders at once.
	contended []checker.Contended
	faults    []faultWindow
	marks     []mark
	// keyRows are the keys with liveness stretches, drawn under the lanes.
	keyRows []keyRow
	// The server's side (timeline_server.go): watched says the history
	// has witness events; serverRows are drawn under the key rows,
	// serverMore counts those left out; outlived are the beliefs that
	// went on after their lease on the server ended.
	watched    bool
	server     *ServerSummary
	serverRows []serverRow
	serverMore int
	outlived   []outlived
	// svgs counts the drawings made, for ids unique on a page.
	svgs int
}

type faultWindow struct {
	start, end int64
	name       string
	targets    string
	// label is what the band says on top: the fault's name, and for a
	// clock fault the node and its clock offset from then on.
	label string
}

type markKind int

const (
	markRefused markKind = iota
	markIndefinite
	markLostWrite
	markForeignRelease
	markLostSignal
	markRenewOK
	markRenewRefused
	markRenewIndefinite
	markCrashed
	markAbandoned
	markRestart
	markRecovered
	markRecoveredLate
	markBound
)

type mark struct {
	client int
	at     int64
	kind   markKind
	title  string
}

func buildTimeline(h *history.History, rep *checker.Report) *timeline {
	t := &timeline{end: max(h.End, 1)}
	seen := map[int]bool{}
	for _, e := range h.Events {
		if e.Client >= 0 && !seen[e.Client] {
			seen[e.Client] = true
			t.clients = append(t.clients, e.Client)
		}
	}
	sort.Ints(t.clients)
	t.holds = checker.Holds(h)
	t.contended = checker.ContendedSpans(t.holds)
	byID := map[int64]history.Event{}
	clocks := map[string]time.Duration{} // node -> its clock offset so far
	for _, e := range h.Events {
		byID[e.ID] = e
		switch {
		case e.Kind == history.Fault:
			t.faults = append(t.faults, faultWindow{start: e.Call, end: e.Return, name: e.Fault(),
				targets: strings.Join(e.Hit().Words(), ", "), label: faultLabel(e, clocks)})
			if m, ok := restartMark(e); ok {
				t.marks = append(t.marks, m)
			}
		case e.Kind == history.Abandon:
			t.marks = append(t.marks, abandonMark(e))
		case e.Kind == history.Acquire && e.Outcome == history.Refused:
			t.marks = append(t.marks, mark{client: e.Client, at: e.Call, kind: markRefused,
				title: "acquire refused at " + history.Seconds(e.Call)})
		case e.Kind == history.Acquire && e.Outcome == history.Indefinite:
			t.marks = append(t.marks, mark{client: e.Client, at: e.Call, kind: markIndefinite,
				title: fmt.Sprintf("acquire indefinite at %s: %s", history.Seconds(e.Call), e.Err)})
		case e.Kind == history.Lost:
			t.marks = append(t.marks, mark{client: e.Client, at: e.Call, kind: markLostSignal,
				title: "lost-lease signal at " + history.Seconds(e.Call)})
		case e.Kind == history.Renew:
			t.marks = append(t.marks, renewalMark(e))
		}
	}
	for _, r := range rep.Results {
		for _, v := range r.Violations {
			for _, id := range v.Events {
				e, ok := byID[id]
				if !ok {
					continue
				}
				switch {
				case r.Property == checker.ResourceLinearizable && e.Kind == history.Write:
					t.marks = append(t.marks, mark{client: e.Client, at: e.Call, kind: markLostWrite,
						title: fmt.Sprintf("client %d wrote %d at %s: %s", e.Client, e.Value, history.Seconds(e.Call), v.Summary)})
				case r.Property == checker.ForeignRelease && e.Kind == history.Release:
					t.marks = append(t.marks, mark{client: e.Client, at: e.Call, kind: markForeignRelease,
						title: fmt.Sprintf("client %d's release at %s removed a foreign lock", e.Client, history.Seconds(e.Call))})
				}
			}
		}
	}
	t.addLiveness(rep.Liveness)
	t.addServer(h)
	return t
}

// faultLabel names a fault band. A clock fault's window carries its node
// first and the jump in its Hit; the label adds the node's clock
// offset from then on (jumps add up, as on a stepped clock), so a reader
// sees which node's clock was where.
func faultLabel(e history.Event, clocks map[string]time.Duration) string {
	hit := e.Hit()
	jump := hit.Jump
	if jump == 0 {
		return e.Fault()
	}
	node := hit.Node()
	if e.Fault() == "replica-clock-skew" && len(hit.Nodes) > 1 {
		node = hit.Nodes[1] // primary, replica: the replica's clock runs ahead
		clocks[node] = jump
	} else {
		clocks[node] += jump
	}
	return fmt.Sprintf("%s %s clock %+.3fs", e.Fault(), node, clocks[node].Seconds())
}
