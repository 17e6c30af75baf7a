package scenarios

import (
	"fmt"
	"path/filepath"

	"github.com/lockchaos/lockchaos/internal/safename"
)

// historyPath is OUT/SCENARIO/LOCK/NAME, built only from names safe as
// path elements (outside then checks every path the plan holds stays under
// OUT): a second line of defence behind Scenario.Validate and
// Spec.Validate, for cells planned without them (a user's own scenario or
// lock in go test).
func historyPath(out, scenario, lock, name string) (string, error) {
	if name == "" {
		name = "history.jsonl"
	}
	for _, e := range []struct{ what, name string }{{"scenario", scenario}, {"lock", lock}, {"history file", name}} {
		if !safename.Valid(e.name) {
			return "", fmt.Errorf("%w: %s name %q cannot be a path element under the output folder %s: use %s",
				ErrUnsafePath, e.what, e.name, out, safename.Rule)
		}
	}
	return filepath.Join(out, scenario, lock, name), nil
}

// outside reports the first file of the plan (its history, its parts')
// that is not under out.
func outside(out string, p *Plan) error {
	paths := []string{p.History}
	for _, part := range p.Parts {
		paths = append(paths, part.History)
	}
	for _, path := range paths {
		if !safename.Within(out, path) {
			return fmt.Errorf("%w: %s is outside the output folder %s", ErrUnsafePath, path, out)
		}
	}
	return nil
}
