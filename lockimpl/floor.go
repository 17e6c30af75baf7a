package lockimpl

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/service"
)

// Floor is the cheapest round trip a lock's service answers (Redis PING,
// PostgreSQL SELECT 1, etcd's linearizable Get, which the leader confirms
// with a heartbeat round), made from a pod's Env: through the same links
// and dialer as the pod's lock. A lock's cost divided by its floor is a
// ratio that holds on any machine.
type Floor struct {
	// Op names the round trip ("PING").
	Op    string
	do    func(context.Context) error
	close func() error
}

// Do makes one round trip.
func (f *Floor) Do(ctx context.Context) error { return f.do(ctx) }

// Close closes the floor's own connection (a Redis floor uses the pod's
// client, which the pod closes).
func (f *Floor) Close() error {
	if f.close == nil {
		return nil
	}
	return f.close()
}

// NewFloor is the floor of svc, reached as a lock built from env reaches
// it.
func NewFloor(ctx context.Context, svc service.Name, env Env) (*Floor, error) {
	switch svc.Or() {
	case service.Postgres:
		if len(env.Addrs) == 0 {
			return nil, fmt.Errorf("%w: a PostgreSQL floor needs the server's address", ErrInvalidConfig)
		}
		cfg, err := pgConnConfig(env.Addrs[0], callTimeout(env), env.Dial, env.Postgres)
		if err != nil {
			return nil, err
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("postgres floor: %w", err)
		}
		return &Floor{Op: "SELECT 1", do: func(ctx context.Context) error {
			var one int
			return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
		}, close: func() error { return conn.Close(context.Background()) }}, nil
	case service.Etcd:
		cli, err := newEtcdClient(env)
		if err != nil {
			return nil, err
		}
		return &Floor{Op: "Get", do: func(ctx context.Context) error {
			_, err := cli.Get(ctx, "lockchaos:floor")
			return err
		}, close: cli.Close}, nil
	default:
		if len(env.Clients) == 0 {
			return nil, fmt.Errorf("%w: a Redis floor needs the pod's client", ErrInvalidConfig)
		}
		rdb := env.Clients[0]
		return &Floor{Op: "PING", do: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }}, nil
	}
}
