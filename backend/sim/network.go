package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/netfault"
)

// Network is a cell's links in memory: each link has a simulated address,
// and a connection dialed to it is a pair of pipes through two pumps (one
// per direction) that apply the link's toxics, with the vocabulary of the
// embedded toxiproxy: latency, silent drop (timeout), reset, disable,
// repoint. It implements netfault.Network and netfault.Dialer.
type Network struct {
	mu     sync.Mutex
	links  map[string]*wire // by address
	order  []*netfault.Link
	closed bool
}

var (
	_ netfault.Network = (*Network)(nil)
	_ netfault.Dialer  = (*Network)(nil)
	_ netfault.Wire    = (*wire)(nil)
)

// NewNetwork returns an empty network.
func NewNetwork() *Network { return &Network{links: map[string]*wire{}} }

// NewLink implements netfault.Network.
func (n *Network) NewLink(name, upstream string) (*netfault.Link, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("link %s: %w", name, netfault.ErrClosed)
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	w := &wire{name: name, addr: nextAddr(7000), upstream: upstream, toxics: map[string]netfault.Toxic{},
		changed: make(chan struct{}), conns: map[*conn]struct{}{},
		// Jitter is drawn per link from its name: the same schedule
		// draws the same jitters (but see the package doc on order).
		rng: rand.New(rand.NewPCG(h.Sum64(), 0x5e1f))}
	l := netfault.NewLink(name, w.addr, upstream, w)
	n.links[w.addr] = w
	n.order = append(n.order, l)
	return l, nil
}

// Links implements netfault.Network.
func (n *Network) Links() []*netfault.Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*netfault.Link(nil), n.order...)
}

// Close implements netfault.Network: every connection through the network
// closes, so every pump ends.
func (n *Network) Close() error {
	n.mu.Lock()
	n.closed = true
	ws := make([]*wire, 0, len(n.links))
	for _, w := range n.links {
		ws = append(ws, w)
	}
	n.mu.Unlock()
	for _, w := range ws {
		w.closeAll()
	}
	return nil
}

// DialContext implements netfault.Dialer: a connection to a link's address
// runs through that link to its upstream node.
func (n *Network) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	w, closed := n.links[addr], n.closed
	n.mu.Unlock()
	if w == nil || closed {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("sim: no link at %s: %w", addr, syscall.ECONNREFUSED)}
	}
	return w.dial(ctx)
}

// wire is one link's netfault.Wire: its toxics and its open connections.
type wire struct {
	name, addr string

	mu       sync.Mutex
	upstream string
	stopped  bool
	toxics   map[string]netfault.Toxic
	changed  chan struct{} // closed and replaced when the toxics change
	conns    map[*conn]struct{}
	rng      *rand.Rand
}

// errRefused is what dialing a stopped link or a killed node says.
var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

func (w *wire) dial(context.Context) (net.Conn, error) {
	w.mu.Lock()
	stopped, upstream := w.stopped, w.upstream
	w.mu.Unlock()
	if stopped {
		return nil, errRefused
	}
	node := lookupNode(upstream)
	c := newConn(w, node)
	if node == nil || !node.serve(c.server) {
		// As toxiproxy does: the link itself accepts, and closes the
		// connection when its upstream refuses. The client sees a dial
		// that worked and then EOF, not a dial error (which would trip
		// go-redis's dial breaker, as it never trips through a proxy).
		c.close()
		return c.client, nil
	}
	w.mu.Lock()
	if w.stopped { // stopped while we dialed
		w.mu.Unlock()
		c.close()
		return nil, errRefused
	}
	w.conns[c] = struct{}{}
	w.mu.Unlock()
	c.start()
	return c.client, nil
}

// onStream is what the toxics do to one stream right now.
type onStream struct {
	latency, jitter time.Duration
	drop, reset     bool
}

// stream returns the toxics on one stream now, and a channel that closes
// when they change (a chunk held back re-reads them: a healed latency
// releases what it held at once, as toxiproxy's does).
func (w *wire) stream(dir netfault.Direction) (onStream, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var o onStream
	for _, t := range w.toxics {
		if t.Stream != dir {
			continue
		}
		switch t.Kind {
		case netfault.LatencyToxic:
			o.latency, o.jitter = t.Latency, t.Jitter
		case netfault.TimeoutToxic:
			o.drop = true
		case netfault.ResetPeerToxic:
			o.reset = true
		}
	}
	return o, w.changed
}

// draw returns a jitter in [-j, j], to the nanosecond. Coarse jitter
// (25 µs steps, tried to save bubble wake-ups) made chunks of different
// pods land on the same virtual instant, where goroutine order decides:
// same-seed runs of fenced and redlock then agreed on their evidence
// counts in 6-9 of 20 (20 of 20 to the nanosecond) for 9% less CPU.
func (w *wire) draw(j time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Duration(w.rng.Int64N(2*int64(j)+1)) - j
}

// AddToxic implements netfault.Wire.
func (w *wire) AddToxic(name string, t netfault.Toxic) error {
	switch t.Kind {
	case netfault.LatencyToxic, netfault.TimeoutToxic, netfault.ResetPeerToxic:
	default:
		return fmt.Errorf("%w: sim link %s: unknown toxic %q", netfault.ErrInvalidConfig, w.name, t.Kind)
	}
	w.mu.Lock()
	w.toxics[name] = t
	w.notifyLocked()
	w.mu.Unlock()
	return nil
}

// RemoveToxic implements netfault.Wire. Removing a silent drop closes the
// connections it held, as toxiproxy's timeout toxic does on cleanup.
func (w *wire) RemoveToxic(name string) {
	w.mu.Lock()
	t, ok := w.toxics[name]
	delete(w.toxics, name)
	w.notifyLocked()
	w.mu.Unlock()
	if ok && t.Kind == netfault.TimeoutToxic {
		w.closeAll()
	}
}

// ResetToxics implements netfault.Wire.
func (w *wire) ResetToxics() {
	w.mu.Lock()
	names := make([]string, 0, len(w.toxics))
	for name := range w.toxics {
		names = append(names, name)
	}
	w.mu.Unlock()
	sort.Strings(names)
	for _, name := range names {
		w.RemoveToxic(name)
	}
}

func (w *wire) notifyLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Stop implements netfault.Wire.
func (w *wire) Stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.closeAll()
}

// Start implements netfault.Wire.
func (w *wire) Start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = false
	return nil
}

// Repoint implements netfault.Wire.
func (w *wire) Repoint(upstream string) error {
	if lookupNode(upstream) == nil {
		return errors.New("sim: no node at " + upstream)
	}
	w.mu.Lock()
	w.upstream = upstream
	w.mu.Unlock()
	w.closeAll()
	return nil
}

func (w *wire) closeAll() {
	w.mu.Lock()
	cs := make([]*conn, 0, len(w.conns))
	for c := range w.conns {
		cs = append(cs, c)
	}
	w.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

func (w *wire) forget(c *conn) {
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}
