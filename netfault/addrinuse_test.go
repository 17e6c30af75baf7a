package netfault_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/netfault"
)

// TestAPIAddressInUseSaysSo: a toxiproxy API address another program
// listens on is an ErrAddrInUse naming the address and what to do.
func TestAPIAddressInUseSaysSo(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	p, err := netfault.NewProxies(netfault.ProxiesConfig{APIAddr: addr})
	if p != nil || !errors.Is(err, netfault.ErrAddrInUse) {
		t.Fatalf("NewProxies on a busy %s = %v, %v; want nil and netfault.ErrAddrInUse", addr, p, err)
	}
	for _, want := range []string{addr + " is taken", "port 0 for a free one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestNilProxiesCloseIsANoOp: proxies that never started have nothing to
// close (a deployment's error path closes whatever it has).
func TestNilProxiesCloseIsANoOp(t *testing.T) {
	var p *netfault.Proxies
	if err := p.Close(); err != nil {
		t.Fatalf("Close of nil proxies: %v", err)
	}
}
