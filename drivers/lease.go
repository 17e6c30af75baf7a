package drivers

import (
	"context"
	"fmt"
	"sync"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// Acquire implements lockimpl.Locker. The reader has checked the answer's
// shape (a known result; an ok with a lease not held already).
func (p *proc) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	m, err := p.call(ctx, request{Op: opAcquire, Key: key})
	if err != nil {
		return nil, err
	}
	switch m.Result {
	case resultOK:
		id := *m.Lease
		l := &lease{p: p, id: id, token: m.Token, fence: m.Fence, key: key, lost: make(chan struct{})}
		p.mu.Lock()
		p.leases[id] = l
		if p.lostEarly[id] {
			delete(p.lostEarly, id)
			l.lose()
		}
		p.mu.Unlock()
		return l, nil
	case resultRefused:
		return nil, lockimpl.ErrNotAcquired
	}
	return nil, fmt.Errorf("drivers: %s acquire %s: %s", p.d.Name, key, m.Error)
}

type lease struct {
	p          *proc
	id         int64
	key, token string
	fence      uint64
	lost       chan struct{}
	lostOnce   sync.Once
}

func (l *lease) Token() string { return l.token }
func (l *lease) Fence() uint64 { return l.fence }

// Lost implements lockimpl.Lease: a driver's {"lost"} notices count only
// for a lock declared signals_loss.
func (l *lease) Lost() <-chan struct{} {
	if !l.p.d.SignalsLoss {
		return nil
	}
	return l.lost
}
func (l *lease) lose() { l.lostOnce.Do(func() { close(l.lost) }) }

// Release implements lockimpl.Lease. The request always carries the
// lease's id, 0 included.
func (l *lease) Release(ctx context.Context) error {
	m, err := l.p.call(ctx, request{Op: opRelease, Key: l.key, Lease: &l.id})
	l.p.mu.Lock()
	delete(l.p.leases, l.id)
	l.p.mu.Unlock()
	if err != nil {
		return err
	}
	switch m.Result {
	case resultOK:
		return nil
	case resultRefused:
		return lockimpl.ErrNotHeld
	}
	return fmt.Errorf("drivers: %s release %s: %s", l.p.d.Name, l.key, m.Error)
}
