package reports

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Clock bands say which node's clock moved and where it stands: jumps on
// one node add up, a replica skew sets the replica's offset.
func TestClockFaultBandsShowEachNodesOffset(t *testing.T) {
	clocks := map[string]time.Duration{}
	jump := func(fault string, targets ...string) string {
		return faultLabel(history.Event{Kind: history.Fault, Window: &history.Window{Fault: fault, Targets: targets}}, clocks)
	}
	for _, c := range []struct{ got, want string }{
		{jump("clock-jump", "node1", "jump=600ms"), "clock-jump node1 clock +0.600s"},
		{jump("clock-jump", "node1", "jump=600ms"), "clock-jump node1 clock +1.200s"},
		{jump("clock-jump", "node2", "jump=-300ms"), "clock-jump node2 clock -0.300s"},
		{jump("replica-clock-skew", "primary", "replica", "jump=600ms"), "replica-clock-skew replica clock +0.600s"},
		{jump("client-pause", "client3"), "client-pause"},
	} {
		if c.got != c.want {
			t.Errorf("label %q, want %q", c.got, c.want)
		}
	}
}
