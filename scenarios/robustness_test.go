package scenarios_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
)

// panickyLock works for a while, then panics inside Acquire, as a buggy
// lock implementation would.
type panickyLock struct {
	inner lockimpl.Locker
	calls int
}

func (p *panickyLock) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	p.calls++
	if p.calls > 20 {
		panic("lock implementation bug: nil map write")
	}
	return p.inner.Acquire(ctx, key)
}

func TestPanickingLockIsAHarnessErrorAndOtherCellsGoOn(t *testing.T) {
	sc := short("baseline", 2*time.Second)
	panicky := scenarios.Cell{Scenario: sc, Expect: scenarios.Safe.Expected(), Lock: lockimpl.Spec{Name: "panicky", Nodes: 1,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) {
			tok, err := lockimpl.NewToken(env.Clients[0], lockimpl.TokenConfig{TTL: env.TTL})
			return &panickyLock{inner: tok}, err
		}}}
	healthy := scenarios.Cell{Scenario: sc, Lock: lock(lockimpl.NameToken), Expect: scenarios.Safe.Expected()}
	start := time.Now()
	rs := scenarios.RunMatrix(context.Background(), []scenarios.Cell{panicky, healthy}, scenarios.MatrixOptions{Options: scenarios.Options{Backend: process.Backend{}}, Parallel: 2})
	if rs[0].Outcome != results.HarnessError || !strings.Contains(rs[0].Error, "nil map write") {
		t.Fatalf("panicking cell: %s", rs[0].Summary())
	}
	if rs[1].Outcome != results.Met {
		t.Fatalf("the healthy cell next to it: %s", rs[1].Summary())
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("took %v: the panic should end its cell at once", time.Since(start))
	}
}

// hangingLock ignores its context: Acquire never returns.
type hangingLock struct{ block chan struct{} }

func (h hangingLock) Acquire(context.Context, string) (lockimpl.Lease, error) {
	<-h.block
	return nil, lockimpl.ErrNotAcquired
}

func TestHangingLockTimesTheCellOut(t *testing.T) {
	block := make(chan struct{})
	defer close(block) // let the stuck goroutines go at the end of the test
	sc := short("baseline", 500*time.Millisecond)
	res := scenarios.RunCell(context.Background(), scenarios.Cell{Scenario: sc, Expect: scenarios.Safe.Expected(),
		Lock: lockimpl.Spec{Name: "hangs", Nodes: 1, New: func(lockimpl.Env) (lockimpl.Locker, error) { return hangingLock{block}, nil }}},
		scenarios.Options{Backend: process.Backend{}, CellTimeout: 2 * time.Second})
	if res.Outcome != results.HarnessError || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("%s", res.Summary())
	}
	if !strings.Contains(res.Error, "honour its context") {
		t.Fatalf("the error does not say why: %q", res.Error)
	}
}

// TestBusyPortIsRetriedOrReported: a node asked for a port someone holds
// fails with the address in the error; nodes on picked ports retry.
func TestBusyPortIsRetriedOrReported(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = process.StartNode(context.Background(), backend.NodeConfig{Port: port})
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("busy port %d: %v", port, err)
	}
	// Many nodes at once on picked ports: every one finds a free port.
	var nodes []*process.Node
	defer func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	}()
	for range 6 {
		n, err := process.StartNode(context.Background(), backend.NodeConfig{})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
}
