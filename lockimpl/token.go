package lockimpl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TokenConfig configures Token.
type TokenConfig struct {
	// TTL is the lock's expiry. Default DefaultTTL.
	TTL time.Duration
}

// Validate reports a config that cannot work.
func (c TokenConfig) Validate() error { return validTTL("token", c.TTL) }

// Token is the textbook single-node Redis lock: a random 128-bit token as
// the value, SET NX PX to acquire, a Lua compare-and-delete to release. It
// never deletes a foreign lock, but a holder that pauses past the TTL still
// believes it holds the lock while someone else does.
type Token struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewToken returns the token lock on one Redis.
func NewToken(rdb redis.UniversalClient, cfg TokenConfig) (*Token, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Token{rdb: rdb, ttl: orDefault(cfg.TTL)}, nil
}

// Acquire runs SET key token NX PX ttl.
func (t *Token) Acquire(ctx context.Context, key string) (Lease, error) {
	return t.acquire(ctx, key)
}

func (t *Token) acquire(ctx context.Context, key string) (*tokenLease, error) {
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	ok, err := t.rdb.SetNX(ctx, key, tok, t.ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("lockimpl: token acquire %s: %w", key, err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	return &tokenLease{rdb: t.rdb, key: key, token: tok}, nil
}

type tokenLease struct {
	rdb   redis.UniversalClient
	key   string
	token string
	fence uint64
}

func (l *tokenLease) Token() string       { return l.token }
func (l *tokenLease) Fence() uint64       { return l.fence }
func (*tokenLease) Lost() <-chan struct{} { return nil }

// Release deletes the key only if it still holds our token.
func (l *tokenLease) Release(ctx context.Context) error {
	n, err := releaseScript.Run(ctx, l.rdb, []string{l.key}, l.token).Int()
	if err != nil {
		return fmt.Errorf("lockimpl: release %s: %w", l.key, err)
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

// newToken returns 128 random bits, hex encoded.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lockimpl: token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

var tokenSpec = Spec{
	Name:  NameToken,
	Doc:   "random token, SET NX PX, Lua compare-and-delete release",
	Nodes: 1,
	New: func(env Env) (Locker, error) {
		return NewToken(env.Clients[0], TokenConfig{TTL: env.TTL})
	},
}
