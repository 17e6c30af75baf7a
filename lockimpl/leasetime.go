package lockimpl

import (
	"context"
	"fmt"
)

// Two locks that show the trade-off a lease's length makes (DESIGN §1):
// without a TTL a dead holder's lock is never freed ("always set a finite
// TTL"), and with a static TTL far longer than the work it is freed only
// after that long ("a high static TTL is dangerous: if the pod dies the
// lock stays stuck"). Both are the token lock otherwise, so whatever they
// show is the lease's doing.

// The lease-time locks' names.
const (
	NameNoTTL   = "no-ttl"
	NameLongTTL = "long-ttl"
)

// LongTTLFactor is how much longer than the cell's TTL long-ttl's static
// lease is.
const LongTTLFactor = 10

// NewNoTTL returns the token lock whose key never expires: SET NX without
// PX, the compare-and-delete release.
func NewNoTTL(t *Token) Locker { return noTTL{t} }

type noTTL struct{ t *Token }

// Acquire runs SET key token NX, with no expiry at all.
func (n noTTL) Acquire(ctx context.Context, key string) (Lease, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	ok, err := n.t.rdb.SetNX(ctx, key, tok, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("lockimpl: no-ttl acquire %s: %w", key, err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	return &tokenLease{rdb: n.t.rdb, key: key, token: tok}, nil
}

var noTTLSpec = Spec{
	Name:  NameNoTTL,
	Lease: -1,
	Doc:   "random token, SET NX with no expiry, Lua compare-and-delete release: a dead holder's key stays forever",
	Nodes: 1,
	New: func(env Env) (Locker, error) {
		t, err := NewToken(env.Clients[0], TokenConfig{TTL: env.TTL})
		if err != nil {
			return nil, err
		}
		return NewNoTTL(t), nil
	},
}

var longTTLSpec = Spec{
	Name: NameLongTTL,
	Doc: fmt.Sprintf("the token lock with a static TTL of %dx the cell's and no watchdog: a dead holder's key outlives it",
		LongTTLFactor),
	Nodes: 1,
	Lease: LongTTLFactor,
	New: func(env Env) (Locker, error) {
		return NewToken(env.Clients[0], TokenConfig{TTL: LongTTLFactor * orDefault(env.TTL)})
	},
}
