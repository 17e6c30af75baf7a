package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/internal/suggest"
)

// Expectation is what a cell must show of one property group: safety
// (safe, unsafe, either, n/a) or liveness (live, stuck, either).
type Expectation string

// Safety expectations.
const (
	// Safe cells must pass every run: a failure is a regression.
	Safe Expectation = "safe"
	// Unsafe cells must be detected: a pass means the harness missed a
	// known bug.
	Unsafe Expectation = "unsafe"
	// Either is reported, not gated (safety or liveness).
	Either Expectation = "either"
	// NotApplicable cells are listed but not run.
	NotApplicable Expectation = "n/a"
)

// Liveness expectations.
const (
	// Live cells must keep working: a stopped holder's lock is freed
	// within the recovery bound, pods acquire while a majority of the
	// lock's nodes is up. A liveness failure is a regression.
	Live Expectation = "live"
	// Stuck cells must be caught deadlocking: a liveness pass means the
	// harness missed a lock known to stay stuck.
	Stuck Expectation = "stuck"
)

// Expectations lists the valid safety expectations, which the one-word
// form speaks of, for messages.
var Expectations = []Expectation{Safe, Unsafe, Either, NotApplicable}

// LivenessExpectations lists the valid liveness expectations.
var LivenessExpectations = []Expectation{Live, Stuck, Either}

// SafetyProperties are the properties an Expect's MayFail may name.
var SafetyProperties = []checker.Property{checker.MutualExclusion, checker.ResourceLinearizable, checker.ForeignRelease,
	checker.FenceOrder}

// ErrExpectation wraps every error Expect.Validate returns.
var ErrExpectation = errors.New("invalid expectation")

// Valid reports whether e is one of Expectations (a safety expectation).
func (e Expectation) Valid() bool { return slices.Contains(Expectations, e) }

// ValidLiveness reports whether e is one of LivenessExpectations.
func (e Expectation) ValidLiveness() bool { return slices.Contains(LivenessExpectations, e) }

// Expected is e as a whole expectation: one word speaks of safety, and
// the cell is expected live.
func (e Expectation) Expected() Expect { return Expect{Safety: e, Liveness: Live} }

// Expecter is what says what a cell must show: an Expectation (safety,
// liveness live) or an Expect.
type Expecter interface{ Expected() Expect }

// Expect is what a cell must show, per property group.
type Expect struct {
	// Safety: safe, unsafe, either or n/a (the cell does not run).
	Safety Expectation `json:"safety"`
	// Liveness: live (the default, also for ""), stuck or either.
	Liveness Expectation `json:"liveness,omitempty"`
	// MayFail, when set, are the only properties allowed to fail (safety
	// ones): any other decisive failure is a regression. It implies
	// Safety unsafe. Mutual exclusion brings resource-linearizable with
	// it: two holders at once lose updates to the resource they share.
	MayFail []checker.Property `json:"unsafe,omitempty"`
	// Why is the reason for the expectation, decided from the lock's
	// design before running ("the transaction fences the write"): shown
	// beside the cell, so a disagreement reads against its reason.
	Why string `json:"why,omitempty"`
}

// Expected is e with its defaults: liveness live, safety unsafe when
// MayFail names properties.
func (e Expect) Expected() Expect {
	if e.Liveness == "" {
		e.Liveness = Live
	}
	if e.Safety == "" && len(e.MayFail) > 0 {
		e.Safety = Unsafe
	}
	return e
}

// Simple reports whether e is the one-word form: its safety, live, no
// properties singled out.
func (e Expect) Simple() bool {
	e = e.Expected()
	return e.Liveness == Live && len(e.MayFail) == 0
}

// String is the one-word form when e has it ("unsafe"), else every group:
// "safety safe, liveness stuck", "safety unsafe [mutual-exclusion],
// liveness live".
func (e Expect) String() string {
	e = e.Expected()
	if e.Simple() {
		return string(e.Safety)
	}
	return "safety " + e.SafetyText() + ", liveness " + string(e.Liveness)
}

// SafetyText is the safety expectation with the properties allowed to
// fail: "unsafe", "unsafe [mutual-exclusion, foreign-release]".
func (e Expect) SafetyText() string {
	e = e.Expected()
	if len(e.MayFail) == 0 {
		return string(e.Safety)
	}
	return string(e.Safety) + " [" + propertyList(e.MayFail) + "]"
}

// Validate reports an expectation that cannot be held to, with the words
// and properties that can.
func (e Expect) Validate() error {
	e = e.Expected()
	if err := validSafety(e.Safety); err != nil {
		return err
	}
	if !e.Liveness.ValidLiveness() {
		return fmt.Errorf("%w: liveness %s", ErrExpectation, wrongWord(e.Liveness, LivenessExpectations,
			"safe and unsafe speak of safety (safety: %s)"))
	}
	if len(e.MayFail) > 0 && e.Safety != Unsafe {
		return fmt.Errorf("%w: unsafe: [%s] lists the properties allowed to fail, which means safety unsafe, not %s",
			ErrExpectation, propertyList(e.MayFail), e.Safety)
	}
	for _, p := range e.MayFail {
		if err := validMayFail(p); err != nil {
			return err
		}
	}
	if e.Safety == NotApplicable && e.Liveness != Live {
		return fmt.Errorf("%w: an n/a cell does not run: liveness %s means nothing there", ErrExpectation, e.Liveness)
	}
	return nil
}

func validSafety(s Expectation) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: no safety expectation: say safety: %s (or unsafe: [properties allowed to fail])",
			ErrExpectation, words(Expectations, " or "))
	case s.ValidLiveness() && !s.Valid():
		return fmt.Errorf("%w: %q is a liveness expectation, and one word speaks of safety: "+
			"liveness expectations go in {liveness: %s} (with safety: %s)", ErrExpectation, s, s, words(Expectations, " or "))
	case !s.Valid():
		return fmt.Errorf("%w: safety %s", ErrExpectation, wrongWord(s, Expectations, ""))
	}
	return nil
}

func validMayFail(p checker.Property) error {
	if slices.Contains(SafetyProperties, p) {
		return nil
	}
	if p.Group() == checker.GroupLiveness {
		return fmt.Errorf("%w: unsafe: %s is a liveness property: say liveness: stuck instead", ErrExpectation, p)
	}
	names := make([]string, len(SafetyProperties))
	for i, q := range SafetyProperties {
		names[i] = string(q)
	}
	hint := ""
	if s := suggest.Closest(string(p), names); s != "" {
		hint = " (did you mean " + s + "?)"
	}
	return fmt.Errorf("%w: unsafe: %q is not a safety property%s; valid: %s", ErrExpectation, p, hint, strings.Join(names, ", "))
}

// wrongWord explains a word that is not among valid: a did-you-mean, or
// other (with the valid words) when the word belongs to the other group.
func wrongWord(w Expectation, valid []Expectation, other string) string {
	if other != "" && (w.Valid() || w.ValidLiveness()) {
		return fmt.Sprintf("%q: "+other+"; valid: %s", w, w, words(valid, ", "))
	}
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	hint := ""
	if s := suggest.Closest(string(w), names); s != "" {
		hint = " (did you mean " + s + "?)"
	}
	return fmt.Sprintf("%q is not one of %s%s", w, words(valid, ", "), hint)
}

func words(es []Expectation, sep string) string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	if sep == " or " && len(out) > 1 {
		return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
	}
	return strings.Join(out, sep)
}

func propertyList(ps []checker.Property) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}
