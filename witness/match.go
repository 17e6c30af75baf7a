package witness

import (
	"sort"
	"strings"
)

// Matcher maps a key as the server names it to the workload key it
// belongs to. A lock may name its keys differently from the workload's
// key: a prefix ("rueidislock:0:order:1"), a hash tag ("{order:1}"), a
// suffix for a counter ("order:1:fence"). The rule is the cell's
// namespace, not a guess per library: a server key belongs to the
// workload key it contains as a whole name, bounded on each side by the
// key's start or end or by a character that cannot continue a name
// (so "order:10" does not belong to "order:1"); the longest such key
// wins.
type Matcher struct{ keys []string }

// NewMatcher returns the matcher of the cell's workload keys.
func NewMatcher(keys []string) Matcher {
	ks := append([]string(nil), keys...)
	sort.Slice(ks, func(i, j int) bool { return len(ks[i]) > len(ks[j]) })
	return Matcher{keys: ks}
}

// Match returns the workload key serverKey belongs to.
func (m Matcher) Match(serverKey string) (string, bool) {
	for _, k := range m.keys {
		for from := 0; ; {
			i := strings.Index(serverKey[from:], k)
			if i < 0 {
				break
			}
			i += from
			end := i + len(k)
			if (i == 0 || boundary(serverKey[i-1])) && (end == len(serverKey) || boundary(serverKey[end])) {
				return k, true
			}
			from = i + 1
		}
	}
	return "", false
}

// boundary is a byte that cannot continue a key name's last word: not a
// letter or digit (":", "{", "}", "/", "." and the like separate words).
func boundary(c byte) bool {
	return (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-'
}
