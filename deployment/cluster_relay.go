package deployment

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/netfault"
)

// A Redis Cluster node announces one address to everyone (its client port
// and its bus port), so a proxy in front of it would be shared by every
// peer and could not cut one pair. Each node therefore announces a relay
// of the harness's, and connects out from a loopback address of its own
// (bind-source-addr, 127.0.0.x): the relay knows the caller by that source
// and carries the connection through the pair's own proxy. Every byte
// between two nodes (gossip, failure reports, votes, replication,
// MIGRATE) crosses a toxiproxy link named for the pair.

// relayDialer dials the pairs' links from 127.0.0.3, not 127.0.0.1: the
// relays' connections come and go with every fault, and a local port of
// theirs on 127.0.0.1 is one a disabled link could not listen on again.
var relayDialer = net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}

// relay is one announced port of one node.
type relay struct {
	ln net.Listener
	// who names the caller of a connection (its source address; an etcd
	// peer's X-Server-From header) and gives back what it read to know.
	who   func(net.Conn) (caller string, in io.Reader, err error)
	route func(caller string) (addr string, ok bool)

	mu     sync.Mutex
	conns  map[net.Conn]string // each carried connection, both ends, by the calling node's address
	closed bool
	wg     sync.WaitGroup
}

// newRelay listens on a free loopback port; route names the link a
// connection from srcIP goes through (false: a caller that is no node of
// the cluster, refused).
func newRelay(route func(string) (*netfault.Link, bool)) (*relay, error) {
	bySource := func(c net.Conn) (string, io.Reader, error) {
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		return host, c, err
	}
	return newRelayBy(bySource, func(caller string) (string, bool) {
		l, ok := route(caller)
		if !ok {
			return "", false
		}
		return l.Addr(), true
	})
}

// newRelayBy listens on a free loopback port; who names each
// connection's caller, route the address its bytes go to (false:
// refused).
func newRelayBy(who func(net.Conn) (string, io.Reader, error), route func(string) (string, bool)) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, who: who, route: route, conns: map[net.Conn]string{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// Port is the port the node announces.
func (r *relay) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if r.isClosed() {
				return
			}
			// Out of file descriptors, say: the node's announced port
			// must not die with one failed accept.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !r.track(c, "") {
			c.Close()
			return
		}
		r.wg.Add(1)
		go r.carry(c)
	}
}

func (r *relay) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// track remembers c, carried for the node at srcIP, so Close and drop can
// end it; false once the relay is closed.
func (r *relay) track(c net.Conn, srcIP string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = srcIP
	return true
}

// drop closes every connection carried for the node at srcIP, both ends:
// what the pair's proxy still held back for it (a lagging replication
// stream) is lost, as with a primary that dies with writes in flight. The
// node may connect again at once; nothing stays cut.
func (r *relay) drop(srcIP string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c, ip := range r.conns {
		if ip == srcIP {
			c.Close()
		}
	}
}

func (r *relay) forget(cs ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		delete(r.conns, c)
		c.Close()
	}
}

// carry joins in to the pair's proxy until either side closes: a link the
// fault disables closes its side, and with it this one, as a cut cable
// would end the peer's connection.
func (r *relay) carry(in net.Conn) {
	defer r.wg.Done()
	host, rd, err := r.who(in)
	if err != nil || !r.track(in, host) {
		r.forget(in)
		return
	}
	addr, ok := r.route(host)
	if !ok {
		r.forget(in)
		return
	}
	out, err := relayDialer.Dial("tcp", addr)
	if err != nil || !r.track(out, host) {
		if out != nil {
			out.Close()
		}
		r.forget(in)
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, rd)
		r.forget(in, out)
		close(done)
	}()
	_, _ = io.Copy(in, out)
	r.forget(in, out)
	<-done
}

// Close stops listening, ends every carried connection and waits for its
// goroutines.
func (r *relay) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.ln.Close()
	r.wg.Wait()
}
