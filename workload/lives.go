package workload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrPodDead is what a crashed pod's dials get: a dead process opens no
// connection, so nothing it left running (a watchdog goroutine) reaches
// Redis again.
var ErrPodDead = errors.New("workload: the pod crashed")

// A pod lives in incarnations. A crash ends one for good (the process is
// gone); a restart begins a fresh one, with a new Locker from the spec, as
// Kubernetes restarts a pod. A hang keeps the process alive (its watchdog
// goes on renewing) while its worker never releases the lease it holds.

// Fate is how one incarnation of a pod ends, as its worker sees it.
type Fate struct {
	// Crashed closes when the pod dies: the worker stops at once, and its
	// in-flight calls end with its connections.
	Crashed <-chan struct{}
	// Hung closes when the worker must hang holding its lease: now if it
	// holds one, else right after its next acquire.
	Hung <-chan struct{}
	// Reborn closes when a crashed pod restarts as a fresh incarnation.
	Reborn <-chan struct{}
	// Done tells the fault the worker stopped, with the key it held then
	// ("" if none). Called once; later calls do nothing.
	Done func(key string)
	// CrashedAt is when the pod died (zero before): read once Crashed is
	// closed. A crashed holder's belief ends then, not when its worker
	// gets to record it, by which time its closed connections may have
	// freed the lock (a session lock) and another pod taken it.
	CrashedAt func() time.Time
}

type fate struct {
	crashed, hung, reborn chan struct{}
	done                  chan string // buffered: the key the worker held
	once                  sync.Once
	isCrashed, isHung     bool
	at                    time.Time // when it crashed: set before crashed closes
}

func newFate() *fate {
	return &fate{crashed: make(chan struct{}), hung: make(chan struct{}), reborn: make(chan struct{}),
		done: make(chan string, 1)}
}

func (f *fate) view() Fate {
	return Fate{Crashed: f.crashed, Hung: f.hung, Reborn: f.reborn,
		Done:      func(key string) { f.once.Do(func() { f.done <- key }) },
		CrashedAt: func() time.Time { return f.at }}
}

// fateOf returns pod's current incarnation; c.mu is held.
func (c *Control) fateOf(pod int) *fate {
	f := c.fates[pod]
	if f == nil {
		f = newFate()
		c.fates[pod] = f
	}
	return f
}

// Fate returns the fate of pod's current incarnation (a Hooks.Fate).
func (c *Control) Fate(pod int) Fate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fateOf(pod).view()
}

// Alive returns how many pods are neither dead nor hung: the ones a fault
// can still aim at, and that still try for keys.
func (c *Control) Alive() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.pods
	for _, f := range c.fates {
		if f.isCrashed || f.isHung {
			n--
		}
	}
	return n
}

// OnCrash registers what else dies with pod's current incarnation: its
// locker's goroutines (a watchdog), its clients, a driver process (SIGKILL
// on its process group). A restart starts with none registered.
func (c *Control) OnCrash(pod int, kill func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashHooks[pod] = append(c.crashHooks[pod], kill)
}

// Crash kills pod's current incarnation, as the kernel ends a killed
// process: its worker stops, every connection it dialed is closed, its
// dials are refused from then on, and what it registered with OnCrash
// runs. It returns, once the worker has stopped, the key the pod held
// when it died ("" if none); a pod already dead returns "" at once.
func (c *Control) Crash(ctx context.Context, pod int) (string, error) {
	c.mu.Lock()
	f := c.fateOf(pod)
	if f.isCrashed {
		c.mu.Unlock()
		return "", nil
	}
	f.isCrashed = true
	f.at = time.Now()
	close(f.crashed)
	delete(c.held, pod)
	delete(c.longer, pod)
	if ch, ok := c.paused[pod]; ok { // a dead process is not frozen: its connections must close
		close(ch)
		delete(c.paused, pod)
	}
	conns, kills := c.conns[pod], c.crashHooks[pod]
	delete(c.conns, pod)
	delete(c.crashHooks, pod)
	// Its pause hooks stop and continue a process that is now dead (and
	// whose pid may be reused): the next incarnation registers its own.
	delete(c.hooks, pod)
	c.mu.Unlock()
	for conn := range conns {
		_ = conn.Close()
	}
	for _, kill := range kills {
		kill()
	}
	return c.awaitDone(ctx, f)
}

// Abandon makes pod's worker hang holding its lease (a hung goroutine, a
// forgotten release, a request that panicked and was recovered): it never
// releases, never touches the resource again, and never acquires again,
// while its process lives on, so whatever the lock runs in the background
// keeps running. It returns the key abandoned once the worker hangs (at
// its next acquire if it held nothing).
func (c *Control) Abandon(ctx context.Context, pod int) (string, error) {
	c.mu.Lock()
	f := c.fateOf(pod)
	if f.isCrashed || f.isHung {
		c.mu.Unlock()
		return "", fmt.Errorf("workload: pod %d is already dead or hung", pod)
	}
	f.isHung = true
	close(f.hung)
	delete(c.held, pod)
	delete(c.longer, pod)
	c.mu.Unlock()
	return c.awaitDone(ctx, f)
}

func (c *Control) awaitDone(ctx context.Context, f *fate) (string, error) {
	select {
	case key := <-f.done:
		f.done <- key // a later look sees it too
		return key, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.closed:
		return "", ErrClosed
	}
}

// Restart brings a crashed pod back as a fresh incarnation: its worker
// builds a new Locker and starts over. A pod that is not dead is left
// alone.
func (c *Control) Restart(pod int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.fates[pod]
	if f == nil || !f.isCrashed {
		return
	}
	c.fates[pod] = newFate()
	close(f.reborn)
}

// gone reports whether pod's current incarnation is dead or hung; c.mu is
// held.
func (c *Control) gone(pod int) bool {
	f := c.fates[pod]
	return f != nil && (f.isCrashed || f.isHung)
}

// track remembers a connection pod dialed, so a crash can close it;
// false when the pod is dead (the caller closes it and refuses).
func (c *Control) track(pod int, conn net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.fates[pod]; f != nil && f.isCrashed {
		return false
	}
	if c.conns[pod] == nil {
		c.conns[pod] = map[net.Conn]struct{}{}
	}
	c.conns[pod][conn] = struct{}{}
	return true
}

func (c *Control) untrack(pod int, conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.conns[pod], conn)
}

// dead reports whether pod is dead now (its dials are refused).
func (c *Control) dead(pod int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.fates[pod]
	return f != nil && f.isCrashed
}
