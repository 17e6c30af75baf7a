// Package netfault is the network between a cell's pods and its Redis
// nodes: one Link per (pod, node) pair plus one per replication link, each
// carried by a Wire (an embedded toxiproxy proxy on a real network, an
// in-memory pipe in the simulation) that applies toxics in toxiproxy's
// vocabulary: latency, a silent blackhole, a reset, a loud stop. Faults act
// on links; they never own them (the deployment does).
package netfault

import (
	"context"
	"errors"
	"net"
)

// Sentinel errors. Callers test them with errors.Is; the wrapping error says
// which link and why.
var (
	// ErrClosed means the network was already closed.
	ErrClosed = errors.New("netfault: closed")
	// ErrInvalidConfig means a config or a toxic's parameters cannot work.
	ErrInvalidConfig = errors.New("netfault: invalid config")
	// ErrAddrInUse means an address asked for is taken.
	ErrAddrInUse = errors.New("netfault: address in use")
)

// Network makes a cell's links. The embedded toxiproxy (Proxies) is the
// default; a backend with a network of its own brings one.
type Network interface {
	NewLink(name, upstream string) (*Link, error)
	Links() []*Link
	Close() error
}

// Dialer is a Network whose addresses only its own dial reaches (they are
// not on any real network); clients dial through it.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}
