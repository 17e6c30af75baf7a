package lockchaostest_test

import (
	"testing"

	"github.com/lockchaos/lockchaos/backend/backendtest"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

// TestOrderLock runs the example's test: the adapter on real Redis where
// there is a redis-server, and on the simulated backend everywhere.
func TestOrderLock(t *testing.T) { testOrderLock(t) }
