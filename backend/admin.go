package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/internal/redislog"
	"github.com/redis/go-redis/v9"
)

// Admin opens a short-lived direct connection (never through a proxy) for
// control commands such as REPLICAOF.
func Admin(addr string) *redis.Client {
	redislog.Quiet() // dial errors to a node the harness just killed are expected
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		Protocol:              2,
		DisableIdentity:       true,
		MaxRetries:            -1,
		DialTimeout:           time.Second,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
		ContextTimeoutEnabled: true,
		PoolSize:              1,
	})
}

// AdminOps are the control commands every kind of node answers the same
// way, over a direct connection to its address (never through a proxy).
// A RedisNode embeds it to get Do, ReplicaOf, Promote, ReplicationInfo and
// WaitLinkUp; build it with NewAdminOps.
type AdminOps struct {
	label   string
	address func() string
}

// NewAdminOps returns the control commands of the node labelled label (the
// name errors quote), which listens on addr(). addr is called for every
// command, so it may be the node's own Addr method.
func NewAdminOps(label string, addr func() string) AdminOps {
	return AdminOps{label: label, address: addr}
}

// Do runs one command on the node over a direct connection.
func (a AdminOps) Do(ctx context.Context, args ...any) (any, error) {
	c := Admin(a.address())
	defer c.Close()
	v, err := c.Do(ctx, args...).Result()
	if err != nil {
		return nil, fmt.Errorf("backend: node %s: %v: %w", a.label, args, err)
	}
	return v, nil
}

// ReplicaOf makes the node replicate from addr (usually a proxy in front of
// the primary, so that the replication link can be lagged or cut).
func (a AdminOps) ReplicaOf(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("backend: node %s: replicaof %q: %w", a.label, addr, err)
	}
	_, err = a.Do(ctx, "REPLICAOF", host, port)
	return err
}

// Promote turns a replica into a primary (REPLICAOF NO ONE). It keeps
// whatever data it has received so far: writes still in flight are lost.
func (a AdminOps) Promote(ctx context.Context) error {
	_, err := a.Do(ctx, "REPLICAOF", "NO", "ONE")
	return err
}

// ReplicationInfo returns the fields of INFO replication.
func (a AdminOps) ReplicationInfo(ctx context.Context) (map[string]string, error) {
	v, err := a.Do(ctx, "INFO", "replication")
	if err != nil {
		return nil, err
	}
	s, _ := v.(string)
	out := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok {
			out[k] = val
		}
	}
	return out, nil
}

// WaitLinkUp waits until the node, a replica, reports its link to the
// primary up (the initial sync is done).
func (a AdminOps) WaitLinkUp(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		info, err := a.ReplicationInfo(ctx)
		if err == nil && info["master_link_status"] == "up" {
			return nil
		}
		if time.Now().After(deadline) {
			//nolint:errorlint // err is nil when the link answered but is not up: %w would print %!w(<nil>)
			return fmt.Errorf("backend: node %s: replication link not up after %v (last: %v %v)",
				a.label, timeout, info["master_link_status"], err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// IsNil reports a nil reply (GET of a missing key), which Do returns as an
// error wrapping redis.Nil.
func IsNil(err error) bool { return errors.Is(err, redis.Nil) }
