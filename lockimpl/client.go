package lockimpl

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/lockchaos/lockchaos/internal/redislog"
	"github.com/redis/go-redis/v9"
)

// ClientConfig sets the go-redis options that change what a fault looks
// like. The zero value gives the defaults documented on each field.
type ClientConfig struct {
	// DialTimeout per connection attempt. Default 500ms.
	DialTimeout time.Duration
	// ReadTimeout and WriteTimeout per command. Default 1s each. A command
	// that times out is indefinite: it may have run on the server.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	// PoolSize per client. Default 4 (one pod rarely needs more for locks).
	PoolSize int
	// Retries is how often go-redis retries a failed command. Default 0:
	// a retry hides a fault and can apply a command twice (a SET NX that
	// succeeded, then "fails" on retry, reads as not acquired).
	Retries int
	// Dialer, if set, makes the client's connections (the harness passes
	// its pod's pausable dialer). Default: a plain TCP dial.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Validate reports a config that cannot work.
func (c ClientConfig) Validate() error {
	if c.DialTimeout < 0 || c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.PoolSize < 0 || c.Retries < 0 {
		return fmt.Errorf("%w: client config has a negative value: %+v", ErrInvalidConfig, c)
	}
	return nil
}

// NewRedisClient returns a go-redis client for addr with the harness's
// choices made on purpose:
//   - context deadlines bound every command (ContextTimeoutEnabled);
//   - no command retries and a single dial attempt, so the history shows
//     each fault as it happened (go-redis defaults: 3 and 5);
//   - RESP2 without CLIENT SETINFO, so a fresh connection costs one round
//     trip, not three, and reconnects after a fault stay cheap.
func NewRedisClient(addr string, cfg ClientConfig) (*redis.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	Quiet()
	o := clientOptions(addr, cfg)
	return redis.NewClient(&o), nil
}

// NewFailoverClient returns a go-redis client that asks the Sentinels at
// sentinels (monitoring master) for the primary before every new
// connection and follows their switch announcements, with the same choices
// as NewRedisClient. route maps an address the Sentinels report to the one
// to dial (the pod's own proxy to that process), or refuses it; it runs
// before cfg.Dialer.
func NewFailoverClient(master string, sentinels []string, route func(string) (string, error), cfg ClientConfig) (*redis.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	Quiet()
	o := clientOptions("", cfg)
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: master, SentinelAddrs: sentinels,
		Dialer:   routedDialer(route, o),
		Protocol: o.Protocol, DisableIdentity: o.DisableIdentity, ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		MaxRetries: o.MaxRetries, DialerRetries: o.DialerRetries, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout,
	}), nil
}

// NewClusterClient returns a go-redis cluster client that starts from
// seeds and follows the cluster (MOVED, ASK, its slot map reloaded after
// each), with the same choices as NewRedisClient for each node's
// connections. Its redirects are go-redis's default (3): within them a
// command that failed on the network is tried again on the same node, then
// on another, as every go-redis cluster user's is; the history records the
// whole as one call. route maps an address the cluster announces to the
// one to dial (the pod's own proxy to that node), or refuses it; it runs
// before cfg.Dialer.
func NewClusterClient(seeds []string, route func(string) (string, error), cfg ClientConfig) (*redis.ClusterClient, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	Quiet()
	o := clientOptions("", cfg)
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:    seeds,
		Dialer:   routedDialer(route, o),
		Protocol: o.Protocol, DisableIdentity: o.DisableIdentity, ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		MaxRetries: o.MaxRetries, DialerRetries: o.DialerRetries, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout,
		ReadBufferSize: o.ReadBufferSize, WriteBufferSize: o.WriteBufferSize,
	}), nil
}

// routedDialer dials the address route maps addr to (or refuses), with
// o's dialer, or a plain one within o's dial timeout.
func routedDialer(route func(string) (string, error), o redis.Options) func(context.Context, string, string) (net.Conn, error) {
	dial := o.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: o.DialTimeout}
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, err := route(addr)
		if err != nil {
			return nil, err
		}
		return dial(ctx, network, to)
	}
}

func clientOptions(addr string, cfg ClientConfig) redis.Options {
	def := func(v, d time.Duration) time.Duration {
		if v == 0 {
			return d
		}
		return v
	}
	retries := -1 // go-redis: -1 disables retries, 0 means its default of 3
	if cfg.Retries > 0 {
		retries = cfg.Retries
	}
	pool := cfg.PoolSize
	if pool == 0 {
		pool = 4
	}
	return redis.Options{
		Addr:                  addr,
		Protocol:              2,
		DisableIdentity:       true,
		ContextTimeoutEnabled: true,
		DialTimeout:           def(cfg.DialTimeout, 500*time.Millisecond),
		ReadTimeout:           def(cfg.ReadTimeout, time.Second),
		WriteTimeout:          def(cfg.WriteTimeout, time.Second),
		MaxRetries:            retries,
		DialerRetries:         1,
		PoolSize:              pool,
		PoolTimeout:           def(cfg.ReadTimeout, time.Second) + time.Second,
		Dialer:                cfg.Dialer,
		// A lock's commands and replies are tens of bytes: 4 KiB buffers
		// (go-redis's default is 32 KiB each way) are plenty; allocating
		// and zeroing 64 KiB per connection, as a cell reconnects under
		// faults, cost 7 % of a simulated matrix's CPU.
		ReadBufferSize:  4 << 10,
		WriteBufferSize: 4 << 10,
	}
}

// Quiet silences go-redis's process-wide logger (it has no per-client
// one): under injected faults its dial errors come by the thousand.
// NewRedisClient calls it; call it yourself when you build clients another
// way; redis.SetLogger afterwards brings go-redis's lines back.
func Quiet() { redislog.Quiet() }
