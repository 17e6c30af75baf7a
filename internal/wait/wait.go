// Package wait holds the one way the harness sleeps on a context: faults
// between their steps, deployments while they poll, cells between parts.
package wait

import (
	"context"
	"time"
)

// Sleep sleeps d, or until ctx ends; false if ctx ended first. A d of zero
// or less returns at once, true unless ctx has already ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
