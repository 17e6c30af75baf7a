package lockchaostest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sort"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/redis/go-redis/v9"
)

// tokenlessLock is go-zero's RedisLock as the harness sees it: SET NX PX
// with a random value it keeps to itself, a compare-and-delete release,
// and no token reported. The witness sees its values, but which one is
// a hold's it must infer.
type tokenlessLock struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

var tokenlessSpec = lockimpl.Spec{Name: "tokenless", Doc: "SET NX PX with a value it keeps to itself (reports no token)",
	Nodes: 1, New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return &tokenlessLock{rdb: env.Clients[0], ttl: env.TTL}, nil
	}}

func (l *tokenlessLock) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	val := hex.EncodeToString(b[:])
	ok, err := l.rdb.SetNX(ctx, key, val, l.ttl).Result()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, lockimpl.ErrNotAcquired
	}
	return &tokenlessLease{retryLease{rdb: l.rdb, key: key, token: val}}, nil
}

// tokenlessLease releases as retryLease does and hides its value.
type tokenlessLease struct{ retryLease }

func (*tokenlessLease) Token() string { return "" }

// A claim of evidence about a token-less hold's lease (a pause the
// lease did not outlive) rests on the lease the server matched to the
// hold: never one that was gone before the hold's acquire returned,
// another pod's value set and deleted while the acquire was in flight.
// It logs how often the first write after the acquire began (the rule
// before issue 34) was such a value.
func TestTokenlessHoldsMatchALeaseLiveWhenTheirAcquireReturned(t *testing.T) {
	res := lockchaostest.Run(t, tokenlessSpec, "gc-pause", lockchaostest.Either)
	h := res.Checked
	if h == nil {
		t.Fatalf("no history checked: %s", res.Summary())
	}
	srv := history.ServerViewOf(h.Events, h.End)
	if !srv.Any() {
		t.Fatal("no witness watched the server")
	}
	matched, firstGone := 0, 0
	for _, hd := range history.Holds(h) {
		if firstWriteGone(srv, hd) {
			firstGone++
		}
		sh, ok := srv.LeaseFor(hd, 1)
		if !ok {
			continue
		}
		matched++
		if sh.End < hd.Start {
			t.Errorf("client %d's hold from %s matched a lease that ended at %s (%s), before its acquire returned",
				hd.Client, history.Seconds(hd.Start), history.Seconds(sh.End), sh.Ended)
		}
	}
	if matched == 0 {
		t.Fatal("no hold matched to a server lease: nothing was tested")
	}
	t.Logf("tokenless: %d holds matched; the first write after the acquire began was gone before it returned for %d",
		matched, firstGone)
}

// firstWriteGone reports whether the first value the server wrote to
// h's key after h's acquire began ended before the acquire returned.
func firstWriteGone(srv *history.ServerView, h history.Hold) bool {
	i := sort.Search(len(srv.Leases), func(i int) bool { return srv.Leases[i].Set >= h.AcquireCall })
	for _, l := range srv.Leases[i:] {
		if l.Set > h.End {
			return false
		}
		if l.Key == h.Key && !l.Found && l.Value != "" {
			return l.End < h.Start
		}
	}
	return false
}
