package faults

import (
	"net"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/netfault"
)

// TestHealFailureIsReported: a link that cannot be healed (its port was
// taken while it was disabled) fails the fault loudly, rather than leave
// the link broken without a word.
func TestHealFailureIsReported(t *testing.T) {
	p, err := netfault.NewProxies(netfault.ProxiesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l, err := p.NewLink("client0->node0", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Disable(); err != nil {
		t.Fatal(err)
	}
	squatter, err := net.Listen("tcp", l.Addr())
	if err != nil {
		t.Skipf("could not take the link's port: %v", err)
	}
	defer squatter.Close()
	var injectErr error
	healLinks([]*netfault.Link{l}, &injectErr)
	if injectErr == nil || !strings.Contains(injectErr.Error(), "heal client0->node0") {
		t.Fatalf("heal error = %v, want one naming the link", injectErr)
	}
}
