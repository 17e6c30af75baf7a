package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// lives runs the pod's incarnations: the first with the locker Run built,
// each later one (after a crash and a restart) with a new one from
// factory, until the run ends. A hung worker waits out the run.
func (c *client) lives(ctx, runCtx context.Context, factory Factory) {
	for {
		if !c.live(ctx, runCtx) {
			return
		}
		select {
		case <-c.fate.Reborn:
		case <-runCtx.Done():
			return
		}
		l, err := factory(c.id)
		if err != nil {
			panic(broken{fmt.Errorf("restart: %w", err)})
		}
		c.locker = l
	}
}

// live runs one incarnation; true when it ended in a crash (a restart may
// follow).
func (c *client) live(ctx, runCtx context.Context) bool {
	c.fate = Fate{Done: func(string) {}}
	if c.hooks.Fate != nil {
		c.fate = c.hooks.Fate(c.id)
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	irun, cancelRun := context.WithCancel(runCtx)
	defer cancelRun()
	if crashed := c.fate.Crashed; crashed != nil {
		// A crash ends every call in flight at once, as a killed process's.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-crashed:
				cancel()
				cancelRun()
			case <-stop:
			}
		}()
	}
	c.runDone = irun.Done()
	c.loop(ictx, irun)
	if c.crashed() {
		c.fate.Done("") // a no-op when it already abandoned a lease
		return true
	}
	return false
}

// crashed reports whether the pod's current incarnation died.
func (c *client) crashed() bool {
	select {
	case <-c.fate.Crashed:
		return true
	default:
		return false
	}
}

func (c *client) hung() bool {
	select {
	case <-c.fate.Hung:
		return true
	default:
		return false
	}
}

// stopsHolding handles a crash or a hang that caught the pod holding
// lease: the lease is abandoned, and a hung worker waits for the run's
// end without ever releasing. True when the holder stopped.
func (c *client) stopsHolding(ctx context.Context, key string, lease lockimpl.Lease) bool {
	switch {
	case c.crashed():
		c.abandon(key, lease, history.Crashed)
	case c.hung():
		c.abandon(key, lease, history.Abandoned)
		select { // it waits out the run (or a Ctrl-C) without a release
		case <-c.runDone:
		case <-ctx.Done():
		}
	default:
		return false
	}
	return true
}

// abandon records that the pod will never release lease (why: crashed or
// abandoned) and tells the fault that stopped it.
func (c *client) abandon(key string, lease lockimpl.Lease, why string) {
	e := history.Event{Kind: history.Abandon, Client: c.id, Key: key, Token: lease.Token(), Fence: lease.Fence(), Err: why}
	if at := c.crashedAt(); why == history.Crashed && !at.IsZero() {
		// At the crash itself: the pod's connections closed right after,
		// and a server that ends the session with them (PostgreSQL) has
		// freed the lock before the worker got here.
		e.Call, e.Return, e.Outcome = c.rec.Since(at), c.rec.Since(at), history.Ok
		c.rec.Record(e)
	} else {
		c.rec.Point(e)
	}
	c.fate.Done(key)
}

// crashedAt is when the pod's current incarnation crashed (zero if not).
func (c *client) crashedAt() time.Time {
	if c.fate.CrashedAt == nil || !c.crashed() {
		return time.Time{}
	}
	return c.fate.CrashedAt()
}
