package lockimpl

import (
	"context"
	"sync"
	"sync/atomic"
)

// Mutex is a sync.Mutex per key inside one simulated pod. It is perfectly
// correct within a process and useless across pods: give every client its
// own Mutex (as every pod has its own memory) and mutual exclusion is gone.
// It exists as the baseline that shows why a distributed lock is needed.
type Mutex struct {
	mu   sync.Mutex
	keys map[string]*sync.Mutex
}

// MutexConfig has no settings; it exists so every lock is built alike.
type MutexConfig struct{}

// Validate always succeeds.
func (MutexConfig) Validate() error { return nil }

// NewMutex returns an in-process lock (one per simulated pod).
func NewMutex(MutexConfig) *Mutex { return &Mutex{keys: map[string]*sync.Mutex{}} }

// Acquire tries the key's mutex once; ErrNotAcquired when it is held.
func (m *Mutex) Acquire(ctx context.Context, key string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	km, ok := m.keys[key]
	if !ok {
		km = &sync.Mutex{}
		m.keys[key] = km
	}
	m.mu.Unlock()
	if !km.TryLock() {
		return nil, ErrNotAcquired
	}
	return &mutexLease{m: km}, nil
}

type mutexLease struct {
	m        *sync.Mutex
	released atomic.Bool
}

func (*mutexLease) Token() string         { return "" }
func (*mutexLease) Fence() uint64         { return 0 }
func (*mutexLease) Lost() <-chan struct{} { return nil }

// Release unlocks; a second Release is ErrNotHeld rather than sync's panic.
func (l *mutexLease) Release(context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return ErrNotHeld
	}
	l.m.Unlock()
	return nil
}

var mutexSpec = Spec{
	Name: NameMutex,
	Doc:  "a sync.Mutex per pod: correct in one process, no exclusion across pods",
	New:  func(Env) (Locker, error) { return NewMutex(MutexConfig{}), nil },
}
