package margins

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/scenarios"
)

// What a run may be asked for, checked before anything starts (the CLI
// names the flag: a FieldError's Field is the flag's name without its
// dashes). A value of 0 is an error here, not a default: the default is
// the option left out.

// The TTLs margins searches at. Below 10 ms a scenario means nothing on a
// loaded machine (scenarios' own floor) and Redis counts in milliseconds.
// Virtual time is free, but a cell's history is not: the pods retry every
// 20 ms whatever the TTL, so a probe's history grows with it (fenced's
// one-way-loss up to 10x a 30 s TTL peaked at 650 MB with two cells at
// once, and took 6.5 min for 2 seeds); past a minute a search is hours
// and gigabytes.
const (
	MinTTL = 10 * time.Millisecond
	MaxTTL = time.Minute
)

// The search's step, as a share of the TTL. Below 1% the bisection
// splits hairs the runs cannot tell apart (a fault lands at a random
// moment of a critical section; a probe's magnitude rounds to 0.1 ms);
// above 50% it brackets nothing a ladder rung does not.
const (
	MinResolution = 0.01
	MaxResolution = 0.5
)

// The largest magnitude tried, in TTLs.
const (
	MinCap = 0.1
	MaxCap = 100
)

// fieldError is an option out of its range, its field named as the
// CLI's flag spells it (scenarios.FieldError).
func fieldError(field string, value any, want string) error {
	return &scenarios.FieldError{Field: field, Value: value, Want: want, Err: ErrInvalid}
}

// CheckRanges checks the numbers of a run before it starts: the seeds of
// a batch (at most maxSeeds), the step, the cap, the time scale (0:
// measure) and every TTL (a lone 0 in liveness skips the liveness
// margins). NaN and the infinities are out of every range (a NaN step
// bisected forever).
func CheckRanges(c Config, maxSeeds int, liveness []time.Duration) error {
	for _, n := range []struct {
		field string
		v     int
	}{{"confirm-seeds", c.ConfirmSeeds}, {"seeds", c.Seeds}} {
		if n.v < 1 || n.v > maxSeeds {
			return fieldError(n.field, n.v, fmt.Sprintf("want 1..%d seeds a batch", maxSeeds))
		}
	}
	switch r, cp, ts := c.Resolution, c.Cap, c.TimeScale; {
	case !(r >= MinResolution && r <= MaxResolution):
		return fieldError("resolution", r, fmt.Sprintf("want a share of the TTL in %v..%v (the default: 0.05 in the "+
			"simulation, 0.1 on real Redis)", MinResolution, MaxResolution))
	case !(cp >= MinCap && cp <= MaxCap):
		return fieldError("cap", cp, fmt.Sprintf("want a number of TTLs in %v..%v", MinCap, MaxCap))
	case ts != 0 && !(ts >= 0.1 && ts <= 100):
		return fieldError("time-scale", ts, "want 0 (measure) or a factor in 0.1..100")
	}
	return checkTTLs(c.TTL, liveness)
}

// checkTTLs checks the TTL searched at and those of the liveness margins.
func checkTTLs(ttl time.Duration, liveness []time.Duration) error {
	if err := ttlInRange("ttl", ttl); err != nil {
		return err
	}
	if len(liveness) == 1 && liveness[0] == 0 {
		return nil
	}
	for _, d := range liveness {
		if d == 0 {
			return fieldError("recovery-ttl", joinDurations(liveness),
				fmt.Sprintf("0 skips the liveness margins, alone; the others want %v..%v", MinTTL, MaxTTL))
		}
		if err := ttlInRange("recovery-ttl", d); err != nil {
			return err
		}
	}
	return nil
}

// LivenessTTLs are the TTLs of the liveness margins: those given (none
// for a lone 0), else half, once and twice ttl, those of them in range
// (at a TTL of 10 ms, half of it is no TTL a scenario runs at).
func LivenessTTLs(ttl time.Duration, given []time.Duration) []time.Duration {
	if given != nil {
		if len(given) == 1 && given[0] == 0 {
			return nil
		}
		return given
	}
	var out []time.Duration
	for _, d := range []time.Duration{ttl / 2, ttl, 2 * ttl} {
		if ttlInRange("", d) == nil {
			out = append(out, d)
		}
	}
	return out
}

func ttlInRange(field string, d time.Duration) error {
	if d < MinTTL || d > MaxTTL {
		return fieldError(field, d, fmt.Sprintf("want a TTL in %v..%v", MinTTL, MaxTTL))
	}
	return nil
}

func joinDurations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}
