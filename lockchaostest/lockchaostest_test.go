package lockchaostest_test

import (
	"testing"

	"github.com/lockchaos/lockchaos/faults/faultstest"
)

func TestMain(m *testing.M) { faultstest.Main(m) }

// TestOrderLock runs the example's test: the adapter on real Redis where
// there is a redis-server, and on the simulated backend everywhere.
func TestOrderLock(t *testing.T) { testOrderLock(t) }
