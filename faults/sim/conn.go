package sim

import (
	"net"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/faults"
)

// conn is one client connection through a link: the client's pipe on one
// side, the node's on the other, and a pump each way that applies the
// link's toxics chunk by chunk.
type conn struct {
	w      *wire
	node   *Node
	client net.Conn // our end of the client's pipe
	server net.Conn // the node's pipe
	done   chan struct{}
	once   sync.Once
}

// WireLatency ± WireJitter is what every chunk takes to cross a link, one
// way, before any toxic: a real loopback round trip through the embedded
// toxiproxy measures about 137 µs (README, measured facts). Without it
// every node answers at the same virtual instant, and races the real
// network makes (two pods each winning a different node of a Redlock
// majority) become rare: clock-jump/redlock, unsafe on real Redis, was
// missed (no bare majority to jump in 6 s of virtual time). The jitter
// is drawn per chunk from the link's own seeded source, to the nanosecond
// (see draw).
const (
	WireLatency = 50 * time.Microsecond
	WireJitter  = 25 * time.Microsecond
)

// chunk is what one read brought, and when.
type chunk struct {
	data   []byte
	at     time.Time
	jitter time.Duration
	drawn  bool
}

func newConn(w *wire, node *Node, client, server net.Conn) *conn {
	return &conn{w: w, node: node, client: client, server: server, done: make(chan struct{})}
}

func (c *conn) start() {
	go c.pump(c.client, c.server, faults.Upstream)
	go c.pump(c.server, c.client, faults.Downstream)
}

// close ends the connection both ways: the client reads EOF, as after a
// reset or a dead server; every pump goroutine ends.
func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.client.Close()
		_ = c.server.Close()
		c.w.forget(c)
	})
}

// pump moves src's bytes to dst through the stream's toxics. A reader
// goroutine timestamps each chunk as it arrives, so latency counts from
// arrival (as toxiproxy's does) and a slow writer never delays reading.
func (c *conn) pump(src, dst net.Conn, dir faults.Direction) {
	q := make(chan chunk, 64)
	go c.read(src, q)
	for {
		select {
		case ch := <-q:
			if !c.deliver(dst, &ch, dir) {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (c *conn) read(src net.Conn, q chan<- chunk) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case q <- chunk{data: append([]byte(nil), buf[:n]...), at: time.Now()}:
			case <-c.done:
				return
			}
		}
		if err != nil {
			c.close()
			return
		}
	}
}

// deliver writes one chunk when the toxics let it through; false when the
// connection ended.
func (c *conn) deliver(dst net.Conn, ch *chunk, dir faults.Direction) bool {
	for {
		t, changed := c.w.stream(dir)
		switch {
		case t.reset:
			c.close()
			return false
		case t.drop:
			return true // silently gone; a heal closes the connection
		}
		if resumed := c.node.frozen(); resumed != nil {
			// A paused node neither reads requests nor sends replies.
			select {
			case <-resumed:
			case <-changed:
			case <-c.done:
				return false
			}
			continue
		}
		if !ch.drawn {
			ch.jitter, ch.drawn = c.w.draw(t.jitter+WireJitter), true
		}
		if wait := time.Until(ch.at.Add(WireLatency + t.latency + ch.jitter)); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-changed:
			case <-c.done:
				timer.Stop()
				return false
			}
			timer.Stop()
			continue
		}
		if _, err := dst.Write(ch.data); err != nil {
			c.close()
			return false
		}
		return true
	}
}
