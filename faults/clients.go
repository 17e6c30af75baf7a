package faults

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Clients is the client side of fault injection: it pauses simulated
// clients (stop-the-world), stretches chosen critical sections, and knows
// who holds a lock right now so faults can aim at held moments. The
// workload calls Gate, Hold, Acquired and Released; lock implementations
// never see it (pauses reach their Redis calls through PauseHook).
type Clients struct {
	mu      sync.Mutex
	paused  map[int]chan struct{} // closed on resume
	held    map[int]heldLock
	changed chan struct{} // closed and replaced on every acquisition
	seq     int           // acquisitions so far
	log     []acquisition // the latest few, for NextAcquire
	slow    []*slowRequest
	closed  chan struct{}
	once    sync.Once
}

type acquisition struct {
	seq, client int
}

type heldLock struct {
	key string
}

type slowRequest struct {
	work    time.Duration
	started chan SlowStart
}

// SlowStart says which critical section took a slow-work request.
type SlowStart struct {
	Client int
	Key    string
	At     time.Time
	Work   time.Duration
}

// NewClients returns a client control with nobody paused.
func NewClients() *Clients {
	return &Clients{paused: map[int]chan struct{}{}, held: map[int]heldLock{},
		changed: make(chan struct{}), closed: make(chan struct{})}
}

// Close releases every paused client and every waiter, for good.
func (c *Clients) Close() {
	c.once.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		close(c.closed)
		for id, ch := range c.paused {
			close(ch)
			delete(c.paused, id)
		}
	})
}

// Pause freezes a client: its worker stops at its next step and every
// Redis call it makes (watchdog renewals included) blocks until Resume.
func (c *Clients) Pause(client int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.paused[client]; !ok {
		c.paused[client] = make(chan struct{})
	}
}

// Resume lets a paused client go on.
func (c *Clients) Resume(client int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.paused[client]; ok {
		close(ch)
		delete(c.paused, client)
	}
}

// Gate blocks while client is paused; it returns early when ctx is done
// or the control is closed. The workload calls it before every step.
func (c *Clients) Gate(ctx context.Context, client int) {
	c.mu.Lock()
	ch := c.paused[client]
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

// PauseHook returns a go-redis hook that blocks every command of client
// while it is paused, whatever the command's own deadline: a frozen
// process does not give up on its calls, it just does not run. After the
// pause the command goes on and finds its deadline passed, as a real one
// would.
func (c *Clients) PauseHook(client int) redis.Hook { return pauseHook{c: c, client: client} }

type pauseHook struct {
	c      *Clients
	client int
}

func (h pauseHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h pauseHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.c.Gate(context.Background(), h.client)
		return next(ctx, cmd)
	}
}

func (h pauseHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.c.Gate(context.Background(), h.client)
		return next(ctx, cmds)
	}
}

// Acquired records that client holds key (the workload's hook).
func (c *Clients) Acquired(client int, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[client] = heldLock{key: key}
	c.seq++
	c.log = append(c.log, acquisition{seq: c.seq, client: client})
	if len(c.log) > 64 {
		c.log = c.log[len(c.log)-64:]
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Released records that client gave its lock up (the workload's hook).
func (c *Clients) Released(client int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, client)
}

// Holder waits until some client holds a lock and returns one (chosen
// with rng among the current holders), so a fault fires at a held moment.
func (c *Clients) Holder(ctx context.Context, rng *rand.Rand) (int, string, error) {
	for {
		c.mu.Lock()
		ids := make([]int, 0, len(c.held))
		for id := range c.held {
			ids = append(ids, id)
		}
		changed := c.changed
		c.mu.Unlock()
		if len(ids) > 0 {
			sort.Ints(ids)
			id := ids[rng.IntN(len(ids))]
			c.mu.Lock()
			key := c.held[id].key
			c.mu.Unlock()
			return id, key, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, "", ctx.Err()
		case <-c.closed:
			return 0, "", ErrClosed
		}
	}
}

// NextAcquire waits for the next acquisition after the call, by any
// client, and returns who it was.
func (c *Clients) NextAcquire(ctx context.Context) (int, error) {
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
			return a.client, nil
		}
	}
	return c.log[len(c.log)-1].client, nil
}

// SlowNext makes the next critical section to start its work take work
// instead of its drawn time. The returned channel delivers which one took
// it.
func (c *Clients) SlowNext(work time.Duration) <-chan SlowStart {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &slowRequest{work: work, started: make(chan SlowStart, 1)}
	c.slow = append(c.slow, r)
	return r.started
}

// CancelSlow drops slow-work requests nobody has taken yet.
func (c *Clients) CancelSlow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slow = nil
}

// Hold is the workload's work-time hook: it hands a pending slow-work
// request to this critical section, or keeps the drawn time.
func (c *Clients) Hold(client int, key string, drawn time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.slow) == 0 {
		return drawn
	}
	r := c.slow[0]
	c.slow = c.slow[1:]
	r.started <- SlowStart{Client: client, Key: key, At: time.Now(), Work: r.work}
	return r.work
}
