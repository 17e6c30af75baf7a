package reports

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// witnessCell is a gc-pause on a one-node lock, watched on the server:
// client 0 takes order:1 (tokA, TTL 300 ms) at 0.101 s and is paused
// from 0.150 s to 0.600 s; the server expires tokA at its deadline,
// 0.400 s (and reports it 5 ms later); client 1 takes the key at 0.421 s
// (tokB), renews it at 0.600 s and releases at 0.800 s; client 0, back,
// releases at 0.650 s and is refused. Client 0's belief outlived its
// lease by 250 ms. The window is judged exercised on the observed
// lease end; the floor asks for 3.
func witnessCell() *history.History {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "gc-pause", Lock: "token",
		Clients: 2, TTL: 300 * time.Millisecond, LockNodes: 1, Faults: []string{"client-pause"},
		Floor: &history.Floor{MinExercised: 3, MinCycles: 1, MaxIndefinite: 0.5}}, End: ms(1000)}
	add := func(e history.Event) history.Event {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		return e
	}
	witness := func(at int64, op, tok string, deadline int64) {
		add(history.Event{Kind: history.Witness, Client: -1, Key: "order:1", Token: tok, Call: at, Return: at,
			Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: op, Deadline: deadline})})
	}
	op := func(k history.Kind, c int, tok string, at int64, out history.Outcome) {
		add(history.Event{Kind: k, Client: c, Key: "order:1", Token: tok, Call: ms(at), Return: ms(at + 1), Outcome: out})
	}
	add(history.Event{Kind: history.Witness, Client: -1, Call: 0, Return: 0,
		Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: history.WitnessWatches})})
	op(history.Acquire, 0, "tokA", 100, history.Ok)
	witness(ms(100)+500_000, history.ServerSet, "tokA", ms(400))
	w := add(history.Event{Kind: history.Fault, Client: -1, Call: ms(150), Return: ms(600), Outcome: history.Ok,
		Window: history.FaultWindow("gc-pause", history.Hit{Pods: []int{0}})})
	witness(ms(405), history.ServerExpired, "tokA", 0)
	op(history.Acquire, 1, "tokB", 420, history.Ok)
	witness(ms(420)+500_000, history.ServerSet, "tokB", ms(720))
	witness(ms(600), history.ServerExpire, "tokB", ms(900))
	add(history.Judgment{Fault: "gc-pause", Window: w.ID, Exercised: true, Lease: history.LeaseObserved, Of: w,
		Detail: "the server removed order:1 at 0.400 s, 200 ms before the pause ended; client 1 acquired it at 0.421 s"}.Event())
	op(history.Release, 0, "tokA", 650, history.Refused)
	op(history.Release, 1, "tokB", 800, history.Ok)
	witness(ms(800)+500_000, history.ServerDel, "tokB", 0)
	return h
}

// The timeline draws the key's life on the server under the pods' lanes:
// tokA's bar ends expired at its deadline, tokB's renewal is a tick, its
// release a delete; client 0's belief past 0.400 s is hatched on its own
// lane, saying how long it went on without a lease.
func TestTimelineDrawsTheServersView(t *testing.T) {
	h := witnessCell()
	rep := checker.Check(t.Context(), h, checker.Options{})
	tl := buildTimeline(h, rep)
	svg := string(tl.svg(0, h.End, 1200))
	x := func(at int64) float64 { return 72 + float64(at)/float64(h.End)*1118 }
	serverTop := laneTop(2) + serverHeader // two client lanes, no key row, the server's heading
	for _, c := range []struct{ what, prefix, title string }{
		{"tokA's bar", fmt.Sprintf(`<rect class="server-lease expired" x="%.1f" y="%d"`, x(ms(100)+500_000), serverTop+2),
			"order:1 = tokA on node1 from 0.101 s to 0.400 s: expired (its time ran out on the server; removed 5 ms later)"},
		{"tokA's expiry", fmt.Sprintf(`<path class="lease-end expired" d="M%.1f %dv`, x(ms(400)), serverTop),
			"order:1 = tokA on node1 from 0.101 s to 0.400 s: expired"},
		{"tokB's bar", fmt.Sprintf(`<rect class="server-lease deleted" x="%.1f" y="%d"`, x(ms(420)+500_000), serverTop+2),
			"order:1 = tokB on node1 from 0.420 s to 0.800 s: deleted; expiry changed 1 time(s)"},
		{"tokB's renewal", fmt.Sprintf(`<line class="lease-extend" x1="%.1f" y1="%d"`, x(ms(600)), serverTop+2),
			"node1 gave order:1 = tokB its deadline 0.900 s at 0.600 s"},
		{"tokB's delete", fmt.Sprintf(`<rect class="lease-end deleted" x="%.1f" y="%d"`, x(ms(800)+500_000)-1.5, serverTop),
			"order:1 = tokB on node1 from 0.420 s to 0.800 s: deleted"},
		{"client 0's belief past its lease", fmt.Sprintf(`<rect class="beyond-lease" x="%.1f" y="%d"`, x(ms(400)), laneTop(0)+1),
			"client 0 still believed it held order:1 until 0.650 s; its lease on node1 ended at 0.400 s (expired): 250 ms without a lease"},
	} {
		i := strings.Index(svg, c.prefix)
		if i < 0 {
			t.Errorf("%s: no %s", c.what, c.prefix)
			continue
		}
		if mark := svg[i:min(i+700, len(svg))]; !strings.Contains(mark, "<title>"+esc(c.title)) {
			t.Errorf("%s: tooltip %q missing from %s", c.what, c.title, mark)
		}
	}
	if n := strings.Count(svg, `class="server-row"`); n != 1 {
		t.Errorf("%d server rows, want 1 (one key, one node)", n)
	}
	if n := strings.Count(svg, `class="beyond-lease"`); n != 1 {
		t.Errorf("%d beliefs hatched past their lease, want 1 (client 1's lease was deleted by its own release)", n)
	}
	for _, label := range []string{`fill="#37474f">node1<title>order:1 on node1: its life on the server</title>`,
		`>tokA node1</text>`, `>on the server, as the witness saw it</text>`} {
		if !strings.Contains(svg, label) {
			t.Errorf("no %q", label)
		}
	}
	if strings.Contains(svg, `class="server-blind"`) {
		t.Error("node1 was watched throughout, yet shaded blind")
	}
	want := serverLegend{Watched: true, Expired: true, Deleted: true, Extends: true, Outlived: true}
	if got := tl.serverLegend(); got != want {
		t.Errorf("legend %+v, want %+v", got, want)
	}
	wellFormedSVG(t, svg)
	// A zoom on the pause draws the same, its hatch with an id of its own.
	zoom := string(tl.svg(ms(300), ms(700), 1200))
	if !strings.Contains(zoom, `id="beyond-lease-2"`) || !strings.Contains(zoom, `fill="url(#beyond-lease-2)"`) ||
		strings.Contains(zoom, "beyond-lease-1") {
		t.Error("the zoom's hatch pattern does not have an id of its own")
	}
}

// threeNodeCell is a Redlock-like cell on three nodes whose keys the
// server names lock:order:1: client 0 holds order:1 from 0.101 s to
// 0.700 s; node3's witness loses sight from 0.300 s to 0.500 s
// (connection refused) and finds the key gone on its return, so the copy
// there was lost when sight went; the others are released.
func threeNodeCell() *history.History {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "node-restart", Lock: "redlock",
		Clients: 2, TTL: time.Second, LockNodes: 3}, End: ms(1000)}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	witness := func(node string, at int64, op, tok string, deadline int64, err string) {
		key := "order:1"
		if op == history.WitnessWatches || op == history.WitnessBlind {
			key = ""
		}
		add(history.Event{Kind: history.Witness, Client: -1, Key: key, Token: tok, Call: at, Return: at, Err: err,
			Window: history.WitnessWindow(history.ServerAct{Node: node, ServerKey: "lock:order:1", Act: op, Deadline: deadline})})
	}
	for _, n := range []string{"node1", "node2", "node3"} {
		witness(n, 0, history.WitnessWatches, "", 0, "")
	}
	add(history.Event{Kind: history.Acquire, Client: 0, Key: "order:1", Token: "3f2a9c7e-6b1d", Call: ms(100), Return: ms(101),
		Outcome: history.Ok})
	for _, n := range []string{"node1", "node2", "node3"} {
		witness(n, ms(100)+200_000, history.ServerSet, "3f2a9c7e-6b1d", ms(1100), "")
	}
	witness("node3", ms(300), history.WitnessBlind, "", 0, "connection refused")
	witness("node3", ms(500), history.WitnessWatches, "", 0, "")
	witness("node3", ms(500), history.ServerAbsent, "", 0, "")
	add(history.Event{Kind: history.Release, Client: 0, Key: "order:1", Token: "3f2a9c7e-6b1d", Call: ms(700), Return: ms(701),
		Outcome: history.Ok})
	for _, n := range []string{"node1", "node2"} {
		witness(n, ms(700)+300_000, history.ServerDel, "3f2a9c7e-6b1d", 0, "")
	}
	return h
}

// Three nodes: a row each, labelled by node; node3 shaded where the
// witness could not see it, with the reason, and its copy ended lost.
func TestTimelineServerRowsPerNode(t *testing.T) {
	h := threeNodeCell()
	tl := buildTimeline(h, checker.Check(t.Context(), h, checker.Options{}))
	svg := string(tl.svg(0, h.End, 1200))
	if n := strings.Count(svg, `class="server-row"`); n != 3 {
		t.Fatalf("%d server rows, want 3", n)
	}
	for i, n := range []string{"node1", "node2", "node3"} {
		label := fmt.Sprintf(`<text x="4" y="%d" font-size="11" fill="#37474f">%s<title>order:1 on %s (the server names it lock:order:1)`,
			laneTop(1)+serverHeader+i*(laneHeight+laneGap)+12, n, n) // one client lane
		if !strings.Contains(svg, label) {
			t.Errorf("no row label for %s: %s", n, label)
		}
	}
	for _, want := range []string{
		`<pattern id="server-blind-1"`,
		`fill="url(#server-blind-1)"><title>node3 not watched from 0.300 s to 0.500 s: connection refused</title>`,
		`class="lease-end lost"`,
		"<title>order:1 = 3f2a9c7… on node3 from 0.100 s to 0.300 s: lost by its node (it came back without it); " +
			"the witness lost sight of the node meanwhile",
		`>3f2a9c7… node1</text>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q", want)
		}
	}
	if n := strings.Count(svg, `class="lease-end deleted"`); n != 2 {
		t.Errorf("%d deletes, want 2 (node1, node2)", n)
	}
	if strings.Contains(svg, `class="beyond-lease"`) {
		t.Error("a majority held the lease until the release, yet a belief is hatched past it")
	}
	if l := tl.serverLegend(); !l.Blind || !l.Lost || !l.Deleted || l.Outlived {
		t.Errorf("legend %+v", l)
	}
	wellFormedSVG(t, svg)
}

// A history without witness events draws no server row and its legend
// says the server was not watched.
func TestTimelineWithoutWitnessDrawsNoServer(t *testing.T) {
	h := witnessCell()
	var plain []history.Event
	for _, e := range h.Events {
		if e.Kind != history.Witness {
			plain = append(plain, e)
		}
	}
	h.Events = plain
	tl := buildTimeline(h, checker.Check(t.Context(), h, checker.Options{}))
	svg := string(tl.svg(0, h.End, 1200))
	for _, cls := range []string{"server", "lease-end", "beyond-lease"} {
		if strings.Contains(svg, `class="`+cls) {
			t.Errorf("a history without witness events has %s marks", cls)
		}
	}
	if tl.serverLegend().Watched {
		t.Error("the legend says the server was watched")
	}
	if got, want := strings.Count(svg, "<svg"), 1; got != want || !strings.Contains(svg, fmt.Sprintf(`height="%d"`, laneTop(2)+axisHeight)) {
		t.Errorf("the timeline's height grew without server rows:\n%.300s", svg)
	}
}

// Thousands of leases fold into pixel columns: the SVG stays bounded,
// with at most one end mark of a kind per column, and beliefs past their
// lease fold on their lanes.
func TestTimelineFoldsManyLeases(t *testing.T) {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Lock: "naive", Clients: 1, LockNodes: 1},
		End: ms(20_000)}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	add(history.Event{Kind: history.Witness, Client: -1, Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: history.WitnessWatches})})
	for i := range int64(5000) {
		at := i * 4_000_000
		tok := fmt.Sprint("t", i)
		add(history.Event{Kind: history.Acquire, Client: 0, Key: "k", Token: tok, Call: at, Return: at + 100_000, Outcome: history.Ok})
		add(history.Event{Kind: history.Witness, Client: -1, Key: "k", Token: tok, Call: at + 50_000, Return: at + 50_000,
			Window: history.WitnessWindow(history.ServerAct{Node: "node1", Act: history.ServerSet, Deadline: at + 1_000_000})})
		add(history.Event{Kind: history.Release, Client: 0, Key: "k", Token: tok, Call: at + 3_000_000, Return: at + 3_100_000,
			Outcome: history.Refused})
	}
	tl := buildTimeline(h, &checker.Report{})
	if len(tl.outlived) != 5000 {
		t.Fatalf("%d beliefs past their lease, want 5000 (each lease expired 2 ms before its release)", len(tl.outlived))
	}
	svg := string(tl.svg(0, h.End, 1200))
	for cls, most := range map[string]int{`class="server-lease`: 1200, `class="lease-end expired"`: 1200, `class="beyond-lease"`: 1200} {
		if n := strings.Count(svg, cls); n == 0 || n > most {
			t.Errorf("%d of %s for 5000 leases in 1118 columns", n, cls)
		}
	}
	if len(svg) > 1<<20 {
		t.Errorf("the folded timeline is %d bytes", len(svg))
	}
	wellFormedSVG(t, svg)
}

// Past maxServerRows key-node rows the timeline draws the first ones and
// the legend says how many it left out; with several keys a row's label
// names its key and node.
func TestTimelineCapsServerRows(t *testing.T) {
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Lock: "redlock", Clients: 1, LockNodes: 3},
		End: ms(100)}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	for _, n := range []string{"node1", "node2", "node3"} {
		add(history.Event{Kind: history.Witness, Client: -1, Window: history.WitnessWindow(history.ServerAct{Node: n, Act: history.WitnessWatches})})
		for k := 1; k <= 5; k++ {
			add(history.Event{Kind: history.Witness, Client: -1, Key: fmt.Sprintf("order:%d", k), Token: "v",
				Call: ms(10), Return: ms(10), Window: history.WitnessWindow(history.ServerAct{Node: n, Act: history.ServerSet, Deadline: ms(50)})})
		}
	}
	tl := buildTimeline(h, &checker.Report{})
	svg := string(tl.svg(0, h.End, 1200))
	if n := strings.Count(svg, `class="server-row"`); n != maxServerRows {
		t.Errorf("%d server rows drawn, want %d", n, maxServerRows)
	}
	if l := tl.serverLegend(); l.More != 15-maxServerRows {
		t.Errorf("legend says %d rows left out, want %d", l.More, 15-maxServerRows)
	}
	if !strings.Contains(svg, `fill="#37474f">…r:1@node1<title>order:1 on node1: its life on the server</title>`) {
		t.Error("no row labelled with its key and node")
	}
	wellFormedSVG(t, svg)
}

// The beliefs found past their lease are those LeaseFor finds over every
// lease: asking it over each hold's own candidates changes nothing but
// the cost, for holds with a token and without one.
func TestOutlivedAgreesWithLeaseForOverEveryLease(t *testing.T) {
	tokenless := witnessCell()
	for i := range tokenless.Events {
		if tokenless.Events[i].Kind != history.Witness {
			tokenless.Events[i].Token = ""
		}
	}
	for name, h := range map[string]*history.History{"witness": witnessCell(), "three nodes": threeNodeCell(), "no token": tokenless} {
		v := history.ServerViewOf(h.Events, h.End)
		holds := checker.Holds(h)
		var want []outlived
		for _, hd := range holds {
			sh, ok := v.LeaseFor(hd, h.Header.LockNodes)
			believed := hd.End
			if believed == checker.Forever {
				believed = h.End
			}
			if ok && sh.Ended != history.LeaseLive && believed > sh.End {
				want = append(want, outlived{client: hd.Client, key: hd.Key, from: sh.End, to: believed, ended: sh.Ended,
					nodes: strings.Join(sh.Nodes, ", ")})
			}
		}
		got := outlivedHolds(v, holds, h.Header.LockNodes, h.End)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: outlived %v, LeaseFor over every lease %v", name, got, want)
		}
		if name != "three nodes" && len(got) != 1 {
			t.Errorf("%s: %d beliefs past their lease, want 1", name, len(got))
		}
	}
}
