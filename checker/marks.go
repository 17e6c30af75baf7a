package checker

// mark is a violation as the incidents count it: every violation leaves
// one, those kept as examples (Options.MaxViolations) and those past them
// alike, so an incident's count is the true count while the examples stay
// bounded. A mark is a few words; n holds of one key at once leave one
// mark per hold, standing for its pairs.
type mark struct {
	at, start, end int64
	n              int // the violations it stands for
	key            string
	property       Property
	// named are the op ids a liveness violation names (its stopping
	// window's among them); summary is the sentence of the example it
	// stands for, "" past the examples.
	named   []int64
	summary string
	id      int64 // mutual-exclusion: the acquire of the later hold
}

// markOf is v's mark.
func markOf(v Violation) mark {
	m := mark{at: v.At, start: v.Start, end: v.End, n: 1, key: v.Key, property: v.Property, summary: v.Summary}
	if v.Property.Group() == GroupLiveness {
		m.named = v.Events
	}
	return m
}

// found counts a violation of r: its mark always, and the violation
// itself, which build makes (a sentence costs), while fewer than keep are
// kept.
func (r *Result) found(m mark, keep int, build func() Violation) {
	r.ViolationCount += m.n
	if len(r.Violations) < keep {
		v := build()
		r.Violations = append(r.Violations, v)
		m.summary = v.Summary
	}
	r.marks = append(r.marks, m)
}

// cut reports whether some result counted more violations than it kept:
// its incidents must be made of the marks, not of the examples.
func cut(results []Result) bool {
	for _, r := range results {
		if r.ViolationCount > len(r.Violations) {
			return true
		}
	}
	return false
}

// violation is the mark in the shape the incidents group.
func (m mark) violation() Violation {
	return Violation{Property: m.property, Key: m.key, Events: m.named, At: m.at, Start: m.start, End: m.end, Summary: m.summary}
}
