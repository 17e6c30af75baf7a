package lockimpl

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdLease is the token lock's twin on etcd: the lock key put on a fresh
// lease of one TTL if it is absent, nothing keeps it alive.
type etcdLease struct {
	env Env
	cli *clientv3.Client
}

func newEtcdLease(env Env) (Locker, error) {
	cli, err := newEtcdClient(env)
	if err != nil {
		return nil, err
	}
	return &etcdLease{env: env, cli: cli}, nil
}

// Acquire grants a lease and puts key on it if key is absent, in one
// transaction; a refused put's lease is revoked (best effort: it lapses
// within a TTL anyway).
func (l *etcdLease) Acquire(ctx context.Context, key string) (Lease, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout(l.env))
	defer cancel()
	g, err := l.cli.Grant(cctx, EtcdLeaseSeconds(l.env.TTL))
	if err != nil {
		return nil, err
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	resp, err := l.cli.Txn(cctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, token, clientv3.WithLease(g.ID))).Commit()
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		go func() {
			rctx, cancel := context.WithTimeout(context.Background(), callTimeout(l.env))
			defer cancel()
			_, _ = l.cli.Revoke(rctx, g.ID)
		}()
		return nil, ErrNotAcquired
	}
	return &etcdLeaseLease{l: l, key: key, token: token}, nil
}

// Close closes the client.
func (l *etcdLease) Close() error { return l.cli.Close() }

type etcdLeaseLease struct {
	l          *etcdLease
	key, token string
}

func (ls *etcdLeaseLease) Token() string         { return ls.token }
func (ls *etcdLeaseLease) Fence() uint64         { return 0 }
func (ls *etcdLeaseLease) Lost() <-chan struct{} { return nil }

// Release deletes the key if it still holds our token, in one
// transaction.
func (ls *etcdLeaseLease) Release(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout(ls.l.env))
	defer cancel()
	resp, err := ls.l.cli.Txn(cctx).If(clientv3.Compare(clientv3.Value(ls.key), "=", ls.token)).
		Then(clientv3.OpDelete(ls.key)).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return ErrNotHeld
	}
	return nil
}
