package faults

import (
	"errors"
	"fmt"

	"github.com/lockchaos/lockchaos/netfault"
)

// Helpers of the fault kinds that act on links.
func linkNames(ls []*netfault.Link) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name()
	}
	return out
}

// podTarget names a pod in a fault window's targets.
func podTarget(pod int) string { return fmt.Sprintf("client%d", pod) }

// eachLink applies a fault to every link, stopping at the first error
// (the caller's deferred healLinks undoes what was applied).
func eachLink(ls []*netfault.Link, apply func(*netfault.Link) error) error {
	for _, l := range ls {
		if err := apply(l); err != nil {
			return err
		}
	}
	return nil
}

// healLinks heals every link and joins any failure into *err: a link that
// stays faulty must fail the cell loudly, not linger unseen.
func healLinks(ls []*netfault.Link, err *error) {
	var errs []error
	for _, l := range ls {
		if e := l.Heal(); e != nil {
			errs = append(errs, fmt.Errorf("heal %s: %w", l.Name(), e))
		}
	}
	*err = errors.Join(*err, errors.Join(errs...))
}

// directionTarget names a partition's direction among a window's targets.
func directionTarget(d netfault.Direction) string {
	if d == "" {
		d = netfault.Both
	}
	return "direction=" + string(d)
}
