package drivers_test

import (
	"errors"
	"math"
	"testing"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/scenarios"
)

// A driver declares its lock's lease as a Go Spec does (a library whose
// lease is whole seconds takes more than the cell's TTL): the spec the
// harness and the margins' theory read carries it, from Go and from a
// scenarios file.
func TestDriverDeclaresItsLease(t *testing.T) {
	d := drivers.Driver{Name: "dapr", Command: "dapr-driver", Lease: 1000.0 / 300}
	if got := d.Spec().Lease; got != d.Lease {
		t.Errorf("Spec().Lease = %v, want %v", got, d.Lease)
	}
	f, err := scenarios.Load([]byte("locks:\n  - name: dapr\n    command: dapr-driver\n    lease: 3.5\n"), "locks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Locks[0].Spec().Lease; got != 3.5 {
		t.Errorf("lease: 3.5 in a scenarios file gave Spec().Lease = %v", got)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		d.Lease = bad
		if err := d.Validate(); !errors.Is(err, drivers.ErrInvalid) {
			t.Errorf("lease %v: Validate() = %v, want ErrInvalid", bad, err)
		}
	}
}
