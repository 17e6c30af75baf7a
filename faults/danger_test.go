package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

const ms = int64(time.Millisecond)

// ev builds one completed event (times in ms).
func ev(kind history.Kind, client int, key string, call, ret int64, out history.Outcome) history.Event {
	return history.Event{Kind: kind, Client: client, Key: key, Call: call * ms, Return: ret * ms, Outcome: out}
}

func abandon(client int, key string, at int64, why string) history.Event {
	return history.Event{Kind: history.Abandon, Client: client, Key: key, Call: at * ms, Return: at * ms, Outcome: history.Ok, Err: why}
}

func window(fault string, call, ret int64, hit history.Hit) history.Event {
	return history.Event{Kind: history.Fault, Client: -1, Call: call * ms, Return: ret * ms, Outcome: history.Ok, Window: history.FaultWindow(fault, hit)}
}

func judge(t *testing.T, evs ...history.Event) []Judgment {
	t.Helper()
	for i := range evs {
		evs[i].ID = int64(i)
	}
	return Judge(&history.History{Events: evs}, 300*time.Millisecond)
}

// TestDangerousMoments: each fault kind's moment, from hand-made histories
// where it happened and where it did not.
func TestDangerousMoments(t *testing.T) {
	ok, ref, ind := history.Ok, history.Refused, history.Indefinite
	cases := []struct {
		name   string
		evs    []history.Event
		want   bool
		phrase string
	}{
		{"a holder crashes under its live lease and another pod tries", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("pod-crash", 20, 21, history.Hit{Pods: []int{1}, StopsHolder: true}),
			abandon(1, "k", 20, history.Crashed), ev(history.Acquire, 2, "k", 30, 31, ref)}, true, "client 1 crashed at 0.020 s holding k"},
		{"a crash that found nothing held", []history.Event{
			window("pod-crash", 20, 21, history.Hit{Pods: []int{1}, StopsHolder: true}), ev(history.Acquire, 2, "k", 30, 31, ok)}, false, "held no lock"},
		{"a crash after the lease had lapsed", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("pod-crash", 400, 401, history.Hit{Pods: []int{1}, StopsHolder: true}),
			abandon(1, "k", 400, history.Crashed), ev(history.Acquire, 2, "k", 410, 411, ok)}, false, "after client 1's lease on k (TTL 300 ms) lapsed"},
		{"an abandoned lease nobody else wanted", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("abandoned-lease", 20, 21, history.Hit{Pods: []int{1}, StopsHolder: true}),
			abandon(1, "k", 20, history.Abandoned)}, false, "no other pod tried"},
		{"an abandoned lease others keep trying for", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("abandoned-lease", 20, 21, history.Hit{Pods: []int{1}, StopsHolder: true}),
			abandon(1, "k", 20, history.Abandoned), ev(history.Acquire, 3, "k", 500, 501, ref)}, true, "client 3 tried at 0.500 s"},
		{"pause outlives the lease while another pod tries", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("client-pause", 20, 470, history.Hit{Pods: []int{1}}),
			ev(history.Acquire, 2, "k", 300, 320, ref), ev(history.Acquire, 2, "k", 330, 340, ok)}, true, "lapsed at 0.310 s (assumed from the TTL: no witness watched the server); client 2 tried"},
		{"pause shorter than the lease", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("client-pause", 20, 200, history.Hit{Pods: []int{1}}),
			ev(history.Acquire, 2, "k", 100, 110, ref)}, false, "before client 1's lease"},
		{"pause of a pod that held nothing", []history.Event{
			window("client-pause", 20, 470, history.Hit{Pods: []int{1}}), ev(history.Acquire, 2, "k", 330, 340, ok)}, false, "held no lock"},
		{"nobody else tried", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("slow-holder", 20, 470, history.Hit{Pods: []int{1}})}, false, "no other pod tried"},
		{"late winner", []history.Event{
			window("slow-reply", 0, 500, history.Hit{Delay: 450 * time.Millisecond}), ev(history.Acquire, 1, "k", 10, 460, ok)}, true, "won"},
		{"lock gave up behind held-back replies", []history.Event{
			window("slow-reply", 0, 500, history.Hit{Delay: 450 * time.Millisecond}), ev(history.Acquire, 1, "k", 10, 70, ind)}, true, "gave up after 60 ms"},
		{"only refusals came back late", []history.Event{
			window("slow-reply", 0, 500, history.Hit{Delay: 450 * time.Millisecond}), ev(history.Acquire, 1, "k", 10, 460, ref)}, false, "no acquire"},
		{"the only node back empty under a live lease", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("node-restart", 20, 40, history.Hit{Nodes: []string{"node0"}})}, true, "1 of 1 nodes"},
		{"node back after the holder released", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("node-restart", 20, 90, history.Hit{Nodes: []string{"node0"}}), ev(history.Release, 1, "k", 50, 55, ok)}, false, "no lease was live"},
		{"delayed restart past the TTL", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("node-restart-delayed", 20, 500, history.Hit{Nodes: []string{"node0"}})}, true, "killed"},
		{"delayed restart not past the TTL", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("node-restart-delayed", 20, 200, history.Hit{Nodes: []string{"node0"}})}, false, "not past"},
		{"acquired while a node was cut off", []history.Event{
			window("minority-partition", 0, 600, history.Hit{Nodes: []string{"node1"}}), ev(history.Acquire, 1, "k", 10, 30, ok)}, true, "while node1 was cut off"},
		{"promoted replica lacked a held key", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("failover", 20, 400, history.Hit{Nodes: []string{"primary", "replica"}}),
			probe("k", "", false, 30)}, true, "lacked k"},
		{"promoted replica had the key", []history.Event{
			ev(history.Acquire, 1, "k", 0, 10, ok), window("failover", 20, 400, history.Hit{Nodes: []string{"primary", "replica"}}),
			probe("k", "", true, 30)}, false, "had every key"},
	}
	// Three nodes: one restart under a lease is survivable, the second
	// under the same lease is the danger.
	js := judge(t, window("node-restart", 200, 220, history.Hit{Nodes: []string{"node2"}}), window("node-restart", 230, 250, history.Hit{Nodes: []string{"node0"}}),
		ev(history.Acquire, 1, "k", 240, 260, ok), window("node-restart", 270, 290, history.Hit{Nodes: []string{"node1"}}), window("node-restart", 300, 320, history.Hit{Nodes: []string{"node2"}}))
	if len(js) != 4 || js[2].Exercised || !js[3].Exercised || !strings.Contains(js[3].Detail, "2 of 3 nodes (node1, node2)") {
		t.Errorf("majority rule: %+v", js)
	}
	for _, c := range cases {
		js := judge(t, c.evs...)
		if len(js) != 1 {
			t.Errorf("%s: %d judgments, want 1", c.name, len(js))
			continue
		}
		if js[0].Exercised != c.want || !strings.Contains(js[0].Detail, c.phrase) {
			t.Errorf("%s: exercised %v (%q), want %v with %q", c.name, js[0].Exercised, js[0].Detail, c.want, c.phrase)
		}
	}
}

// TestEveryKindDefinesItsMoment: no fault kind is registered without a
// dangerous moment, or its cells could never be judged.
func TestEveryKindDefinesItsMoment(t *testing.T) {
	for _, k := range Kinds() {
		if k.Danger == nil || k.Moment == "" {
			t.Errorf("fault kind %s defines no dangerous moment", k.Name)
		}
	}
}

// judgeOn judges evs as a history of a deployment of the given nodes.
func judgeOn(nodes int, evs ...history.Event) []Judgment {
	for i := range evs {
		evs[i].ID = int64(i)
	}
	h := &history.History{Events: evs}
	h.Header.Nodes = nodes
	return Judge(h, 300*time.Millisecond)
}

func probe(key, value string, exists bool, at int64) history.Event {
	return history.Event{Kind: history.Probe, Client: -1, Key: key, Call: at * ms, Return: at * ms, Outcome: history.Ok,
		Window: history.ProbeWindow("node1", exists, value)}
}

// TestQuorumAndSentinelMoments: a clock jump on a quorum lock counts only
// on a node of a holder's bare majority; a Sentinel failover counts under
// a lease taken from the old primary (killed) or an ask of the cut-off
// primary (partition), and says what the promoted replica had.
func TestQuorumAndSentinelMoments(t *testing.T) {
	ok := history.Ok
	held := ev(history.Acquire, 1, "k", 0, 10, ok)
	held.Token = "t1"
	tried := ev(history.Acquire, 2, "k", 100, 110, history.Refused)
	for _, c := range []struct {
		name   string
		nodes  int
		evs    []history.Event
		want   bool
		phrase string
	}{
		{"jump on a bare majority's node", 3, []history.Event{held, window("clock-jump", 50, 350, history.Hit{Nodes: []string{"node0"}, Jump: 600 * time.Millisecond, BareMajority: true}), tried}, true, "jumped 600 ms"},
		{"jump when the holder was on every node", 3, []history.Event{held, window("clock-jump", 50, 350, history.Hit{Nodes: []string{"node0"}, Jump: 600 * time.Millisecond}), tried}, false, "no holder was on a bare majority"},
		{"jump on a single node", 1, []history.Event{held, window("clock-jump", 50, 350, history.Hit{Nodes: []string{"node0"}, Jump: 600 * time.Millisecond}), tried}, true, "jumped 600 ms"},
		{"killed primary, key lost", 2, []history.Event{held, window("sentinel-failover", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}}), probe("k", "", false, 200)}, true, "it lacked the key"},
		{"killed primary, an older lease's key", 2, []history.Event{
			func() history.Event { e := ev(history.Acquire, 3, "k", -500, -490, ok); e.Token = "t0"; return e }(),
			ev(history.Release, 3, "k", -5, -4, ok), held,
			window("sentinel-failover", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}}), probe("k", "t0", true, 200)}, true, "an older lease's key"},
		{"killed primary, key kept (WAIT)", 2, []history.Event{held, window("sentinel-failover", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}}), probe("k", "t1", true, 200)}, true, "it had the key"},
		{"killed primary, no promotion", 2, []history.Event{held, window("sentinel-failover", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}})}, false, "did not promote"},
		{"cut-off primary asked before the promotion", 2, []history.Event{window("sentinel-partition", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}}),
			ev(history.Acquire, 2, "k", 100, 110, ok), probe("k", "", false, 600)}, true, "was granted it"},
		{"nobody asked the cut-off primary", 2, []history.Event{window("sentinel-partition", 20, 900, history.Hit{Nodes: []string{"node0", "node1"}}), probe("k", "", false, 600),
			ev(history.Acquire, 2, "k", 700, 710, ok)}, false, "no pod asked"},
	} {
		js := judgeOn(c.nodes, c.evs...)
		if len(js) != 1 {
			t.Errorf("%s: %d judgments, want 1", c.name, len(js))
			continue
		}
		if js[0].Exercised != c.want || !strings.Contains(js[0].Detail, c.phrase) {
			t.Errorf("%s: exercised %v (%q), want %v with %q", c.name, js[0].Exercised, js[0].Detail, c.want, c.phrase)
		}
	}
}
