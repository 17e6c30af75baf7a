package process

import "time"

// SetVersionTimeout shortens the --version limit for a test; the func it
// returns restores it.
func SetVersionTimeout(d time.Duration) func() {
	was := versionTimeout
	versionTimeout = d
	return func() { versionTimeout = was }
}
