package process_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/clockshim"
	"github.com/lockchaos/lockchaos/backend/process"

	"github.com/lockchaos/lockchaos/backend/backendtest"
)

func clockNode(t *testing.T) *process.Node {
	t.Helper()
	if err := clockshim.Available(); err != nil {
		if errors.Is(err, backend.ErrNoClockShim) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return startNode(t, backend.NodeConfig{Name: "clocked", Clock: true})
}

// nodeTime is the node's TIME reply.
func nodeTime(t *testing.T, n *process.Node) time.Time {
	t.Helper()
	v, err := n.Do(context.Background(), "TIME")
	if err != nil {
		t.Fatal(err)
	}
	parts := v.([]any)
	sec, usec := parseInt(t, parts[0]), parseInt(t, parts[1])
	return time.Unix(sec, usec*1000)
}

func parseInt(t *testing.T, v any) int64 {
	t.Helper()
	var n int64
	for _, c := range v.(string) {
		n = n*10 + int64(c-'0')
	}
	return n
}

// The facts, on a real redis-server under the shim: a forward jump
// expires a key early and moves TIME; a restart keeps the offset.
func TestClockShiftMovesTheNodesWallClockAndExpiresKeys(t *testing.T) {
	n := clockNode(t)
	ctx := context.Background()
	if d := time.Since(nodeTime(t, n)); d > time.Second || d < -time.Second {
		t.Fatalf("unshifted node is %v off this clock", d)
	}
	if _, err := n.Do(ctx, "SET", "lock", "me", "PX", "5000"); err != nil {
		t.Fatal(err)
	}
	if err := n.ShiftClock(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ahead := time.Until(nodeTime(t, n))
	if ahead < 9*time.Second || ahead > 11*time.Second {
		t.Fatalf("after a 10s shift the node's TIME is %v ahead", ahead)
	}
	v, err := n.Do(ctx, "EXISTS", "lock")
	if err != nil {
		t.Fatal(err)
	}
	if v.(int64) != 0 {
		t.Fatal("a key with 5s left survived a 10s forward jump")
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.ClockOffset(); got != 10*time.Second {
		t.Fatalf("offset after restart %v, want 10s", got)
	}
	if ahead := time.Until(nodeTime(t, n)); ahead < 9*time.Second {
		t.Fatalf("after a restart the node is only %v ahead", ahead)
	}
}

func TestShiftClockWithoutClockControlSaysSo(t *testing.T) {
	n := startNode(t, backend.NodeConfig{Name: "plain"})
	if err := n.ShiftClock(time.Second); !errors.Is(err, backend.ErrNoClockShim) {
		t.Fatalf("err = %v, want backend.ErrNoClockShim", err)
	}
}

// BenchmarkClockShiftTakesEffect measures how long after ShiftClock the
// node's TIME shows the jump (the target: within 10 ms): the time of one
// TIME round trip after the shift, which is when the next clock call
// happens.
func BenchmarkClockShiftTakesEffect(b *testing.B) {
	if err := clockshim.Available(); err != nil {
		b.Skip(err)
	}
	n, err := process.StartNode(context.Background(), backend.NodeConfig{Name: "clocked", Clock: true})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	backendtest.ClockShift(b, n, backendtest.Client(b, n.Addr()))
}
