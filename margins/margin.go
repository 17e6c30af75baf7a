package margins

import (
	"time"
)

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
