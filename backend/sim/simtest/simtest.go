// Package simtest runs a test's body in virtual time on the simulated
// backend: for claims about what a lock or the workload does as time
// passes (a TTL lapses, a watchdog renews, a crashed pod stays dead),
// which hold on miniredis's virtual clock as on redis-server's real one,
// and take no wall time there.
package simtest

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend/sim"
)

// drain is how long the bubble waits, after the test's cleanups, for
// goroutines that only notice on their next wake-up (as scenarios'
// virtual parts do).
const drain = 2 * time.Second

// Run runs f in a synctest bubble with a simulated backend. Whatever f
// starts must be closed by its end or by t.Cleanup (a deployment from
// backendtest.Cluster and clients closed with t.Cleanup are): a bubble
// ends only when every goroutine in it has.
func Run(t *testing.T, f func(t *testing.T, b sim.Backend)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		// Registered first, so it runs last, after the clients and the
		// deployment are closed: go-redis's dial breaker probes a failing
		// address once a virtual second until it sees its pool closed.
		t.Cleanup(func() { time.Sleep(drain) })
		f(t, sim.New(nil))
	})
}
