package margins

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/lockimpl"
)

// ErrInvalid is a search that cannot mean anything.
var ErrInvalid = errors.New("margins: invalid config")

// Config is one search: locks x families, at one TTL.
type Config struct {
	Locks    []lockimpl.Spec
	Families []Family
	// TTL is the lease time searched at (the user's production TTL);
	// every time of a family's scenario stretches with it. Default: the
	// catalog's (300 ms).
	TTL time.Duration
	// Seeds is each probe's batch (default 20); Seed the first seed.
	Seeds int
	Seed  int64
	// Resolution is the search's step, as a fraction of the TTL (default
	// 0.05); Cap the largest magnitude tried, in TTLs (default 10).
	Resolution float64
	Cap        float64
	// Backend runs the search (the simulation, by default the caller's);
	// Confirm, if set, runs ConfirmSeeds seeds just below and just above
	// each boundary found (real Redis).
	Backend      backend.Backend
	Confirm      backend.Backend
	ConfirmSeeds int
	// TimeScale stretches the runs on real Redis (the confirmation's, and
	// the search's where it runs there) for a loaded machine:
	// scenarios.Calibrate's, 0 for 1. Magnitudes stretch with it, so a
	// boundary in TTLs is the same; the simulation never stretches.
	TimeScale float64
	// NodeOpTime is the measured time to kill and restart a node there
	// (scenarios.Calibrate's; 0: the backend's own estimate).
	NodeOpTime time.Duration
	// Parallel cells at once; OutDir keeps the probes' files.
	Parallel int
	OutDir   string
	// Progress, if set, hears of each probe as it finishes.
	Progress func(p Probe)
}

func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = lockimpl.DefaultTTL
	}
	if c.Seeds == 0 {
		c.Seeds = 20
	}
	if c.Resolution == 0 {
		c.Resolution = 0.05
	}
	if c.Cap == 0 {
		c.Cap = 10
	}
	if c.ConfirmSeeds == 0 {
		c.ConfirmSeeds = 5
	}
	if len(c.Families) == 0 {
		c.Families = Families
	}
	return c
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.TTL < 0 || c.Seeds < 0 || c.ConfirmSeeds < 0 || c.Parallel < 0:
		return fmt.Errorf("%w: negative TTL, seeds or parallel", ErrInvalid)
	// Written so that NaN fails too: a NaN step bisected forever.
	case !(c.Resolution >= 0 && c.Resolution < 1):
		return fmt.Errorf("%w: resolution %v must be in (0, 1) of the TTL", ErrInvalid, c.Resolution)
	case !(c.Cap >= 0 && c.Cap <= 100):
		return fmt.Errorf("%w: cap %v must be in (0, 100] TTLs", ErrInvalid, c.Cap)
	case !(c.TimeScale >= 0 && c.TimeScale <= 100):
		return fmt.Errorf("%w: time scale %v must be in 0..100 (0: 1)", ErrInvalid, c.TimeScale)
	case c.Backend == nil:
		return fmt.Errorf("%w: no backend to search on", ErrInvalid)
	case len(c.Locks) == 0:
		return fmt.Errorf("%w: no lock to search", ErrInvalid)
	}
	return nil
}

// FamiliesNamed looks up each named family (spaces around a name
// ignored), in the order given.
func FamiliesNamed(names []string) ([]Family, error) {
	var out []Family
	for _, name := range names {
		f, err := FamilyNamed(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// Searchable says why a lock has no margin to search, or nil: a lock
// that keeps no shared state is unsafe at any magnitude.
func Searchable(spec lockimpl.Spec) error {
	if spec.Nodes == 0 {
		// Unprefixed: the CLI prints it as it did when the check was its own.
		return fmt.Errorf("lock %s keeps no shared state: it is unsafe at any magnitude, nothing to search", spec.Name)
	}
	return nil
}
