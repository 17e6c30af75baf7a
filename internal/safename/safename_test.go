package safename_test

import (
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/internal/safename"
)

func TestValid(t *testing.T) {
	for _, ok := range []string{"baseline", "token-watchdog", "redis-py", "a.b_c-d", "X1", strings.Repeat("a", 64)} {
		if !safename.Valid(ok) {
			t.Errorf("%q rejected", ok)
		}
	}
	for _, bad := range []string{"", ".", "..", "../../../ESCAPED", "a/b", `a\b`, "a..b", ".hidden", "-flag", "has space",
		"a,b", "a=b", "x;touch${IFS}PWNED;#", "é", "a\x00b", strings.Repeat("a", 65)} {
		if safename.Valid(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		root, path string
		want       bool
	}{
		{"out", "out/baseline/token/history.jsonl", true},
		{"out", "out", true},
		{"/tmp/o", "/tmp/o/a/../b", true},
		{"out", "out/../x", false},
		{"out", "out/../../../ESCAPED/token/history.jsonl", false},
		{"out", "out/../out2/h.jsonl", false},
		{"/tmp/o", "/tmp/other", false},
		{"out", "/etc/passwd", false},
	} {
		if got := safename.Within(c.root, c.path); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.root, c.path, got, c.want)
		}
	}
}
