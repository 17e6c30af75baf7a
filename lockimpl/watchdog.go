package lockimpl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WatchdogConfig configures TokenWatchdog.
type WatchdogConfig struct {
	// TTL is the lock's expiry, renewed to this value. Default DefaultTTL.
	TTL time.Duration
	// Interval between renewals. Default TTL/3. Each renewal call is
	// bounded by Interval too.
	Interval time.Duration
	// OnRenew, if set, is called after every renewal attempt with its
	// timing and outcome (renewed false: the key no longer carried our token).
	// It runs on the watchdog goroutine; keep it fast.
	OnRenew func(r Renewal)
}

// Renewal describes one watchdog renewal attempt.
type Renewal struct {
	Key, Token string
	Start, End time.Time
	Renewed    bool
	Err        error // indefinite failure (timeout, I/O); ignored by the watchdog
}

// Validate reports a config that cannot work.
func (c WatchdogConfig) Validate() error {
	if err := validTTL("token-watchdog", c.TTL); err != nil {
		return err
	}
	if c.Interval < 0 {
		return fmt.Errorf("%w: token-watchdog: negative interval %v", ErrInvalidConfig, c.Interval)
	}
	if c.Interval > 0 && c.Interval >= orDefault(c.TTL) {
		return fmt.Errorf("%w: token-watchdog: interval %v must be below the TTL %v, or the lock expires between "+
			"renewals", ErrInvalidConfig, c.Interval, orDefault(c.TTL))
	}
	return nil
}

// TokenWatchdog is Token plus the usual keep-alive goroutine: every
// interval it runs a token-checked PEXPIRE. Failures are ignored and the
// holder is never told (Lost is nil), exactly as the code it models: that
// is what makes it unsafe when renewals stop arriving (partition, pause).
type TokenWatchdog struct {
	tok      *Token
	interval time.Duration
	onRenew  func(Renewal)

	mu     sync.Mutex
	active map[*watchdogLease]struct{}
}

// activeWatchdogs counts renewal goroutines alive now, so tests can show
// none outlives its release.
var activeWatchdogs atomic.Int64

// ActiveWatchdogs returns how many watchdog goroutines are running.
func ActiveWatchdogs() int { return int(activeWatchdogs.Load()) }

// NewTokenWatchdog returns the token lock with a renewal goroutine.
func NewTokenWatchdog(tok *Token, cfg WatchdogConfig) (*TokenWatchdog, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ttl := orDefault(cfg.TTL)
	interval := cfg.Interval
	if interval == 0 {
		interval = ttl / 3
	}
	t := &Token{rdb: tok.rdb, ttl: ttl}
	return &TokenWatchdog{tok: t, interval: interval, onRenew: cfg.OnRenew, active: map[*watchdogLease]struct{}{}}, nil
}

// Acquire takes the lock and starts the renewal goroutine.
func (w *TokenWatchdog) Acquire(ctx context.Context, key string) (Lease, error) {
	l, err := w.tok.acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	wl := &watchdogLease{tokenLease: l, w: w, stop: make(chan struct{}), done: make(chan struct{})}
	w.mu.Lock()
	w.active[wl] = struct{}{}
	w.mu.Unlock()
	activeWatchdogs.Add(1)
	go w.renew(wl)
	return wl, nil
}

// Close stops the renewals of every lease never released, as a pod that
// shuts down would (the keys then expire). Without it a forgotten lease
// renews forever. The locker stays usable.
func (w *TokenWatchdog) Close() error {
	w.mu.Lock()
	leases := make([]*watchdogLease, 0, len(w.active))
	for l := range w.active {
		leases = append(leases, l)
	}
	w.mu.Unlock()
	for _, l := range leases {
		l.stopRenewing()
	}
	return nil
}

func (w *TokenWatchdog) renew(l *watchdogLease) {
	defer close(l.done)
	defer activeWatchdogs.Add(-1)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	ttlMs := w.tok.ttl.Milliseconds()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.interval)
		start := time.Now()
		n, err := renewScript.Run(ctx, l.rdb, []string{l.key}, l.token, ttlMs).Int()
		cancel()
		// The seed's watchdog ignores failures and never tells the holder.
		if w.onRenew != nil {
			w.onRenew(Renewal{Key: l.key, Token: l.token, Start: start, End: time.Now(), Renewed: err == nil && n == 1, Err: err})
		}
	}
}

type watchdogLease struct {
	*tokenLease
	w        *TokenWatchdog
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// stopRenewing ends the renewal goroutine and waits for it.
func (l *watchdogLease) stopRenewing() {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	l.w.mu.Lock()
	delete(l.w.active, l)
	l.w.mu.Unlock()
}

// Release stops the watchdog (and waits for it), then releases the lock.
func (l *watchdogLease) Release(ctx context.Context) error {
	l.stopRenewing()
	return l.tokenLease.Release(ctx)
}

var watchdogSpec = Spec{
	Name:   NameTokenWatchdog,
	Doc:    "token lock plus a renewal goroutine (token-checked PEXPIRE every TTL/3, failures ignored, holder not told)",
	Nodes:  1,
	Renews: true,
	New: func(env Env) (Locker, error) {
		tok, err := NewToken(env.Clients[0], TokenConfig{TTL: env.TTL})
		if err != nil {
			return nil, err
		}
		return NewTokenWatchdog(tok, WatchdogConfig{TTL: env.TTL, OnRenew: env.OnRenew})
	},
}
