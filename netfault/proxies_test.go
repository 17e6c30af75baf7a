package netfault_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/lockchaos/lockchaos/netfault"
)

// TestProxiesLeaveZerologAlone: the embedded toxiproxy is silenced
// through its own logger, not by changing zerolog's process-wide level,
// which belongs to the user whose test imports the harness; and a toxic's
// life (add, replace, remove, stop, start) writes nothing to a logger the
// user's contexts might carry.
func TestProxiesLeaveZerologAlone(t *testing.T) {
	before := zerolog.GlobalLevel()
	var out bytes.Buffer
	old := zerolog.DefaultContextLogger
	l := zerolog.New(&out)
	zerolog.DefaultContextLogger = &l
	defer func() { zerolog.DefaultContextLogger = old }()

	upstream, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	p, err := netfault.NewProxies(netfault.ProxiesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	link, err := p.NewLink("client0->node0", upstream.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return link.Latency(netfault.Both, 5*time.Millisecond, 0) },
		func() error { return link.Latency(netfault.Both, 10*time.Millisecond, 0) },
		func() error { return link.Blackhole(netfault.Upstream) },
		link.Heal, link.Disable, link.Enable, link.Reset, link.Heal,
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := zerolog.GlobalLevel(); got != before {
		t.Errorf("zerolog's global level went from %v to %v", before, got)
	}
	if out.Len() > 0 {
		t.Errorf("toxiproxy logged through a context logger:\n%s", out.String())
	}
}
