package backend

import (
	"context"
	"time"
)

// What a node that is not Redis offers in place of Redis commands where a
// fault or a deployment needs them (a PostgreSQL standby): optional
// interfaces, asked with a type assertion; a Redis node has neither and
// keeps its Redis path.

// KeyProber is a node that says who holds which lock on it now, for a
// node that does not answer GET. ProbeKeys returns, for each of keys held
// on the node, its holder (a value as the node's witness reports it); a
// key absent from the map is not held there.
type KeyProber interface {
	ProbeKeys(ctx context.Context, keys []string) (map[string]string, error)
}

// CatchUpWaiter is a replica that can wait until it has replayed
// everything its primary had written when asked (what Redis's WAIT gives
// through a write), for a node that does not answer WAIT.
type CatchUpWaiter interface {
	WaitCaughtUp(ctx context.Context, primary RedisNode, timeout time.Duration) error
}
