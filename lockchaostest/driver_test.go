package lockchaostest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockchaostest"
)

// docs:begin drivertest
// TestOrdersLockInADriverProcess tests the team's lock served by a driver
// process: the driver is built in the team's own module, with that
// module's dependency versions, and this test only starts it. Here the
// driver's module is testdata/orderdriver; in your repository it is the
// module that holds the lock library (build.Dir = ".." from a chaos
// module beside it).
func TestOrdersLockInADriverProcess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lockdriver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "orderdriver")
	build.Env = append(os.Environ(), "GOWORK=off") // the driver's module alone, whatever go.work says
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the driver: %v\n%s", err, out)
	}
	// One driver process per pod; the traits are the lock's, as a Spec's.
	lock := drivers.Driver{Name: "orders", Command: bin, Nodes: 1}.Spec()
	lockchaostest.Run(t, lock, "baseline", lockchaostest.Safe)
	// A pause is a real SIGSTOP of the driver's process: past the TTL, a
	// second pod gets the lock, and the harness must see it.
	lockchaostest.Run(t, lock, "gc-pause", lockchaostest.Unsafe)
}

// docs:end drivertest
