package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// ErrClosed means the cell ended while a fault was waiting on its pods.
var ErrClosed = errors.New("workload: control closed")

// Control is the client side of fault injection, kept with the pods it
// acts on: it pauses pods (stop-the-world), stretches chosen critical
// sections, and knows who holds a lock right now so faults can aim at held
// moments. Run wires it into every client through Hooks; lock
// implementations never see it, but every connection they make with Dial
// freezes with their pod.
type Control struct {
	pods    int
	mu      sync.Mutex
	paused  map[int]chan struct{} // closed on resume
	held    map[int]string        // pod -> key it holds
	changed chan struct{}         // closed and replaced on every acquisition
	seq     int                   // acquisitions so far
	log     []acquisition         // the latest few, for NextAcquire
	slow    []*slowRequest
	winners []*winnerRequest      // for AwaitAcquireHolding, oldest first
	longer  map[int]time.Duration // pod -> work of its current critical section
	hooks   map[int][]pauseHooks  // what to do beyond the pod's own goroutines
	closed  chan struct{}
	once    sync.Once
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)

	fates      map[int]*fate // each pod's current incarnation (lives.go)
	conns      map[int]map[net.Conn]struct{}
	crashHooks map[int][]func()
}

type pauseHooks struct{ stop, cont func() }

type acquisition struct{ seq, pod int }

type slowRequest struct {
	work    time.Duration
	started chan slowStart
}

type slowStart struct {
	pod int
	at  time.Time
}

// winnerRequest asks that the next acquisition's critical section run for
// work; the acquiring pod is sent on pod.
type winnerRequest struct {
	work time.Duration
	pod  chan int
}

// NewControl returns the control of a cell's pods, nobody paused.
func NewControl(pods int) *Control {
	return &Control{pods: pods, paused: map[int]chan struct{}{}, held: map[int]string{}, longer: map[int]time.Duration{},
		hooks: map[int][]pauseHooks{}, changed: make(chan struct{}), closed: make(chan struct{}),
		fates: map[int]*fate{}, conns: map[int]map[net.Conn]struct{}{}, crashHooks: map[int][]func(){}}
}

// Pods returns how many pods the cell has.
func (c *Control) Pods() int { return c.pods }

// Close releases every paused pod and every waiter, for good.
func (c *Control) Close() {
	c.once.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		close(c.closed)
		for id, ch := range c.paused {
			for _, h := range c.hooks[id] {
				h.cont()
			}
			close(ch)
			delete(c.paused, id)
		}
	})
}

// Pause freezes a pod: its worker stops at its next step, every
// connection it dialed through Dial stops sending and delivering replies
// (watchdog renewals included), and its registered hooks run (a driver
// process gets SIGSTOP), until Resume.
func (c *Control) Pause(pod int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.paused[pod]; !ok {
		c.paused[pod] = make(chan struct{})
		for _, h := range c.hooks[pod] {
			h.stop()
		}
	}
}

// Resume lets a paused pod go on.
func (c *Control) Resume(pod int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.paused[pod]; ok {
		for _, h := range c.hooks[pod] {
			h.cont()
		}
		close(ch)
		delete(c.paused, pod)
	}
}

// OnPause registers what else to stop and continue with pod (the driver
// process of a lock that runs outside the harness).
func (c *Control) OnPause(pod int, stop, cont func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks[pod] = append(c.hooks[pod], pauseHooks{stop: stop, cont: cont})
}

// Gate blocks while pod is paused; it returns early when ctx is done or
// the control is closed. The workload calls it before every step.
func (c *Control) Gate(ctx context.Context, pod int) {
	c.mu.Lock()
	ch := c.paused[pod]
	c.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-c.closed:
	}
}

// Dial returns pod's dialer: connections that freeze while the pod is
// paused, whatever their own deadlines, as a stopped process's would. A
// write waits before it leaves; a reply that arrives waits before it is
// handed over. Any client library that takes a dialer can use it.
func (c *Control) Dial(pod int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := c.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if c.dead(pod) {
			return nil, fmt.Errorf("dial %s: %w", addr, ErrPodDead)
		}
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		p := &pausableConn{Conn: conn, gate: func() { c.Gate(context.Background(), pod) }}
		if !c.track(pod, p) {
			_ = conn.Close()
			return nil, fmt.Errorf("dial %s: %w", addr, ErrPodDead)
		}
		p.untrack = func() { c.untrack(pod, p) }
		if _, ok := conn.(syscall.Conn); ok {
			return &pausableSocket{p}, nil
		}
		// An in-memory connection has no socket: offering go-redis one to
		// peek at would fail its health check on every reuse.
		return p, nil
	}
}

// UseDialer makes Dial connect through d instead of the real network (the
// simulation's links have addresses only its own dial reaches). Call it
// before the first Dial.
func (c *Control) UseDialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) {
	c.dial = d
}

type pausableConn struct {
	net.Conn
	gate    func()
	untrack func()
}

func (p *pausableConn) Close() error {
	if p.untrack != nil {
		p.untrack()
	}
	return p.Conn.Close()
}

func (p *pausableConn) Write(b []byte) (int, error) {
	p.gate()
	return p.Conn.Write(b)
}

func (p *pausableConn) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	p.gate()
	return n, err
}

// pausableSocket is a pausableConn over a real socket.
type pausableSocket struct{ *pausableConn }

// SyscallConn lets go-redis's pool health check peek at the socket (it
// finds connections a healed partition closed).
func (p *pausableSocket) SyscallConn() (syscall.RawConn, error) {
	return p.Conn.(syscall.Conn).SyscallConn()
}

// acquired records that pod holds key (a Hooks.Acquired).
func (c *Control) acquired(pod int, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone(pod) {
		return // a hung pod's last acquire: it abandons this lease at once
	}
	c.held[pod] = key
	if len(c.winners) > 0 {
		r := c.winners[0]
		c.winners = c.winners[1:]
		c.longer[pod] = r.work
		r.pod <- pod // buffered
	}
	c.seq++
	c.log = append(c.log, acquisition{seq: c.seq, pod: pod})
	if len(c.log) > 64 {
		c.log = c.log[len(c.log)-64:]
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// released records that pod gave its lock up (a Hooks.Released).
func (c *Control) released(pod int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, pod)
	// A section that ended before its work (the lock said the lease was
	// lost) leaves no longer work behind for the pod's next one.
	delete(c.longer, pod)
}

// Holder waits until some pod holds a lock and returns one (chosen with
// rng among the current holders), so a fault fires at a held moment.
func (c *Control) Holder(ctx context.Context, rng *rand.Rand) (int, string, error) {
	for {
		c.mu.Lock()
		ids := make([]int, 0, len(c.held))
		for id := range c.held {
			ids = append(ids, id)
		}
		changed := c.changed
		if len(ids) > 0 {
			sort.Ints(ids)
			id := ids[rng.IntN(len(ids))]
			key := c.held[id]
			c.mu.Unlock()
			return id, key, nil
		}
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, "", ctx.Err()
		case <-c.closed:
			return 0, "", ErrClosed
		}
	}
}

// NextAcquire waits for the next acquisition after the call, by any pod,
// and returns who it was.
func (c *Control) NextAcquire(ctx context.Context) (int, error) {
	c.mu.Lock()
	changed, seq := c.changed, c.seq
	c.mu.Unlock()
	select {
	case <-changed:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.closed:
		return 0, ErrClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// changed closes on every acquisition, so one has happened since seq.
	for _, a := range c.log {
		if a.seq > seq {
			return a.pod, nil
		}
	}
	return c.log[len(c.log)-1].pod, nil
}

// AwaitAcquireHolding waits for the next acquisition after the call, by
// any pod, like NextAcquire, and makes that acquisition's critical section
// run for work instead of its drawn time (unless its lock reports the
// lease lost first). The pod is chosen where the acquisition is recorded,
// so it is always the one returned, however soon its section starts.
func (c *Control) AwaitAcquireHolding(ctx context.Context, work time.Duration) (int, error) {
	r := &winnerRequest{work: work, pod: make(chan int, 1)}
	c.mu.Lock()
	c.winners = append(c.winners, r)
	c.mu.Unlock()
	var err error
	select {
	case pod := <-r.pod:
		return pod, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-c.closed:
		err = ErrClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.winners {
		if o == r {
			c.winners = append(c.winners[:i], c.winners[i+1:]...)
			return 0, err
		}
	}
	// Taken just as we gave up: that acquisition holds longer now.
	return <-r.pod, nil
}

// AwaitSlow makes the next critical section to start its work take work
// instead of its drawn time, and waits until one does: it returns the pod
// and when the work began; false when ctx ended first (the request is
// then withdrawn).
func (c *Control) AwaitSlow(ctx context.Context, work time.Duration) (int, time.Time, bool) {
	r := &slowRequest{work: work, started: make(chan slowStart, 1)}
	c.mu.Lock()
	c.slow = append(c.slow, r)
	c.mu.Unlock()
	select {
	case s := <-r.started:
		return s.pod, s.at, true
	case <-ctx.Done():
	case <-c.closed:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.slow {
		if o == r {
			c.slow = append(c.slow[:i], c.slow[i+1:]...)
			return 0, time.Time{}, false
		}
	}
	// Taken just as we gave up: report it, the section is slow now.
	s := <-r.started
	return s.pod, s.at, true
}

// hold gives this critical section the work an AwaitAcquireHolding chose
// for its acquisition, else a pending slow-work request, else keeps the
// drawn time (a Hooks.Hold).
func (c *Control) hold(pod int, _ string, drawn time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.longer[pod]; ok {
		delete(c.longer, pod)
		return w
	}
	if len(c.slow) == 0 {
		return drawn
	}
	r := c.slow[0]
	c.slow = c.slow[1:]
	r.started <- slowStart{pod: pod, at: time.Now()}
	return r.work
}

// Hooks returns the hooks that wire this control into Run's clients.
func (c *Control) Hooks() Hooks {
	return Hooks{Gate: c.Gate, Hold: c.hold, Fate: c.Fate,
		Acquired: func(pod int, key string, _ lockimpl.Lease) { c.acquired(pod, key) },
		Released: func(pod int, _ string) { c.released(pod) }}
}
