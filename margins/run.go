package margins

import (
	"context"
	"time"
)

// Run is a whole margins run: every boundary (Search), then the liveness
// margins at each of ttls (none for none), in one Report. A search that
// failed or was cut short returns what it found with the error, so the
// caller can still write it.
//
// replay, if set, rewrites each boundary's replay command before the
// report holds it (the CLI quotes it for a shell and passes its own
// flags on).
func Run(ctx context.Context, cfg Config, ttls []time.Duration, replay func([]Margin)) (*Report, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	found, err := Search(ctx, cfg)
	if replay != nil {
		replay(found)
	}
	var recs []Recovery
	var tols []Tolerance
	if err == nil && len(ttls) > 0 {
		recs, err = Recoveries(ctx, cfg, ttls)
		if err == nil {
			tols, err = Tolerances(ctx, cfg, ttls)
		}
	}
	rep := &Report{Recoveries: recs, Tolerances: tols, TimeScale: cfg.TimeScale, Format: FormatVersion, TTL: cfg.TTL,
		Seed: cfg.Seed, Seeds: cfg.Seeds, Resolution: cfg.Resolution, Elapsed: time.Since(start), Margins: found}
	if cfg.Backend != nil {
		rep.Backend = cfg.Backend.Name()
	}
	if cfg.Confirm != nil {
		rep.Confirm = cfg.Confirm.Name()
	}
	return rep, err
}

// Agrees is the run's verdict: every boundary and liveness margin agrees
// with its prediction and, where confirmed, with real Redis. A
// disagreement is a finding about the lock or the harness (the table
// says which); `lockchaos margins` exits 1 on it.
func (r *Report) Agrees() bool {
	for _, m := range r.Margins {
		if !m.Agrees || (m.Confirmed != nil && !*m.Confirmed) {
			return false
		}
	}
	for _, rc := range r.Recoveries {
		if !rc.Agrees {
			return false
		}
	}
	for _, t := range r.Tolerances {
		if !t.Agrees {
			return false
		}
	}
	return true
}
