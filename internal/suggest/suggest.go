// Package suggest finds the name a user most likely meant, for the
// "did you mean" of an unknown flag, field or scenario.
package suggest

import "strings"

// Closest is the valid name nearest to s by edit distance (case aside),
// or "" when none is near enough to be a likely typo.
func Closest(s string, valid []string) string {
	best, bestDist := "", 3
	if len(s) <= 3 {
		bestDist = 2
	}
	for _, v := range valid {
		if d := Distance(strings.ToLower(s), strings.ToLower(v)); d < bestDist {
			best, bestDist = v, d
		}
	}
	return best
}

// Distance is Levenshtein's distance between a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
