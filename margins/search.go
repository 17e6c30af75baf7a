package margins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
	"github.com/lockchaos/lockchaos/scenarios"
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
	// ConfirmScale stretches the confirmation runs for a loaded machine
	// (scenarios.Calibrate's; 0: 1). Magnitudes stretch with it, so a
	// boundary in TTLs is the same.
	ConfirmScale float64
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
	case c.Resolution < 0 || c.Resolution >= 1:
		return fmt.Errorf("%w: resolution %v must be in (0, 1) of the TTL", ErrInvalid, c.Resolution)
	case c.Cap < 0 || c.Cap > 100:
		return fmt.Errorf("%w: cap %v must be in (0, 100] TTLs", ErrInvalid, c.Cap)
	case c.Backend == nil:
		return fmt.Errorf("%w: no backend to search on", ErrInvalid)
	case len(c.Locks) == 0:
		return fmt.Errorf("%w: no lock to search", ErrInvalid)
	}
	return nil
}

// Probe is one magnitude tried on a batch of seeds.
type Probe struct {
	Lock         string        `json:"lock"`
	Family       string        `json:"family"`
	Magnitude    time.Duration `json:"magnitude_ns"`
	InTTL        float64       `json:"in_ttl"`
	Runs         int           `json:"runs"`
	Broke        int           `json:"broke"`        // runs whose safety verdict was fail
	Inconclusive int           `json:"inconclusive"` // the fault never reached its dangerous moment often enough
	Errors       int           `json:"errors,omitempty"`
	// Skipped runs could not run on the backend (the reason in Skip).
	Skipped int    `json:"skipped,omitempty"`
	Skip    string `json:"skip,omitempty"`
	// Seed is the first seed that broke the lock (-1: none; the margin's
	// Shrunk replays one); Backend where it ran.
	Seed    int64  `json:"first_broke_seed"`
	Backend string `json:"backend"`
}

// Rate is the share of runs that broke the lock.
func (p Probe) Rate() float64 {
	if p.Runs == 0 {
		return 0
	}
	return float64(p.Broke) / float64(p.Runs)
}

// Margin is one lock's boundary under one family.
type Margin struct {
	Lock   string        `json:"lock"`
	Family string        `json:"family"`
	TTL    time.Duration `json:"ttl_ns"`
	// Broke says the lock broke at some magnitude up to Cap; At is the
	// smallest magnitude found that broke it (within Resolution), Held
	// the largest below it that did not.
	Broke bool          `json:"broke"`
	At    time.Duration `json:"at_ns,omitempty"`
	Held  time.Duration `json:"held_ns,omitempty"`
	Cap   time.Duration `json:"cap_ns"`
	// Resolution is the search's step; Schedules the runs it took.
	Resolution time.Duration `json:"resolution_ns"`
	Schedules  int           `json:"schedules"`
	Probes     []Probe       `json:"probes"`
	// Predicted is the design's boundary; Agrees whether At is in it
	// (within Resolution).
	Predicted Prediction `json:"predicted"`
	Agrees    bool       `json:"agrees"`
	// Below and Above are the confirmation batches on real Redis, just
	// below and at the boundary (nil: not confirmed); Confirmed says they
	// agree with the search.
	Below     *Probe `json:"confirm_below,omitempty"`
	Above     *Probe `json:"confirm_above,omitempty"`
	Confirmed *bool  `json:"confirmed,omitempty"`
	// Searched says where the search ran ("sim", or "process" where the
	// simulation cannot run the cell).
	Searched string `json:"searched"`
	Note     string `json:"note,omitempty"`
	// Shrunk is the smallest schedule found breaking the lock at At.
	Shrunk *Shrunk `json:"shrunk,omitempty"`
}

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
			m, err := searchOne(ctx, cfg, lock, f)
			if err != nil {
				return out, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// searchOne bisects one lock's boundary under one family: the cap first
// (a lock that holds there never breaks, as far as the search can say),
// then halves the bracket until it is Resolution wide. A magnitude that
// breaks the lock in any run of its batch counts as breaking it.
func searchOne(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family) (Margin, error) {
	base, err := f.scenario(time.Millisecond)
	if err != nil {
		return Margin{}, err
	}
	capTTL := cfg.Cap
	if lock.Lease > 0 {
		capTTL = max(capTTL, lock.Lease+2) // a longer lease is searched past its own length
	}
	s := &search{ctx: ctx, cfg: cfg, lock: lock, f: f, scale: float64(cfg.TTL) / float64(base.TTL),
		unit: base.TTL, m: Margin{Lock: lock.Name, Family: f.Name, TTL: cfg.TTL, Cap: time.Duration(capTTL * float64(cfg.TTL)),
			Resolution: time.Duration(cfg.Resolution * float64(cfg.TTL)), Searched: cfg.Backend.Name()}}
	stretched, err := f.scenario(s.unit)
	if err != nil {
		return s.m, err
	}
	stretched.TTL = cfg.TTL
	stretched.WorkMax = time.Duration(float64(base.WorkMax) * s.scale)
	s.m.Predicted = Predict(lock, f, stretched)
	lo, hi, top, err := s.scan(capTTL)
	if err != nil || hi == 0 {
		return s.m, err
	}
	lo, hi, broke, err := s.bisect(lo, hi, top)
	if err != nil {
		return s.m, err
	}
	m := &s.m
	if m.Shrunk, err = shrink(ctx, cfg, lock, f, hi, s.scale, broke.Seed); err != nil {
		return *m, err
	}
	m.Broke = true
	m.At, m.Held = stretch(hi, s.scale), stretch(lo, s.scale)
	m.Agrees = m.Predicted.agrees(true, m.At, m.Resolution)
	if cfg.Confirm != nil {
		below, err := s.probe(lo, true, cfg.ConfirmSeeds)
		if err != nil {
			return *m, err
		}
		above, err := s.probe(hi+s.step(), true, cfg.ConfirmSeeds)
		if err != nil {
			return *m, err
		}
		ok := below.Broke == 0 && above.Broke > 0
		m.Below, m.Above, m.Confirmed = &below, &above, &ok
	}
	return *m, nil
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

// scan goes upward first, on a coarse ladder: a magnitude far past the
// cell (a reply held back longer than the cell runs) breaks nothing, so
// the cap alone cannot say "never". The first rung that breaks the lock
// and the one below it bracket the boundary; hi 0: none broke it (the
// margin says why).
func (s *search) scan(capTTL float64) (lo, hi time.Duration, top Probe, err error) {
	for _, r := range ladder(capTTL) {
		at := time.Duration(r * float64(s.unit))
		p, err := s.probe(at, false, s.cfg.Seeds)
		if err != nil {
			return 0, 0, p, err
		}
		if p.Skipped == p.Runs {
			// The backend cannot run the family (the simulation has no
			// replication): say so, and where to search it.
			s.m.Searched, s.m.Schedules, s.m.Probes = "-", 0, nil
			s.m.Note = fmt.Sprintf("not searched on %s: %s; search it on real Redis with --backend process", s.cfg.Backend.Name(), p.Skip)
			s.m.Agrees = true
			return 0, 0, p, nil
		}
		if p.Broke > 0 {
			return lo, at, p, nil
		}
		lo = at
	}
	s.m.Note = fmt.Sprintf("no violation up to %.0fx TTL in %d schedules", capTTL, s.m.Schedules)
	s.m.Agrees = s.m.Predicted.agrees(false, 0, s.m.Resolution)
	return lo, 0, Probe{}, nil
}

// bisect halves the bracket until it is the resolution wide; broke is the
// last probe that broke the lock (at hi).
func (s *search) bisect(lo, hi time.Duration, broke Probe) (time.Duration, time.Duration, Probe, error) {
	for hi-lo > s.step() {
		mid := ((lo + hi) / 2).Round(time.Millisecond / 10)
		p, err := s.probe(mid, false, s.cfg.Seeds)
		if err != nil {
			return lo, hi, broke, err
		}
		if p.Broke > 0 {
			hi, broke = mid, p
		} else {
			lo = mid
		}
	}
	return lo, hi, broke, nil
}

// ladder is the coarse scan's rungs, in TTLs, up to capTTL.
func ladder(capTTL float64) []float64 {
	var out []float64
	for _, r := range []float64{0.5, 0.8, 1, 1.25, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 100} {
		if r < capTTL {
			out = append(out, r)
		}
	}
	return append(out, capTTL)
}

func stretch(d time.Duration, scale float64) time.Duration {
	return time.Duration(math.Round(float64(d) * scale))
}

// runProbe runs one magnitude (in the scenario's own time) on seeds
// seeds.
func runProbe(ctx context.Context, cfg Config, lock lockimpl.Spec, f Family, at time.Duration, scale float64,
	on backend.Backend, seeds int) (Probe, error) {
	sc, err := f.scenario(at)
	if err != nil {
		return Probe{}, err
	}
	unscaled := sc.TTL
	// The scenario at the TTL asked for, same shape (the run itself
	// stretches nothing in virtual time; on real Redis, its calibration
	// stretches further for a loaded machine, in TTLs the same).
	sc = sc.WithDefaults().Scaled(scale)
	cell := scenarios.Cell{Scenario: sc, Lock: lock, Expect: results.Expect{Safety: results.Either, Liveness: results.Either}}
	_, virtual := backend.Virtual(on)
	ran := scenarios.RunMatrix(ctx, []scenarios.Cell{cell}, scenarios.MatrixOptions{
		// A probe below the boundary never reaches its dangerous moment:
		// it ends at its planned length instead of running on for a floor
		// a search does not need.
		Options: scenarios.Options{Seed: cfg.Seed, Backend: on, TimeScale: cfg.ConfirmScale, MaxDuration: sc.Duration,
			OutDir: filepath.Join(cfg.OutDir, on.Name())},
		Parallel: cfg.Parallel, Repeat: seeds, DropMetHistories: virtual})
	p := Probe{Lock: lock.Name, Family: f.Name, Magnitude: stretch(at, scale), InTTL: float64(at) / float64(unscaled),
		Seed: -1, Backend: on.Name()}
	for _, r := range ran {
		p.Runs++
		switch {
		case r.Outcome == results.Skipped:
			p.Skipped++
			p.Skip = r.Error
		case r.Outcome == results.HarnessError:
			p.Errors++
		case r.SafetyVerdict == checker.Fail:
			p.Broke++
			if p.Seed < 0 || r.RunSeed < p.Seed {
				p.Seed = r.RunSeed
			}
		case r.Outcome == results.Inconclusive:
			p.Inconclusive++
		}
	}
	if p.Errors == p.Runs && p.Runs > 0 {
		return p, fmt.Errorf("margins: %s/%s at %v: every run was a harness error (%s)", f.Name, lock.Name, p.Magnitude,
			ran[0].Error)
	}
	return p, ctx.Err()
}
