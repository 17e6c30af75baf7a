package faults

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockchaos/lockchaos/history"
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

// podHit is the Hit of a window that acted on one pod.
func podHit(pod int) history.Hit { return history.Hit{Pods: []int{pod}} }

// jumpHit is the Hit of a window that moved a node's clock by jump.
func jumpHit(jump time.Duration) history.Hit { return history.Hit{Jump: jump} }

// direction is a partition's direction as its window's Hit says it.
func direction(d netfault.Direction) string {
	if d == "" {
		d = netfault.Both
	}
	return string(d)
}
