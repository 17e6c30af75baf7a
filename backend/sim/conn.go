package sim

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockchaos/lockchaos/netfault"
)

// conn is one client connection through a link: two ends (the client's,
// and the one the node serves), and a pump each way that applies the
// link's toxics chunk by chunk.
//
// What an end writes is queued at once, stamped with the virtual instant
// it arrived (as a kernel buffers a write); the pump of that direction
// delivers it when the wire and the toxics let it through, and hands it
// to the other end's reader, waiting until that end reads it (a late
// reply waits in the link until the client reads, as through a net.Pipe).
// One queue per direction, not a net.Pipe and a reader goroutine each:
// the chunks, their times and the toxics' decisions are the same, with a
// third of the goroutine hand-offs per round trip.
type conn struct {
	w      *wire
	node   *Node
	client *end // the client's end
	server *end // the end the node serves
	// up and down queue what each end wrote for its pump; toServer and
	// toClient hand delivered chunks to the other end's reader.
	up, down           chan chunk
	toServer, toClient chan []byte
	done               chan struct{}
	once               sync.Once
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

// chunk is what one write brought, and when.
type chunk struct {
	data   []byte
	at     time.Time
	jitter time.Duration
	drawn  bool
}

func newConn(w *wire, node *Node) *conn {
	c := &conn{w: w, node: node, done: make(chan struct{}),
		up: make(chan chunk, 64), down: make(chan chunk, 64), toServer: make(chan []byte), toClient: make(chan []byte)}
	c.client = &end{c: c, out: c.up, in: c.toClient, rd: newDeadline(), wd: newDeadline()}
	c.server = &end{c: c, out: c.down, in: c.toServer, rd: newDeadline(), wd: newDeadline()}
	return c
}

func (c *conn) start() {
	go c.pump(c.up, c.toServer, netfault.Upstream)
	go c.pump(c.down, c.toClient, netfault.Downstream)
}

// close ends the connection both ways: each end reads EOF, as after a
// reset or a dead server; both pumps end.
func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.w.forget(c)
	})
}

// pump moves one direction's chunks through the stream's toxics to the
// reader of the other end.
func (c *conn) pump(q <-chan chunk, to chan<- []byte, dir netfault.Direction) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case ch := <-q:
			if !c.deliver(to, &ch, dir, &timer) {
				return
			}
		case <-c.done:
			return
		}
	}
}

// deliver hands one chunk over when the toxics let it through; false when
// the connection ended.
func (c *conn) deliver(to chan<- []byte, ch *chunk, dir netfault.Direction, timer **time.Timer) bool {
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
			if *timer == nil {
				*timer = time.NewTimer(wait)
			} else {
				(*timer).Reset(wait)
			}
			select {
			case <-(*timer).C:
			case <-changed:
				(*timer).Stop()
			case <-c.done:
				return false
			}
			continue
		}
		select {
		case to <- ch.data:
			return true
		case <-c.done:
			return false
		}
	}
}

// end is one end of a conn, a net.Conn with net.Pipe's errors: a read
// after the other end closed says io.EOF, after this one closed (or any
// write after either did) io.ErrClosedPipe, and a passed deadline
// os.ErrDeadlineExceeded.
type end struct {
	c      *conn
	out    chan<- chunk  // what this end writes, to its pump
	in     <-chan []byte // what the other end's pump delivers
	rmu    sync.Mutex    // one reader at a time; guards rest
	rest   []byte        // delivered, not read yet
	wmu    sync.Mutex    // one writer at a time
	closed atomic.Bool   // this end was closed (not the other)
	rd, wd *deadline
}

var _ net.Conn = (*end)(nil)

func (e *end) Read(b []byte) (int, error) {
	e.rmu.Lock()
	defer e.rmu.Unlock()
	for {
		if err := e.usable(e.rd, io.EOF); err != nil {
			return 0, err
		}
		if len(e.rest) > 0 {
			n := copy(b, e.rest)
			e.rest = e.rest[n:]
			return n, nil
		}
		expired, changed, stop := e.rd.wait()
		select {
		case data := <-e.in:
			stop()
			n := copy(b, data)
			e.rest = data[n:]
			return n, nil
		case <-e.c.done:
		case <-expired:
		case <-changed:
		}
		stop()
	}
}

func (e *end) Write(b []byte) (int, error) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	for {
		if err := e.usable(e.wd, io.ErrClosedPipe); err != nil {
			return 0, err
		}
		if len(b) == 0 {
			return 0, nil
		}
		ch := chunk{data: append([]byte(nil), b...), at: time.Now()}
		select { // the queue has room: no deadline to wait under
		case e.out <- ch:
			return len(b), nil
		default:
		}
		expired, changed, stop := e.wd.wait()
		select {
		case e.out <- ch:
			stop()
			return len(b), nil
		case <-e.c.done:
		case <-expired:
		case <-changed:
		}
		stop()
	}
}

// usable returns why this end cannot read or write now (closed, or d
// passed), or nil.
func (e *end) usable(d *deadline, ifRemote error) error {
	if err := e.gone(ifRemote); err != nil {
		return err
	}
	if d.passed() {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// gone returns the error for a closed connection, or nil: io.ErrClosedPipe
// when this end was closed, else ifRemote.
func (e *end) gone(ifRemote error) error {
	select {
	case <-e.c.done:
		if e.closed.Load() {
			return io.ErrClosedPipe
		}
		return ifRemote
	default:
		return nil
	}
}

// Close ends the whole connection (the other end reads EOF).
func (e *end) Close() error {
	e.closed.Store(true)
	e.c.close()
	return nil
}

func (e *end) LocalAddr() net.Addr  { return simAddr{} }
func (e *end) RemoteAddr() net.Addr { return simAddr{} }

func (e *end) SetDeadline(t time.Time) error {
	e.rd.set(t)
	e.wd.set(t)
	return nil
}

func (e *end) SetReadDeadline(t time.Time) error  { e.rd.set(t); return nil }
func (e *end) SetWriteDeadline(t time.Time) error { e.wd.set(t); return nil }

type simAddr struct{}

func (simAddr) Network() string { return "sim" }
func (simAddr) String() string  { return "sim" }

// deadline is one direction's deadline. Setting it wakes a Read or Write
// waiting under the old one, which then waits again under the new one.
type deadline struct {
	mu      sync.Mutex
	t       time.Time
	changed chan struct{} // closed by set while waiting is true
	waiting bool
	timer   *time.Timer
}

func newDeadline() *deadline { return &deadline{changed: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.Equal(d.t) {
		return
	}
	d.t = t
	if d.waiting { // go-redis sets deadlines before it reads, not during
		close(d.changed)
		d.changed = make(chan struct{})
		d.waiting = false
	}
}

// passed reports whether the deadline is set and not in the future.
func (d *deadline) passed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.t.IsZero() && !time.Now().Before(d.t)
}

// wait returns a channel that fires when the deadline passes (nil when
// none is set), one that closes when it is set again, and a function to
// call when done waiting. Called by one goroutine at a time (the end's
// reader or writer).
func (d *deadline) wait() (<-chan time.Time, <-chan struct{}, func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting = true
	if d.t.IsZero() {
		return nil, d.changed, func() {}
	}
	left := time.Until(d.t)
	if d.timer == nil {
		d.timer = time.NewTimer(left)
	} else {
		d.timer.Reset(left)
	}
	timer := d.timer
	return timer.C, d.changed, func() { timer.Stop() }
}
