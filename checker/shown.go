package checker

import "strings"

// Shown is the result's status as every output shows it: a pass that
// judged nothing is not a pass. A liveness property that judged no moment,
// or one whose note says it was not judged (no witness watched the
// server), shows "not judged"; one whose note says it does not apply to
// the lock (fence-order where the resource checks no fences) "n/a".
func (r Result) Shown() string {
	switch {
	case r.Status != Pass:
		return string(r.Status)
	case strings.HasPrefix(r.Note, "not applicable"):
		return "n/a"
	case strings.HasPrefix(r.Note, "not judged"),
		r.Property.Group() == GroupLiveness && r.Judged == 0:
		return "not judged"
	}
	return string(r.Status)
}
