package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// Factory builds the Locker of one client. Each client gets its own (its
// own connections and pools), as each pod has its own process.
type Factory func(client int) (lockimpl.Locker, error)

// Hooks let the fault layer act on clients without any lock knowing.
// Every hook is optional and must be safe for concurrent use.
type Hooks struct {
	// Hold may replace one critical section's drawn work time (a slow holder).
	Hold func(client int, key string, drawn time.Duration) time.Duration
	// Gate is called before every step a client takes and may block (a
	// paused client). It must return once ctx is done.
	Gate func(ctx context.Context, client int)
	// Acquired is called after each successful acquire, so fault
	// schedules can aim at moments when a lock is held.
	Acquired func(client int, key string, lease lockimpl.Lease)
	// Released is called when a holder is about to call release.
	Released func(client int, key string)
	// Fate returns how client's current incarnation ends (a crash, a
	// hang) and when a crashed one restarts. Nil: every pod lives for the
	// whole run.
	Fate func(client int) Fate
}

// ErrPanic wraps a panic raised by a lock implementation (or a hook) in a
// client: the run stops and reports it instead of crashing the harness.
var ErrPanic = errors.New("workload: panic in client")

// broken carries a lockimpl.ErrBroken out of a client: the lock cannot go
// on, so the run stops and reports why (the same path as a panic, without
// the word).
type broken struct{ err error }

// Run starts cfg.Clients clients, each with factory(i), and runs them for
// cfg.Duration, recording into rec. It returns the resource so callers can
// look at final values. Cancelling ctx stops everything at once (in-flight
// calls end as indefinite); reaching Duration lets critical sections under
// way finish and release first.
func Run(ctx context.Context, cfg Config, factory Factory, rec *history.Recorder, hooks Hooks) (*Resource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	// Build every locker before any traffic, so a bad factory fails fast.
	lockers := make([]lockimpl.Locker, cfg.Clients)
	for i := range lockers {
		l, err := factory(i)
		if err != nil {
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		lockers[i] = l
	}
	res := NewResource(cfg.Fencing)
	// A panicking client cancels everyone (abort), so the run ends
	// promptly and the panic is reported as the run's error.
	abortCtx, abort := context.WithCancel(ctx)
	defer abort()
	runCtx, cancel := context.WithTimeout(abortCtx, cfg.Duration)
	defer cancel()
	if cfg.Stop != nil {
		go func() {
			select {
			case <-cfg.Stop:
				cancel()
			case <-runCtx.Done():
			}
		}()
	}
	var wg sync.WaitGroup
	var panicMu sync.Mutex
	var panicErr error
	for i, l := range lockers {
		c := &client{id: i, cfg: cfg, locker: l, res: res, rec: rec, hooks: hooks,
			rng: rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicMu.Lock()
					if panicErr == nil {
						panicErr = fmt.Errorf("%w %d: %v", ErrPanic, c.id, r)
						if b, ok := r.(broken); ok {
							panicErr = fmt.Errorf("workload: client %d: %w", c.id, b.err)
						}
					}
					panicMu.Unlock()
					abort()
				}
			}()
			c.lives(abortCtx, runCtx, factory)
		}()
	}
	wg.Wait()
	if panicErr != nil {
		return res, panicErr
	}
	return res, ctx.Err()
}

type client struct {
	id     int
	cfg    Config
	locker lockimpl.Locker
	res    *Resource
	rec    *history.Recorder
	hooks  Hooks
	rng    *rand.Rand
	fate   Fate // of the current incarnation
	// committed: the lease's commit (a TxLease's write) released it and
	// was recorded as its release.
	committed bool
	// runDone closes when the run (or the incarnation) ends: a hung
	// worker waits for it.
	runDone <-chan struct{}
}

func (c *client) gate(ctx context.Context) {
	if c.hooks.Gate != nil {
		c.hooks.Gate(ctx, c.id)
	}
}

// loop runs cycles until runCtx ends, or the pod's incarnation does (a
// crash or a hang: see lives). ctx (the caller's) bounds the last critical
// section, so a slow holder at the end still finishes its work.
func (c *client) loop(ctx, runCtx context.Context) {
	for runCtx.Err() == nil {
		key := c.cfg.Keys[c.rng.IntN(len(c.cfg.Keys))]
		lease := c.acquire(ctx, runCtx, key)
		if c.crashed() {
			if lease != nil {
				c.abandon(key, lease, history.Crashed)
			}
			return
		}
		if lease != nil {
			if c.hooks.Acquired != nil {
				c.hooks.Acquired(c.id, key, lease)
			}
			if !c.critical(ctx, key, lease) {
				return // it crashed or hung holding the lease
			}
			c.release(ctx, key, lease)
		}
		sleep(runCtx, c.cfg.Think.Draw(c.rng))
	}
}

// acquire retries per the policy; nil when the run ended or it gave up.
// The end of the run (runCtx) stops new attempts but does not cut one in
// flight short, which would only add spurious indefinite outcomes; the
// caller's ctx (Ctrl-C) does.
func (c *client) acquire(ctx, runCtx context.Context, key string) lockimpl.Lease {
	backoff := c.cfg.Retry.Base
	for attempt := 1; runCtx.Err() == nil; attempt++ {
		c.gate(runCtx)
		if runCtx.Err() != nil {
			return nil
		}
		op := c.rec.Invoke(history.Event{Kind: history.Acquire, Client: c.id, Key: key})
		actx, cancel := context.WithTimeout(ctx, c.cfg.AcquireTimeout)
		lease, err := c.locker.Acquire(actx, key)
		cancel()
		switch {
		case err == nil:
			op.Return(history.Result{Outcome: history.Ok, Token: lease.Token(), Fence: lease.Fence()})
			return lease
		case c.crashed():
			// Its connections (or its driver process) died with it: the
			// call may or may not have taken effect.
			op.Return(history.Result{Outcome: history.Indefinite, Err: err})
			return nil
		case errors.Is(err, lockimpl.ErrBroken):
			op.Return(history.Result{Outcome: history.Indefinite, Err: err})
			panic(broken{err})
		case errors.Is(err, lockimpl.ErrNotAcquired):
			op.Return(history.Result{Outcome: history.Refused, Err: err})
		default:
			op.Return(history.Result{Outcome: history.Indefinite, Err: err})
		}
		if c.cfg.Retry.MaxAttempts > 0 && attempt >= c.cfg.Retry.MaxAttempts {
			return nil
		}
		// Full jitter: a uniform draw in (0, backoff].
		sleep(runCtx, time.Duration(c.rng.Int64N(int64(backoff)))+1)
		backoff = min(2*backoff, c.cfg.Retry.Max)
	}
	return nil
}

// critical reads the counter, works, and writes it plus one, unless the
// lock says the lease is lost or the resource rejects the fence. It
// returns false when the pod crashed or hung holding the lease: it then
// never touches the resource again, and the lease is abandoned.
func (c *client) critical(ctx context.Context, key string, lease lockimpl.Lease) bool {
	lost := lease.Lost()
	c.gate(ctx)
	if c.stopsHolding(ctx, key, lease) {
		return false
	}
	if c.checkLost(lost, key, lease) {
		return true
	}
	v, ok := c.read(ctx, key, lease)
	if !ok {
		// A read through the lease (a database round trip) fails when the
		// pod crashes or hangs under it: that is the stop, not a refusal.
		return !c.stopsHolding(ctx, key, lease)
	}

	work := c.cfg.Work.Draw(c.rng)
	if c.hooks.Hold != nil {
		work = c.hooks.Hold(c.id, key, work)
	}
	t := time.NewTimer(work)
	select {
	case <-t.C:
	case <-lost: // a lock that knows it lost the lease stops the work
	case <-ctx.Done():
	case <-c.fate.Crashed:
	case <-c.fate.Hung:
	}
	t.Stop()
	c.gate(ctx)
	if c.stopsHolding(ctx, key, lease) {
		return false
	}
	if c.checkLost(lost, key, lease) || ctx.Err() != nil {
		return true
	}
	c.write(ctx, key, lease, v+1)
	return true
}

// read reads the counter the lease protects: from the harness's resource,
// or, for a lease whose resource is in its own transaction, through it.
// A refused or failed read ends the critical section (ok false).
func (c *client) read(ctx context.Context, key string, lease lockimpl.Lease) (int64, bool) {
	op := c.rec.Invoke(history.Event{Kind: history.Read, Client: c.id, Key: key, Token: lease.Token(), Fence: lease.Fence()})
	var v int64
	var err error
	if tx, ok := lease.(lockimpl.TxLease); ok {
		v, err = tx.ReadResource(ctx, key)
	} else {
		v, err = c.res.Read(key, lease.Fence())
	}
	if err != nil {
		// A read that failed changed nothing, whatever the reason.
		op.Return(history.Result{Outcome: history.Refused, Err: err})
		return 0, false
	}
	op.Return(history.Result{Outcome: history.Ok, Value: &v})
	return v, true
}

// write stores next: in the harness's resource (a stale fence refused),
// or by committing the lease's transaction, whose answer may be definite
// (committed; refused: it did not happen) or lost (indefinite).
func (c *client) write(ctx context.Context, key string, lease lockimpl.Lease, next int64) {
	op := c.rec.Invoke(history.Event{Kind: history.Write, Client: c.id, Key: key, Token: lease.Token(), Fence: lease.Fence(), Value: next})
	tx, inTx := lease.(lockimpl.TxLease)
	if !inTx {
		if err := c.res.Write(key, next, lease.Fence()); err != nil {
			op.Return(history.Result{Outcome: history.Refused, Err: err})
			return
		}
		op.Return(history.Result{Outcome: history.Ok})
		return
	}
	c.commitWrite(ctx, key, tx, next, op)
}

// commitWrite commits a TxLease's write, which also ends its lock: the
// write's answer is the release's too, so the release is recorded over
// the same stretch (from before the commit was sent), and the loop's own
// release only tidies up (committed is set).
func (c *client) commitWrite(ctx context.Context, key string, tx lockimpl.TxLease, next int64, op *history.Op) {
	if c.hooks.Released != nil {
		c.hooks.Released(c.id, key)
	}
	call := c.rec.Now()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.ReleaseTimeout)
	err := tx.CommitWrite(wctx, key, next)
	cancel()
	res := history.Result{Outcome: history.Indefinite, Err: err}
	switch {
	case err == nil:
		res = history.Result{Outcome: history.Ok}
	case errors.Is(err, lockimpl.ErrNotHeld) && !c.crashed():
		res.Outcome = history.Refused
	}
	op.Return(res)
	rel := history.Event{Kind: history.Release, Client: c.id, Key: key, Token: tx.Token(), Fence: tx.Fence(),
		Call: call, Return: c.rec.Now(), Outcome: res.Outcome}
	if err != nil {
		rel.Err = err.Error()
	}
	c.rec.Record(rel)
	c.committed = true
}

// checkLost records the lost-lease signal once and reports it.
func (c *client) checkLost(lost <-chan struct{}, key string, lease lockimpl.Lease) bool {
	if lost == nil {
		return false
	}
	select {
	case <-lost:
		c.rec.Point(history.Event{Kind: history.Lost, Client: c.id, Key: key, Token: lease.Token(), Fence: lease.Fence()})
		return true
	default:
		return false
	}
}

func (c *client) release(ctx context.Context, key string, lease lockimpl.Lease) {
	c.gate(ctx)
	if c.committed {
		// The commit released it and was recorded as the release.
		c.committed = false
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.ReleaseTimeout)
		_ = lease.Release(rctx)
		cancel()
		return
	}
	if c.hooks.Released != nil {
		c.hooks.Released(c.id, key)
	}
	op := c.rec.Invoke(history.Event{Kind: history.Release, Client: c.id, Key: key, Token: lease.Token(), Fence: lease.Fence()})
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.ReleaseTimeout)
	err := lease.Release(rctx)
	cancel()
	switch {
	case err == nil:
		op.Return(history.Result{Outcome: history.Ok})
	case c.crashed():
		op.Return(history.Result{Outcome: history.Indefinite, Err: err})
	case errors.Is(err, lockimpl.ErrBroken):
		op.Return(history.Result{Outcome: history.Indefinite, Err: err})
		panic(broken{err})
	case errors.Is(err, lockimpl.ErrNotHeld):
		op.Return(history.Result{Outcome: history.Refused, Err: err})
	default:
		op.Return(history.Result{Outcome: history.Indefinite, Err: err})
	}
}

// RenewalRecorder returns a lockimpl watchdog OnRenew callback that
// records each renewal of client in rec.
func RenewalRecorder(rec *history.Recorder, client int) func(lockimpl.Renewal) {
	return func(r lockimpl.Renewal) {
		out := history.Ok
		errText := ""
		switch {
		case r.Err != nil:
			out, errText = history.Indefinite, r.Err.Error()
		case !r.Renewed:
			out = history.Refused
		}
		rec.Record(history.Event{Kind: history.Renew, Client: client, Key: r.Key, Token: r.Token,
			Call: rec.Since(r.Start), Return: rec.Since(r.End), Outcome: out, Err: errText})
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
