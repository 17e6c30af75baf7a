package reports

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/checker"
)

func TestOutcomeColourOnlyWhenAskedFor(t *testing.T) {
	// The colours themselves: reports' TestOutcomeColours.
	// A buffer is no terminal; on a terminal, NO_COLOR or TERM=dumb turn
	// colour off.
	if UseColour(&strings.Builder{}) {
		t.Fatal("colour for a buffer")
	}
	for _, c := range []struct {
		terminal bool
		getenv   func(string) string
		want     bool
	}{
		{true, envOf("", ""), true},
		{true, envOf("NO_COLOR", "1"), false},
		{true, envOf("TERM", "dumb"), false},
		{false, envOf("", ""), false},
	} {
		if got := colourFor(c.terminal, c.getenv); got != c.want {
			t.Errorf("terminal %v, NO_COLOR %q, TERM %q: colour %v, want %v", c.terminal, c.getenv("NO_COLOR"), c.getenv("TERM"), got, c.want)
		}
	}
}

// envOf is a getenv over these key, value pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestCheckInconclusiveIsNotPass(t *testing.T) {
	if VerdictExitCode(checker.Unknown) != ExitInconclusive || VerdictExitCode(checker.Pass) != ExitOK || VerdictExitCode(checker.Fail) != ExitViolation {
		t.Fatal("verdict to exit code mapping is off")
	}
}
