package reports

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// Clock bands say which node's clock moved and where it stands: jumps on
// one node add up, a replica skew sets the replica's offset.
func TestClockFaultBandsShowEachNodesOffset(t *testing.T) {
	clocks := map[string]time.Duration{}
	jump := func(fault string, hit history.Hit) string {
		return faultLabel(history.Event{Kind: history.Fault, Window: history.FaultWindow(fault, hit)}, clocks)
	}
	ms := time.Millisecond
	for _, c := range []struct{ got, want string }{
		{jump("clock-jump", history.Hit{Nodes: []string{"node1"}, Jump: 600 * ms}), "clock-jump node1 clock +0.600s"},
		{jump("clock-jump", history.Hit{Nodes: []string{"node1"}, Jump: 600 * ms}), "clock-jump node1 clock +1.200s"},
		{jump("clock-jump", history.Hit{Nodes: []string{"node2"}, Jump: -300 * ms}), "clock-jump node2 clock -0.300s"},
		{jump("replica-clock-skew", history.Hit{Nodes: []string{"primary", "replica"}, Jump: 600 * ms}), "replica-clock-skew replica clock +0.600s"},
		{jump("client-pause", history.Hit{Pods: []int{3}}), "client-pause"},
	} {
		if c.got != c.want {
			t.Errorf("label %q, want %q", c.got, c.want)
		}
	}
}

// Renewals are ticks on the holder's lane, ok, refused and indefinite
// told apart, each with its time and outcome in a tooltip; a history
// without renewals has none.
func TestTimelineMarksRenewals(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	h := &history.History{Header: history.Header{Lock: "token-watchdog", Clients: 2}, End: ms(1000)}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	add(history.Event{Kind: history.Acquire, Client: 0, Key: "k", Token: "a", Call: 0, Return: ms(1), Outcome: history.Ok})
	for i := range int64(5) {
		add(history.Event{Kind: history.Renew, Client: 0, Key: "k", Token: "a", Call: ms(100 + 100*i), Return: ms(101 + 100*i),
			Outcome: history.Ok})
	}
	add(history.Event{Kind: history.Renew, Client: 0, Key: "k", Token: "a", Call: ms(600), Return: ms(601), Outcome: history.Refused})
	add(history.Event{Kind: history.Renew, Client: 0, Key: "k", Token: "a", Call: ms(700), Return: ms(750),
		Outcome: history.Indefinite, Err: "i/o timeout"})
	add(history.Event{Kind: history.Release, Client: 0, Key: "k", Token: "a", Call: ms(800), Return: ms(801), Outcome: history.Refused})
	add(history.Event{Kind: history.Acquire, Client: 1, Key: "k", Token: "b", Call: ms(850), Return: ms(851), Outcome: history.Ok})
	svg := string(buildTimeline(h, &checker.Report{}).svg(0, h.End, 1200))
	for cls, want := range map[string]int{`class="renew-ok"`: 5, `class="renew-refused"`: 1, `class="renew-indefinite"`: 1} {
		if got := strings.Count(svg, cls); got != want {
			t.Errorf("%d of %s, want %d", got, cls, want)
		}
	}
	for _, title := range []string{
		"<title>client 0 renewed k at 0.100 s (took 1.0 ms)</title>",
		"<title>client 0&#39;s renewal of k at 0.600 s refused: the key was no longer its own</title>",
		"<title>client 0&#39;s renewal of k at 0.700 s indefinite after 50.0 ms: i/o timeout</title>",
	} {
		if !strings.Contains(svg, title) {
			t.Errorf("no tooltip %q", title)
		}
	}
	// Renewals on one client's lane only: the lane of client 0.
	lane0 := fmt.Sprintf(`y1="%d"`, topMargin-3)
	if strings.Count(svg, lane0) != 5 {
		t.Errorf("renewal ticks off client 0's lane: %d at its top", strings.Count(svg, lane0))
	}
	var plain []history.Event
	for _, e := range h.Events {
		if e.Kind != history.Renew {
			plain = append(plain, e)
		}
	}
	h.Events = plain
	if svg := string(buildTimeline(h, &checker.Report{}).svg(0, h.End, 1200)); strings.Contains(svg, "renew") {
		t.Error("a history without renewals has renewal marks")
	}
}
