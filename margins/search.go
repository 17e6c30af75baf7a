package margins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
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

// Decisive is how many runs gave a safety verdict: neither inconclusive,
// nor a harness error, nor skipped. A probe that broke nothing holds
// only on these.
func (p Probe) Decisive() int { return p.Runs - p.Inconclusive - p.Errors - p.Skipped }

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
	// BreaksBelow says the lock breaks at magnitudes up to At and held
	// from Held up (a restart sooner than a lease lapses), not from At up.
	BreaksBelow bool `json:"breaks_below,omitempty"`
	// NotApplicable says no backend can run the family for this lock
	// (Note says why).
	NotApplicable bool `json:"not_applicable,omitempty"`
	// Searched says where the search ran ("sim", or "process" where the
	// simulation cannot run the cell).
	Searched string `json:"searched"`
	Note     string `json:"note,omitempty"`
	// Shrunk is the smallest schedule found breaking the lock at At.
	Shrunk *Shrunk `json:"shrunk,omitempty"`
	// SearchTime and ConfirmTime are the wall time the search (with its
	// shrinking) and the confirmation took.
	SearchTime  time.Duration `json:"search_ns"`
	ConfirmTime time.Duration `json:"confirm_ns,omitempty"`
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

// first is the family's first rung, in TTLs: 0 for a family that breaks
// below its boundary (the mildest fault first), else From (default 0.5).
func (f Family) first() float64 {
	switch {
	case f.Below:
		return 0
	case f.From == 0:
		return 0.5
	}
	return f.From
}

// ladder is the coarse scan's rungs, in TTLs, from from up to capTTL.
func ladder(from, capTTL float64) []float64 {
	var out []float64
	for _, r := range []float64{0, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 1.25, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 100} {
		if r >= from && r < capTTL {
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
	ran := runSeeds(ctx, cell, scenarios.MatrixOptions{
		// A probe below the boundary never reaches its dangerous moment:
		// it ends at its planned length instead of running on for a floor
		// a search does not need.
		Options: wholeCell(scenarios.Options{Seed: cfg.Seed, Backend: on, TimeScale: cfg.TimeScale, NodeOpTime: cfg.NodeOpTime,
			MaxDuration: sc.Duration, OutDir: filepath.Join(cfg.OutDir, on.Name())}, sc.Duration),
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

// wholeCell lets a probe's cell of duration d run as one part to its end
// at any TTL the search takes: a simulated cell longer than
// scenarios.DefaultPartLength otherwise runs in parts, each timed out as
// the first (fenced's slow-reply probe at a 10 s TTL: "cell timed out
// after 3m0s"), and a cell's minute of slack past its end is few TTLs at
// a long TTL.
func wholeCell(o scenarios.Options, d time.Duration) scenarios.Options {
	o.PartLength = max(d, scenarios.DefaultPartLength)
	o.CellTimeout = 2*d + time.Minute
	return o
}
