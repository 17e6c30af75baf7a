package deployment_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/process"
	"github.com/lockchaos/lockchaos/deployment"
	"github.com/lockchaos/lockchaos/netfault"
)

// TestBusyToxiproxyAPIPortIsAnError: a toxiproxy API address already in
// use ends New with an error naming it. Before: a panic, Close calling a
// nil *Proxies that New's error path found in its Network.
func TestBusyToxiproxyAPIPortIsAnError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	d, err := deployment.New(context.Background(), deployment.Config{Backend: process.Backend{},
		Proxies: netfault.ProxiesConfig{APIAddr: busy.Addr().String()}})
	if d != nil || !errors.Is(err, netfault.ErrAddrInUse) || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("New = %v, %v; want netfault.ErrAddrInUse naming %s", d, err, busy.Addr())
	}
}

// failingSecond starts nodes as processes, but the second start fails;
// it keeps the nodes it started.
type failingSecond struct {
	process.Backend
	started []backend.RedisNode
}

var errSecond = errors.New("the second node does not start")

func (b *failingSecond) StartNode(ctx context.Context, cfg backend.NodeConfig) (backend.RedisNode, error) {
	if len(b.started) == 1 {
		return nil, errSecond
	}
	n, err := b.Backend.StartNode(ctx, cfg)
	if err == nil {
		b.started = append(b.started, n)
	}
	return n, err
}

// TestNodeStartedBeforeAFailureIsClosed: when a node fails to start after
// another has, New returns the failure and the node that started is
// closed (killed, its dir removed), as are the proxies.
func TestNodeStartedBeforeAFailureIsClosed(t *testing.T) {
	b := &failingSecond{}
	d, err := deployment.New(context.Background(), deployment.Config{Topology: deployment.Independent, Nodes: 3, Backend: b})
	if d != nil || !errors.Is(err, errSecond) {
		t.Fatalf("New = %v, %v; want the second node's error", d, err)
	}
	if len(b.started) != 1 {
		t.Fatalf("%d node(s) started; want 1", len(b.started))
	}
	if st := b.started[0].State(); st != backend.NodeClosed {
		t.Fatalf("the node started before the failure is %s; want closed", st)
	}
}

// TestNoBackendIsAnError: the backend is chosen above (the command line,
// lockchaostest); a deployment given none says so and starts nothing.
func TestNoBackendIsAnError(t *testing.T) {
	d, err := deployment.New(context.Background(), deployment.Config{})
	if d != nil || !errors.Is(err, deployment.ErrInvalidConfig) || !strings.Contains(err.Error(), "no backend") {
		t.Fatalf("New = %v, %v; want ErrInvalidConfig: no backend", d, err)
	}
}
