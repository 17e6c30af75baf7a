package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// myLock stands in for a lock a user wrote: here the textbook token lock
// from lockimpl, built from the pod's Redis clients the harness hands over
// (already wired through the cell's proxies and fault hooks).
func myLock(nodes []redis.UniversalClient) (lockimpl.Locker, error) {
	return lockimpl.NewToken(nodes[0], lockimpl.TokenConfig{TTL: 300 * time.Millisecond})
}

// TestMyLockThroughTheGoAPI is what a user's go test looks like: pick a
// scenario, hand over a factory, assert on the result. The token lock is
// fine without faults and, as expected, unsafe under a stop-the-world
// pause; a user whose lock should survive pauses would expect Safe there
// and see this test fail with the violation spelled out.
func TestMyLockThroughTheGoAPI(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		scenario string
		expect   scenarios.Expectation
	}{
		{"baseline", scenarios.Safe},
		{"gc-pause", scenarios.Unsafe},
	} {
		sc, err := scenarios.Get(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		sc.Duration = time.Second
		res := scenarios.Run(ctx, sc, "my-lock", c.expect, myLock, scenarios.Options{Seed: 11})
		if res.Failed() {
			t.Fatal(res.Summary())
		}
		t.Log(res.Summary())
	}
}
