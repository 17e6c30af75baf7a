package drivers

import "time"

// SetHelloTimeout shortens the hello timeout for a test; the func it
// returns restores it.
func SetHelloTimeout(d time.Duration) func() {
	was := helloTimeout
	helloTimeout = d
	return func() { helloTimeout = was }
}

// TagOf is the tag part naming the harness pid.
func TagOf(pid int) string { return tagOf(pid) }

// SweepOrphans runs the sweep of a new harness.
func SweepOrphans() { sweepOrphans() }
