// Package workload runs the simulated clients: each stands in for one pod,
// with its own Locker (its own connections), and loops acquire, critical
// section (read, work, write v+1 on the protected Resource), release,
// think, recording every step in a history.
package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ErrInvalidConfig means a Config failed Validate.
var ErrInvalidConfig = errors.New("workload: invalid config")

// Dist is a uniform distribution of durations in [Min, Max].
type Dist struct {
	Min, Max time.Duration
}

// Draw returns one duration.
func (d Dist) Draw(rng *rand.Rand) time.Duration {
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(rng.Int64N(int64(d.Max-d.Min)+1))
}

func (d Dist) validate(what string) error {
	if d.Min < 0 || d.Max < 0 || (d.Max != 0 && d.Max < d.Min) {
		return fmt.Errorf("%w: %s range [%v, %v]", ErrInvalidConfig, what, d.Min, d.Max)
	}
	return nil
}

// RetryPolicy says how a client retries a failed acquire.
type RetryPolicy struct {
	// Base is the first backoff; it doubles per failed attempt up to Max,
	// with full jitter. Defaults 2ms and 20ms.
	Base, Max time.Duration
	// MaxAttempts per cycle before the client gives up, thinks, and starts
	// a new cycle. Default 0: keep trying until the run ends.
	MaxAttempts int
}

// Config describes a workload. Zero fields take the documented defaults.
type Config struct {
	// Clients is the number of simulated pods. Default 8.
	Clients int
	// Keys are the lock keys (and resource keys); each cycle picks one at
	// random. Default ["order:1"].
	Keys []string
	// Duration is how long clients start new cycles; a critical section
	// under way at the end is finished (with its release). Default 2s.
	Duration time.Duration
	// Stop, when closed, ends the run before Duration, the same way (the
	// cell has its answer). Nil: Duration alone ends it.
	Stop <-chan struct{}
	// AcquireTimeout bounds each acquire attempt. Default 250ms.
	AcquireTimeout time.Duration
	// ReleaseTimeout bounds each release. Default 250ms.
	ReleaseTimeout time.Duration
	// Retry is the acquire retry policy.
	Retry RetryPolicy
	// Work is the time between the read and the write. Default 2-10ms.
	Work Dist
	// Think is the pause between a release and the next acquire. Default 0-2ms.
	Think Dist
	// Fencing is the resource's fence mode. Default off.
	Fencing FenceMode
	// Seed drives every random draw (keys, work, think, jitter). Default 1.
	Seed int64
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.Clients < 0 || c.Clients > 10000 {
		return fmt.Errorf("%w: clients %d out of range 1..10000", ErrInvalidConfig, c.Clients)
	}
	for _, k := range c.Keys {
		if k == "" {
			return fmt.Errorf("%w: empty key", ErrInvalidConfig)
		}
	}
	if c.Duration < 0 || c.AcquireTimeout < 0 || c.ReleaseTimeout < 0 || c.Retry.Base < 0 || c.Retry.Max < 0 || c.Retry.MaxAttempts < 0 {
		return fmt.Errorf("%w: negative duration or count in %+v", ErrInvalidConfig, c)
	}
	if err := c.Work.validate("work"); err != nil {
		return err
	}
	if err := c.Think.validate("think"); err != nil {
		return err
	}
	return c.Fencing.Validate()
}

// WithDefaults returns the config with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if len(c.Keys) == 0 {
		c.Keys = []string{"order:1"}
	}
	if c.Duration == 0 {
		c.Duration = 2 * time.Second
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = 250 * time.Millisecond
	}
	if c.ReleaseTimeout == 0 {
		c.ReleaseTimeout = 250 * time.Millisecond
	}
	if c.Retry.Base == 0 {
		c.Retry.Base = 2 * time.Millisecond
	}
	if c.Retry.Max == 0 {
		c.Retry.Max = 20 * time.Millisecond
	}
	if c.Work == (Dist{}) {
		c.Work = Dist{Min: 2 * time.Millisecond, Max: 10 * time.Millisecond}
	}
	if c.Think == (Dist{}) {
		c.Think = Dist{Min: 0, Max: 2 * time.Millisecond}
	}
	if c.Fencing == "" {
		c.Fencing = FenceOff
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}
