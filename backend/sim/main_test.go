package sim

import (
	"testing"

	"github.com/lockchaos/lockchaos/backend/backendtest"
)

// TestMain fails the package if a test leaves a goroutine behind (a
// bubble's own are checked by synctest as each test ends; this catches
// the ones started outside a bubble, as the benchmarks' are).
func TestMain(m *testing.M) { backendtest.Main(m) }
