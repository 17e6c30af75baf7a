package scenarios

import "errors"

// FirstTooLarge plans every cell with opts as a run would and returns the
// first plan that is too large (ErrTooLarge): a cell cut into too many
// parts (PartLength) or able to open too many fault windows (its gaps
// over its length). Said before anything starts.
func FirstTooLarge(cells []Cell, opts Options) error {
	for _, cell := range cells {
		if p := NewPlan(cell, opts); errors.Is(p.Err, ErrTooLarge) {
			return p.Err
		}
	}
	return nil
}
