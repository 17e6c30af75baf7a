// Package witness watches what the Redis servers themselves do to the
// cell's lock keys, so evidence can rest on what the server recorded
// instead of on what the cell's TTL implies.
//
// One watcher per node, on an admin connection of its own that no fault
// touches (straight to the node's address, behind no pod's proxy). Of the
// ways to watch a Redis server it uses keyspace notifications, with a
// read of the key's value and remaining time after each write:
//
//   - Keyspace notifications (notify-keyspace-events) fire for what the
//     server did, in the order it did it, and only for what took effect:
//     a SET NX that found the key taken fires nothing, a release script's
//     DEL fires del, an expiry fires expired when the server removes the
//     key. They carry no value and no expiry, hence the read (GET and PTTL
//     written together) after each write.
//   - MONITOR shows every command with its arguments, but not whether it
//     took effect (a refused SET NX looks like a granted one), never shows
//     expiries, and Redis documents it as halving a server's throughput.
//   - CLIENT TRACKING only says a key changed, for keys the tracking
//     client has read, with nothing about the change.
//   - A probe after each acquire sees only what the harness thought to
//     ask, when it asked: not a release's delete, not an expiry's moment.
//
// The reads ride on the subscribed connection itself (RESP3 allows
// commands there): a reply comes after every notification the server sent
// before running the read, so a value that changed again before it was
// read is known to be stale, never misattributed. An expired
// notification fires when the server removes the key, which lags its
// deadline (until something touches the key, or the expiry cycle finds
// it): the witness reports the deadline it read as well, and the server's
// view takes the earlier of the two as the lease's end.
package witness

import (
	"context"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// Config says what to watch and where the changes go.
type Config struct {
	Nodes []backend.RedisNode
	// Keys are the cell's workload keys (prefixed on someone else's
	// Redis); Prefix is the cell's namespace on the server ("": every key
	// of database 0), the only keys whose notifications are asked for.
	Keys   []string
	Prefix string
	// Sink receives each change with the workload key it belongs to (""
	// for Blind and Watching), from the node's watcher: it must be safe
	// for concurrent use.
	Sink func(key string, c backend.KeyChange)
	// NoDial says the nodes' addresses are not on a real network (a
	// simulation's): a node that does not report its own changes is then
	// Blind, never dialed.
	NoDial bool
	// Retry is how often a node the witness lost sight of is dialed again
	// (default 10 ms).
	Retry time.Duration
}

// Witness watches a deployment's nodes until Stop.
type Witness struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	stops  []func()
}

// Start watches every node. It does not fail: a node it cannot watch is
// reported Blind with the reason (notifications refused, no RESP3), so
// every judgment resting on it says its lease end was assumed.
func Start(ctx context.Context, cfg Config) *Witness {
	if cfg.Retry <= 0 {
		cfg.Retry = 10 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Witness{cancel: cancel}
	m := NewMatcher(cfg.Keys)
	var ready []chan struct{}
	for _, n := range cfg.Nodes {
		if o, ok := n.(backend.ObservableNode); ok {
			stop := o.ObserveKeys(func(k string) bool { _, ok := m.Match(k); return ok }, func(c backend.KeyChange) {
				key, _ := m.Match(c.Key)
				cfg.Sink(key, c)
			})
			w.stops = append(w.stops, stop)
			continue
		}
		if cfg.NoDial {
			cfg.Sink("", backend.KeyChange{Node: n.Name(), Op: backend.Blind, At: time.Now(),
				Reason: "this backend's nodes report nothing and are not on a network the witness can reach"})
			continue
		}
		nw := &nodeWatch{node: n, cfg: cfg, match: m, live: map[string]string{},
			deadlines: map[string]time.Time{}, counters: map[string]bool{}, ready: make(chan struct{})}
		w.wg.Go(func() { nw.run(ctx) })
		ready = append(ready, nw.ready)
	}
	// The cell's first acquire comes after: what the server does from the
	// start is seen, unless a node takes longer than a second to answer
	// (then it is Blind until it does).
	timeout := time.NewTimer(time.Second)
	defer timeout.Stop()
	for _, r := range ready {
		select {
		case <-r:
		case <-timeout.C:
			return w
		case <-ctx.Done():
			return w
		}
	}
	return w
}

// Stop ends every watcher and waits for them: no change is reported after
// it returns.
func (w *Witness) Stop() {
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.stops {
		s()
	}
	w.stops = nil
}
