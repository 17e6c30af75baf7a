package scenarios_test

import (
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/lockchaostest"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// myLockSpec stands in for a lock a user wrote: here the textbook token
// lock from lockimpl under a name of its own. Its traits are data: one
// Redis node, no fences, no renewals. The constructor gets the pod's
// clients (already wired through the cell's proxies and pause hooks) and
// the cell's TTL.
var myLockSpec = lockimpl.Spec{
	Name:  "my-lock",
	Doc:   "the team's SET NX + Lua release lock",
	Nodes: 1,
	New: func(env lockimpl.Env) (lockimpl.Locker, error) {
		return lockimpl.NewToken(env.Clients[0], lockimpl.TokenConfig{TTL: env.TTL})
	},
}

// TestMyLockThroughTheGoAPI is what a user's go test looks like. The token
// lock is fine without faults and, as expected, unsafe under a
// stop-the-world pause; a user whose lock should survive pauses would
// expect Safe there and see this test fail with the violation spelled out
// and the report's path.
func TestMyLockThroughTheGoAPI(t *testing.T) {
	opts := lockchaostest.Options{Duration: time.Second, Seed: 11}
	t.Run("baseline", func(t *testing.T) { lockchaostest.Run(t, myLockSpec, "baseline", lockchaostest.Safe, opts) })
	t.Run("gc-pause", func(t *testing.T) { lockchaostest.Run(t, myLockSpec, "gc-pause", lockchaostest.Unsafe, opts) })
}

// TestMyLockSimulated runs the same cells on the simulated backend: no
// redis-server, virtual time, milliseconds per cell; the results say they
// are simulated. A sweep over many seeds belongs here; what it finds is
// replayed on real Redis with the seed it logs.
func TestMyLockSimulated(t *testing.T) {
	for _, seed := range []int64{11, 12, 13} {
		opts := lockchaostest.Options{Seed: seed, Backend: lockchaostest.Sim(t)}
		if res := lockchaostest.Run(t, myLockSpec, "gc-pause", lockchaostest.Unsafe, opts); !res.Simulated {
			t.Errorf("seed %d: a simulated result not marked simulated", seed)
		}
		lockchaostest.Run(t, myLockSpec, "baseline", lockchaostest.Safe, opts)
	}
}
