package margins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// Search finds every lock's margin under every family.
func Search(ctx context.Context, cfg Config) ([]Margin, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.Remove(replayFile(cfg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []Margin
	for _, f := range cfg.Families {
		for _, lock := range cfg.Locks {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			start := time.Now()
			m, err := searchOne(ctx, cfg, lock, f)
			m.SearchTime = time.Since(start) - m.ConfirmTime
			if err != nil {
				return out, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// searchOne bisects one lock's boundary under one family: a coarse
// upward scan brackets it, then halving narrows the bracket until it is
// Resolution wide. A magnitude that breaks the lock in any run of its
// batch counts as breaking it. For a family that breaks below its
// boundary (Family.Below) the bracket is the last magnitude that broke
// and the first that held.
func searchOne(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family) (Margin, error) {
	base, err := f.scenario(time.Millisecond)
	if err != nil {
		return Margin{}, err
	}
	capTTL := cfg.Cap
	if f.Cap > 0 {
		capTTL = min(capTTL, f.Cap)
	}
	if lock.Lease > 0 {
		capTTL = max(capTTL, lock.Lease+2) // a longer lease is searched past its own length
	}
	s := &search{ctx: ctx, cfg: cfg, lock: lock, f: f, scale: float64(cfg.TTL) / float64(base.TTL),
		unit: base.TTL, m: Margin{Lock: lock.Name, Family: f.Name, TTL: cfg.TTL, Cap: time.Duration(capTTL * float64(cfg.TTL)),
			Resolution: time.Duration(cfg.Resolution * float64(cfg.TTL)), Searched: cfg.Backend.Name(), BreaksBelow: f.Below}}
	s.m.Predicted = Predict(lock, f, s.stretched(base))
	lo, hi, top, err := s.scan(capTTL)
	if s.skipped != "" && cfg.Confirm != nil {
		return searchOnReal(ctx, cfg, lock, f, s.skipped)
	}
	if err != nil || hi == 0 {
		return s.m, err
	}
	lo, hi, broke, err := s.bisect(lo, hi, top)
	if err != nil {
		return s.m, err
	}
	m := &s.m
	at, held := hi, lo
	if f.Below {
		at, held = lo, hi
	}
	if m.Shrunk, err = shrink(ctx, cfg, lock, f, at, s.scale, broke.Seed); err != nil {
		return *m, err
	}
	m.Broke = true
	m.At, m.Held = stretch(at, s.scale), stretch(held, s.scale)
	m.Agrees = m.Predicted.agrees(true, m.At, m.Resolution)
	return *m, s.confirm(lo, hi)
}

// search is one lock's search under one family; magnitudes are in the
// scenario's own time (unit is its TTL), stretched by scale to the TTL
// asked for.
type search struct {
	ctx   context.Context
	cfg   Config
	lock  lockimpl.Spec
	f     Family
	scale float64
	unit  time.Duration
	m     Margin
	// skipped is why the backend could not run the family at all.
	skipped string
}

// searchOnReal searches a family the simulation cannot run (replication
// lag, a driver process) on the confirming backend instead, with fewer,
// wider probes: its seeds a probe and twice the resolution. Nothing
// confirms it: it ran on real Redis already.
func searchOnReal(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family, why string) (Margin, error) {
	onReal := cfg
	onReal.Backend, onReal.Confirm = cfg.Confirm, nil
	onReal.Seeds, onReal.Resolution = cfg.ConfirmSeeds, min(2*cfg.Resolution, 0.5)
	m, err := searchOne(ctx, onReal, lock, f)
	if m.NotApplicable {
		return m, err
	}
	m.Note = strings.TrimPrefix(m.Note+"; ", "; ") + fmt.Sprintf("searched on %s, not %s (%s): %d seeds a probe, "+
		"resolution %.0f%% of the TTL", onReal.Backend.Name(), cfg.Backend.Name(), why, onReal.Seeds, 100*onReal.Resolution)
	return m, err
}

// stretched is the family's scenario at the search's TTL, as the theory
// reads it.
func (s *search) stretched(base scenarios.Scenario) scenarios.Scenario {
	sc := base.Scaled(s.scale)
	sc.TTL = s.cfg.TTL
	return sc
}

// confirm runs the confirming backend's batches on each side of the
// bracket [lo, hi] (the search's own time): one step outside where the
// lock should break, the bracket's end where it should hold.
func (s *search) confirm(lo, hi time.Duration) error {
	if s.cfg.Confirm == nil {
		return nil
	}
	start := time.Now()
	defer func() { s.m.ConfirmTime = time.Since(start) }()
	// One step outside the bracket on each side: the bracket is the
	// resolution wide, and a run on real Redis at its very edge may go
	// either way.
	belowAt, aboveAt := max(0, lo-s.step()), hi+s.step()
	breaking, holding := &aboveAt, &belowAt
	if s.f.Below {
		breaking, holding = &belowAt, &aboveAt
		// A real node is down for the delay and then for its own restart
		// (the calibration's node operation), where a simulated one
		// starts at once: the real boundary is that much lower.
		if restart := time.Duration(float64(s.cfg.NodeOpTime) / s.scale); restart > 0 && belowAt > restart {
			belowAt -= restart
			s.m.Note = strings.TrimPrefix(s.m.Note+"; ", "; ") + fmt.Sprintf("confirmed %s lower on %s: a real node is "+
				"down for the delay and for its restart", ttlWords(s.cfg.NodeOpTime), s.cfg.Confirm.Name())
		}
	}
	held, err := s.probe(*holding, true, s.cfg.ConfirmSeeds)
	if err != nil {
		return err
	}
	broke, err := s.probeUntilBroken(*breaking)
	if err != nil {
		return err
	}
	// A held side none of whose runs was decisive confirms nothing.
	ok := held.Broke == 0 && held.Decisive() > 0 && broke.Broke > 0
	below, above := &held, &broke
	if s.f.Below {
		below, above = &broke, &held
	}
	s.m.Below, s.m.Above, s.m.Confirmed = below, above, &ok
	return nil
}

// confirmBatches is how many batches the breaking side of a confirmation
// may take: a break near the boundary is a matter of where the fault
// lands, and a batch of five that missed it is not yet a disagreement.
const confirmBatches = 3

// probeUntilBroken runs confirmation batches at at until one breaks the
// lock, at most confirmBatches, and sums them.
func (s *search) probeUntilBroken(at time.Duration) (Probe, error) {
	var sum Probe
	for i := range confirmBatches {
		batch := *s // each batch its own seeds
		batch.cfg.Seed += int64(i * s.cfg.ConfirmSeeds)
		p, err := batch.probe(at, true, s.cfg.ConfirmSeeds)
		if err != nil {
			return p, err
		}
		if i == 0 {
			sum = p
		} else {
			sum.Runs, sum.Broke, sum.Inconclusive, sum.Errors = sum.Runs+p.Runs, sum.Broke+p.Broke,
				sum.Inconclusive+p.Inconclusive, sum.Errors+p.Errors
			if sum.Seed < 0 {
				sum.Seed = p.Seed
			}
		}
		if sum.Broke > 0 {
			break
		}
	}
	return sum, nil
}

func (s *search) step() time.Duration { return time.Duration(s.cfg.Resolution * float64(s.unit)) }

// probe runs magnitude at on the search's backend, or on the confirming
// one.
func (s *search) probe(at time.Duration, confirm bool, seeds int) (Probe, error) {
	on := s.cfg.Backend
	if confirm {
		on = s.cfg.Confirm
	}
	p, err := runProbe(s.ctx, s.cfg, s.lock, s.f, at, s.scale, on, seeds)
	if err == nil {
		if !confirm {
			s.m.Probes = append(s.m.Probes, p)
			s.m.Schedules += p.Runs
		}
		if s.cfg.Progress != nil {
			s.cfg.Progress(p)
		}
	}
	return p, err
}

// past says a probe is past the boundary the search looks for: it broke
// the lock, or, for a family that breaks below its boundary, it held.
func (s *search) past(p Probe) bool { return (p.Broke > 0) != s.f.Below }

// scan goes upward first, on a coarse ladder: a magnitude far past the
// cell (a reply held back longer than the cell runs) breaks nothing, so
// the cap alone cannot say "never". The first rung past the boundary and
// the one below it bracket it; hi 0: none was past it (the margin says
// why).
func (s *search) scan(capTTL float64) (lo, hi time.Duration, top Probe, err error) {
	var last Probe
	rungs := ladder(s.f.first(), capTTL)
	lo0 := time.Duration(rungs[0] * float64(s.unit))
	for i, r := range rungs {
		at := time.Duration(r * float64(s.unit))
		p, err := s.probe(at, false, s.cfg.Seeds)
		if err != nil {
			return 0, 0, p, err
		}
		if p.Skipped == p.Runs {
			// The backend cannot run the family (the simulation has no
			// replication): say so, and where to search it.
			s.m.Searched, s.m.Schedules, s.m.Probes = "-", 0, nil
			s.m.Agrees = !s.m.Predicted.Breaks
			if _, virtual := backend.Virtual(s.cfg.Backend); !virtual {
				// Real Redis could not run it either: the lock and the
				// fault do not meet (Redlock has no replica to promote).
				s.m.NotApplicable, s.m.Note = true, p.Skip
				return 0, 0, p, nil
			}
			s.m.Agrees = true
			s.m.Note = fmt.Sprintf("not searched on %s: %s; search it on real Redis with --backend process", s.cfg.Backend.Name(), p.Skip)
			s.skipped = p.Skip
			return 0, 0, p, nil
		}
		if s.past(p) {
			if s.f.Below && i == 0 {
				break // held at the first rung: never broke
			}
			if s.f.Below {
				return lo, at, last, nil
			}
			return lo, at, p, nil
		}
		lo, last = at, p
	}
	switch {
	case s.f.Below && last.Broke > 0:
		s.m.Note = fmt.Sprintf("broke at every magnitude up to %.0fx TTL in %d schedules", capTTL, s.m.Schedules)
		s.m.Broke, s.m.At = true, s.m.Cap
		s.m.Agrees = s.m.Predicted.agrees(true, s.m.At, s.m.Resolution)
	case s.f.Below:
		s.m.Note = fmt.Sprintf("no violation even at %s in %d schedules", ttlWords(stretch(lo0, s.scale)), s.m.Schedules)
		s.m.Agrees = s.m.Predicted.agrees(false, 0, s.m.Resolution)
	default:
		s.m.Note = fmt.Sprintf("no violation up to %.0fx TTL in %d schedules", capTTL, s.m.Schedules)
		s.m.Agrees = s.m.Predicted.agrees(false, 0, s.m.Resolution)
	}
	return lo, 0, Probe{}, nil
}

// bisect halves the bracket until it is the resolution wide; broke is the
// last probe that broke the lock (at hi, or at lo below the boundary).
func (s *search) bisect(lo, hi time.Duration, broke Probe) (time.Duration, time.Duration, Probe, error) {
	for hi-lo > s.step() {
		mid := ((lo + hi) / 2).Round(time.Millisecond / 10)
		if mid <= lo || mid >= hi {
			// A step finer than the magnitudes' 0.1 ms grid: the bracket
			// is as narrow as a probe can make it (it bisected forever).
			break
		}
		p, err := s.probe(mid, false, s.cfg.Seeds)
		if err != nil {
			return lo, hi, broke, err
		}
		if p.Broke > 0 {
			broke = p
		}
		if s.past(p) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi, broke, nil
}
