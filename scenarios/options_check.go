package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/netfault"
)

// FieldError is one option out of its range. Field names the option as
// the CLI's flag spells it, without the dashes ("max-duration"), so the
// CLI names its flag by prefixing "--" and a Go caller reads the option:
// the ranges are checked in one place, here, for both.
type FieldError struct {
	Field string
	Value any
	Want  string
	// Err is the package's sentinel (ErrInvalid here, margins' own
	// there), for errors.Is.
	Err error
}

func (e *FieldError) Error() string {
	// An error from below (a file that would not open) already says
	// what it is: said once.
	if e.Err == nil || strings.Contains(e.Want, e.Err.Error()) {
		return e.Flagless()
	}
	return e.Err.Error() + ": " + e.Flagless()
}

// Flagless is the error without its package's prefix: the CLI puts
// "--" before it to name its flag.
func (e *FieldError) Flagless() string { return fmt.Sprintf("%s %v: %s", e.Field, e.Value, e.Want) }
func (e *FieldError) Unwrap() error    { return e.Err }

// invalid is a FieldError of this package.
func invalid(field string, value any, want string) error {
	return &FieldError{Field: field, Value: value, Want: want, Err: ErrInvalid}
}

// Validate reports options that cannot work, each range by its field
// (FieldError). A zero leaves an option to its default, so only a
// negative value or one past the bound is refused.
func (o Options) Validate() error {
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"duration", o.Duration}, {"max-duration", o.MaxDuration}, {"part-length", o.PartLength},
		{"recover-within", o.RecoverWithin}, {"budget", o.Budget}, {"cell-timeout", o.CellTimeout},
		{"node-timeout", o.NodeTimeout}} {
		if d.v < 0 {
			return invalid(d.field, d.v, "want a positive duration")
		}
		// Nothing lasts longer than the longest cell; added to a cell's
		// times, a longer one could overflow.
		if d.v > MaxCellDuration {
			return invalid(d.field, d.v, fmt.Sprintf("want at most %v", MaxCellDuration))
		}
	}
	switch ts := o.TimeScale; {
	case o.PartLength > 0 && o.PartLength < MinPartLength:
		return invalid("part-length", o.PartLength, fmt.Sprintf("want %v or more (each part starts its own pods and "+
			"history; a cell makes at most %d parts)", MinPartLength, MaxParts))
	// Written so that NaN and the infinities fail too.
	case ts != 0 && !(ts >= 0.1 && ts <= 100):
		return invalid("time-scale", ts, "want 0 (measure) or a factor in 0.1..100")
	case o.Clients < 0 || o.Clients > MaxClients:
		return invalid("clients", o.Clients, fmt.Sprintf("out of range 1..%d", MaxClients))
	case o.NodeTimeout > 0 && o.NodeTimeout < 50*time.Millisecond:
		return invalid("node-timeout", o.NodeTimeout, "want 50ms or more (a node would count its peers failing between two pings)")
	}
	if err := o.validateFloor(); err != nil {
		return err
	}
	if o.ToxiproxyAPI != "" {
		return (netfault.ProxiesConfig{APIAddr: o.ToxiproxyAPI}).Validate()
	}
	return nil
}

// validateFloor checks the evidence floor's overrides, each by its field.
func (o Options) validateFloor() error {
	f := o.Floor
	switch {
	case f.MinExercised != nil && *f.MinExercised < 0:
		return invalid("min-exercised", *f.MinExercised, "want 0 or more")
	case f.MinCycles != nil && *f.MinCycles < 0:
		return invalid("min-cycles", *f.MinCycles, "want 0 or more")
	case f.MaxIndefinite != nil && !(*f.MaxIndefinite >= 0 && *f.MaxIndefinite <= 1):
		return invalid("max-indefinite", *f.MaxIndefinite, "want a share in 0..1")
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
