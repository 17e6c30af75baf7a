package clockshim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/internal/probe"
	"github.com/lockchaos/lockchaos/internal/probe/probetest"
)

// TestCompilerThatHangsIsKilled: a CC that never finishes is killed at
// buildTimeout with every process it started, and the clock faults are
// unavailable with the reason (ErrNoClockShim, so the cells are skipped
// with it). Before: the run waited on it forever.
func TestCompilerThatHangsIsKilled(t *testing.T) {
	f := probetest.Hanging(t, "cc", "")
	defer func(d time.Duration) { buildTimeout = d }(buildTimeout)
	var err error
	probetest.Retry(f, 300*time.Millisecond, func(limit time.Duration) {
		buildTimeout = limit
		_, err = build(f.Path, "CC="+f.Path)
	})
	if !errors.Is(err, backend.ErrNoClockShim) || !errors.Is(err, probe.ErrTimeout) ||
		!strings.Contains(err.Error(), "CC="+f.Path+" did not answer") {
		t.Fatalf("error %v; want ErrNoClockShim and probe.ErrTimeout, naming CC=%s", err, f.Path)
	}
	f.ChildGone(t)
}
