package drivers_test

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/results"
)

// TestLineOverTheLimitIsSaid: a driver that writes a line over the
// protocol's limit (1 MiB), as its hello or as an answer, and lives on, is
// reported as that and killed (run checks that no process is left), not
// as "exited (its stdout closed)" while it still ran.
func TestLineOverTheLimitIsSaid(t *testing.T) {
	const long = `head -c 2000000 /dev/zero | tr '\0' x; echo; sleep 30`
	for _, c := range []struct{ name, command, says string }{
		{"hello", long, "sent a line over 1048576 bytes (the protocol's limit for one line) as its first line; it was killed"},
		{"answer", `printf '{"hello":"lockchaos-driver","version":1}\n'; read line; ` + long,
			"sent a line over 1048576 bytes (the protocol's limit for one line); it was killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, drivers.Driver{Name: "long-" + c.name, Command: c.command}, "baseline", results.Safe)
			if res.Outcome != results.HarnessError || !strings.Contains(res.Error, c.says) || strings.Contains(res.Error, "exited") {
				t.Fatalf("outcome %s, error %q; want a harness error saying %q, not that it exited", res.Outcome, res.Error, c.says)
			}
		})
	}
}
