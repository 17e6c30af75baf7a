package deployment

import (
	"context"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/wait"
)

// waitSynced waits until replica reports its link to primary up and a
// write on primary is acknowledged by it (WAIT 1): right after the initial
// sync a primary can hold the stream, and WAIT's GETACK, back until the
// replica's first ACK, up to a second later. Measured: without it,
// token-wait's first WAIT 1 timed out in 3 of 8 test runs. It assumes
// replica is primary's only one (the topologies have one): WAIT 1 cannot
// tell which replica acknowledged.
func waitSynced(ctx context.Context, replica, primary backend.RedisNode, timeout time.Duration) error {
	if err := replica.WaitLinkUp(ctx, timeout); err != nil {
		return err
	}
	// A server that does not answer WAIT (a PostgreSQL standby) waits
	// for its own replay of what the primary has written.
	if w, ok := replica.(backend.CatchUpWaiter); ok {
		return w.WaitCaughtUp(ctx, primary, timeout)
	}
	c := backend.Admin(primary.Addr()) // one connection: WAIT counts its own writes
	defer c.Close()
	const probe = "lockchaos:replication-probe"
	defer c.Del(context.Background(), probe)
	deadline := time.Now().Add(timeout)
	written := false
	for {
		// Once written, WAIT waits for that write whatever the lag on the
		// replication link (failover scenarios lag it on purpose). After
		// an error the connection may be a new one, which has written
		// nothing (and WAIT would pass at once): write again.
		var err error
		if !written {
			err = c.Set(ctx, probe, "1", 0).Err()
			written = err == nil
		}
		var acks int64
		if err == nil {
			acks, err = c.Do(ctx, "WAIT", 1, 500).Int64()
			if err != nil {
				written = false
			}
		}
		if err == nil && acks >= 1 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			why := "no acknowledgement"
			if err != nil {
				why = err.Error()
			}
			return fmt.Errorf("deployment: node %s: no replica acknowledged a write within %v (%s)", primary.Name(), timeout, why)
		}
		if err != nil {
			wait.Sleep(ctx, 20*time.Millisecond)
		}
	}
}
