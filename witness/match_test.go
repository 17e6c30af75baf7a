package witness

import "testing"

// A server key belongs to the workload key it contains as a whole name,
// whatever a library puts around it; the longest such key wins.
func TestMatcherFindsTheWorkloadKeyInALibrarysNames(t *testing.T) {
	m := NewMatcher([]string{"order:1", "order:10", "lockchaos:7:order:2"})
	for _, c := range []struct {
		server, want string
		ok           bool
	}{
		{"order:1", "order:1", true},
		{"order:10", "order:10", true},             // not order:1: the name goes on
		{"rueidislock:0:order:1", "order:1", true}, // a library's prefix and numbering
		{"{order:1}", "order:1", true},             // a hash tag
		{"lock:{order:10}:x", "order:10", true},
		{"order:1:fence", "order:1", true}, // a counter beside the lock: the witness drops it by what writes it
		{"order:100", "", false},
		{"border:1", "", false},
		{"order:1x", "", false},
		{"lockchaos:7:order:2", "lockchaos:7:order:2", true}, // someone else's Redis: the prefixed key
		{"lockchaos:8:order:2", "", false},
	} {
		got, ok := m.Match(c.server)
		if got != c.want || ok != c.ok {
			t.Errorf("Match(%q) = %q, %v; want %q, %v", c.server, got, ok, c.want, c.ok)
		}
	}
}

func TestGlobEscapeQuotesPatternCharacters(t *testing.T) {
	if got := globEscape(`a*b?[c]\d`); got != `a\*b\?\[c\]\\d` {
		t.Errorf("globEscape = %q", got)
	}
}
